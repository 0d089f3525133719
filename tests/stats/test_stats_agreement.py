"""Agreement statistics of a judge with people: weighted kappa by hand and against statsmodels'
``cohens_kappa``, Krippendorff's alpha by hand and against the ``krippendorff`` package, the confusion table,
Kendall's tau of the variants' ranking against scipy, and the seeded query bootstrap."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats as scipy_stats
from statsmodels.stats.inter_rater import cohens_kappa
from support.environment import require_module

from abcompare.stats.agreement import (
    agreement,
    confusion_table,
    krippendorff_alpha,
    ranking_agreement,
    ranking_tau,
    weighted_kappa,
)

HUMAN = [0, 1, 2, 3, 3]
JUDGE = [0, 1, 1, 3, 2]


def test_the_confusion_table_counts_pairs_by_both_grades_on_the_whole_scale() -> None:
    table = confusion_table(HUMAN, JUDGE)
    assert table.shape == (4, 4) and table.to_numpy().sum() == 5
    assert table.loc[2, 1] == 1 and table.loc[3, 2] == 1 and table.loc[3, 3] == 1 and table.loc[1, 2] == 0


def test_linear_weighted_kappa_by_hand() -> None:
    # observed weighted disagreement (1 + 1) / 5 = 0.4; chance: marginals .2/.2/.2/.4 and .2/.4/.2/.2 give
    # sum p_i q_j |i - j| = .28 + .16 + .20 + .64 = 1.28; kappa = 1 - 0.4 / 1.28
    assert weighted_kappa(HUMAN, JUDGE, "linear") == pytest.approx(1 - 0.4 / 1.28)


@pytest.mark.parametrize("weights", ["linear", "quadratic", "none"])
def test_weighted_kappa_matches_statsmodels(weights: str) -> None:
    rng = np.random.default_rng(7)
    human = rng.integers(0, 4, 200)
    judge = np.clip(human + rng.integers(-1, 2, 200), 0, 3)
    table = pd.crosstab(human, judge).reindex(index=range(4), columns=range(4), fill_value=0).to_numpy()
    expected = cohens_kappa(table, wt=None if weights == "none" else weights).kappa
    assert weighted_kappa(human, judge, weights) == pytest.approx(expected, abs=1e-12)


def test_interval_alpha_by_hand() -> None:
    # pooled values 0,1,2,3,3,0,1,1,3,2 (n = 10): D_o = 2 * (1 + 1) / 10 = 0.4; D_e = 2 n^2 var / (n (n-1))
    # with var = 38/10 - 1.6^2 = 1.24, so 248 / 90; alpha = 1 - 0.4 / (248 / 90)
    assert krippendorff_alpha(HUMAN, JUDGE, "interval") == pytest.approx(1 - 0.4 / (248 / 90))


@pytest.mark.parametrize("level", ["ordinal", "interval"])
def test_alpha_matches_the_krippendorff_package(level: str) -> None:
    krippendorff = require_module("krippendorff")
    rng = np.random.default_rng(11)
    human = rng.integers(0, 4, 150)
    judge = np.clip(human + rng.integers(-2, 2, 150), 0, 3)
    expected = krippendorff.alpha(
        reliability_data=np.vstack([human, judge]).astype(float), level_of_measurement=level,
        value_domain=[0, 1, 2, 3],
    )  # fmt: skip
    assert krippendorff_alpha(human, judge, level) == pytest.approx(expected, abs=1e-10)


def test_one_grade_only_leaves_kappa_and_alpha_undefined_not_perfect() -> None:
    assert np.isnan(weighted_kappa([2, 2, 2], [2, 2, 2]))
    assert np.isnan(krippendorff_alpha([2, 2, 2], [2, 2, 2]))


def test_grades_off_the_scale_are_refused() -> None:
    with pytest.raises(ValueError, match="off the scale"):
        weighted_kappa([0, 4], [0, 1])


def test_ranking_tau_matches_scipy_on_the_variants_means() -> None:
    human = pd.DataFrame({"a": [0.1, 0.5, 0.3], "b": [0.4, 0.6, 0.5], "c": [0.2, 0.2, 0.9]})
    judge = pd.DataFrame({"a": [0.3, 0.5, 0.3], "b": [0.2, 0.3, 0.4], "c": [0.9, 0.8, 0.9]})
    expected = scipy_stats.kendalltau([0.3, 0.5, 0.4333], [0.3667, 0.3, 0.8667]).statistic
    assert ranking_tau(human, judge) == pytest.approx(expected)


def test_the_bootstrap_is_seeded_resamples_queries_and_brackets_the_estimate() -> None:
    rng = np.random.default_rng(3)
    human = rng.integers(0, 4, 120)
    judge = np.clip(human + rng.integers(-1, 2, 120), 0, 3)
    queries = np.repeat([f"q{i}" for i in range(30)], 4)
    first = agreement(human, judge, queries, n_resamples=300, seed=5)
    again = agreement(human, judge, queries, n_resamples=300, seed=5)
    other = agreement(human, judge, queries, n_resamples=300, seed=6)
    assert (first.kappa, first.alpha_ordinal, first.alpha_interval) == (
        again.kappa, again.alpha_ordinal, again.alpha_interval,
    )  # fmt: skip
    assert other.kappa.low != first.kappa.low
    assert (first.n_pairs, first.n_queries) == (120, 30)
    for estimate in (first.kappa, first.alpha_ordinal, first.alpha_interval):
        assert estimate.low <= estimate.value <= estimate.high
    assert first.kappa.value == pytest.approx(weighted_kappa(human, judge))


def test_ranking_agreement_needs_the_same_variants_and_queries() -> None:
    human = pd.DataFrame({"a": [0.1, 0.5], "b": [0.4, 0.6]})
    with pytest.raises(ValueError, match="same variants"):
        ranking_agreement(human, human[["b", "a"]])
    tau = ranking_agreement(human, human, n_resamples=50)
    assert tau.value == pytest.approx(1.0)
