"""Paired significance tests of each treatment against the control, and the comparison table built on them."""

from __future__ import annotations

from abcompare.stats.bootstrap import BootstrapResult, paired_bootstrap
from abcompare.stats.comparison import TreatmentComparison, compare_treatment, paired_comparison
from abcompare.stats.correction import adjust_pvalues, benjamini_hochberg, holm, per_test_alpha
from abcompare.stats.maxt import MaxTResult, max_t_sign_flip
from abcompare.stats.meta_analysis import MetaAnalysis, random_effects
from abcompare.stats.noninferiority import NonInferiorityResult, non_inferiority_test
from abcompare.stats.paired import PairedDifferences, compared_columns, paired_differences
from abcompare.stats.permutation import PermutationResult, sign_flip_test
from abcompare.stats.pooled import (
    StratifiedBootstrap,
    pooled_comparison,
    stratified_bootstrap,
    stratified_non_inferiority,
    stratified_sign_flip_test,
)
from abcompare.stats.power import minimum_detectable_effect
from abcompare.stats.ttest import TTestResult, paired_ttest
from abcompare.stats.tuning import TunedComparison, TunedSelection, tuned_comparison, tuned_selection_test
from abcompare.stats.verdict import verdicts
from abcompare.stats.wilcoxon import WilcoxonResult, wilcoxon_test

__all__ = [
    "BootstrapResult",
    "MaxTResult",
    "MetaAnalysis",
    "NonInferiorityResult",
    "PairedDifferences",
    "PermutationResult",
    "StratifiedBootstrap",
    "TTestResult",
    "TreatmentComparison",
    "TunedComparison",
    "TunedSelection",
    "WilcoxonResult",
    "adjust_pvalues",
    "benjamini_hochberg",
    "compare_treatment",
    "holm",
    "max_t_sign_flip",
    "compared_columns",
    "minimum_detectable_effect",
    "non_inferiority_test",
    "paired_bootstrap",
    "paired_comparison",
    "paired_differences",
    "paired_ttest",
    "per_test_alpha",
    "pooled_comparison",
    "random_effects",
    "sign_flip_test",
    "stratified_bootstrap",
    "stratified_non_inferiority",
    "stratified_sign_flip_test",
    "tuned_comparison",
    "tuned_selection_test",
    "verdicts",
    "wilcoxon_test",
]
