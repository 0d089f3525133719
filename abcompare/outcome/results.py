"""What a comparison produced, as the runner hands it to the console, ``--json``, MLflow and notebooks.

These are the types at the runner's last stage boundary; the stages' own types (the alignment report, the
judged coverage, a sweep's tuned comparison) are named here for type checkers only, so this module ties no
stage to another at run time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pandas as pd

if TYPE_CHECKING:
    from abcompare.config import ExperimentConfig
    from abcompare.data.alignment import AlignmentReport
    from abcompare.evaluation.judgments import JudgedCoverage
    from abcompare.stats.tuning import TunedComparison


@dataclass
class VariantOutcome:
    """What one variant produced: its hits as a run table, the per-query metrics and the alignment."""

    name: str
    role: str
    run: pd.DataFrame
    per_query: pd.DataFrame
    alignment: AlignmentReport
    means: dict[str, float]
    efficiency: dict[str, float] = field(default_factory=dict)  # efficiency.* (retrieved variants only)


@dataclass
class ComparisonResult:
    """Everything a comparison produced, for the console, ``--json`` and notebooks."""

    config: ExperimentConfig
    dataset_name: str
    n_queries: int
    primary_metric: str
    variants: dict[str, VariantOutcome]
    comparison: pd.DataFrame
    tracking_uri: str | None = None
    parent_run_id: str | None = None
    variant_run_ids: dict[str, str] = field(default_factory=dict)
    ui_hint: str | None = None
    timings: dict[str, float] = field(default_factory=dict)
    judged: dict[str, JudgedCoverage] = field(default_factory=dict)  # per variant, at the primary cutoff
    #: The judgments list relevant items only (no row below the relevance threshold): an unjudged hit is
    #: then by construction not relevant, and judged@k the share of relevant hits, not a gap.
    judgments_relevant_only: bool = False
    judgment_warnings: list[str] = field(default_factory=list)
    tuned: TunedComparison | None = None  # a sweep's: what choosing among its candidates gains, unseen
    grid: pd.DataFrame | None = None  # a sweep's candidates: settings, primary-metric row, efficiency
    queries: pd.DataFrame | None = None  # the query set: query_id, text (and group ...)
    #: What each retrieved variant costs (``stats.cost.cost_table``): latency, encoding, sizes, and each
    #: treatment's ratios to the control.
    cost: pd.DataFrame | None = None
    recorded: list[str] = field(default_factory=list)  # where it was recorded, as lines for the console
    #: Where each treatment's change comes from (``evaluation.attribution``): per (treatment, metric) the
    #: mean delta split into new, lost, reorder and ideal, with the counts; and the same per query.
    attribution: pd.DataFrame | None = None
    attribution_per_query: pd.DataFrame | None = None
    #: Per treatment, on the primary metric: the range the unjudged hits allow and whether the verdict
    #: holds over it (``stats.robustness.robustness_table``); None when not computed (condensed, span level).
    robustness: pd.DataFrame | None = None
    #: Per treatment: the queries needed to detect min_effect or the observed delta (``stats.power``).
    queries_needed: pd.DataFrame | None = None
    #: The relevance judge's stage (``abcompare.judging.stage.JudgeOutcome``), None without a judge section.
    judge: Any = None
    #: The answers stage (``abcompare.answers.stage.AnswersOutcome``), None without an answers section.
    answers: Any = None

    @property
    def alignment(self) -> dict[str, AlignmentReport]:
        return {name: outcome.alignment for name, outcome in self.variants.items()}

    @property
    def means(self) -> dict[str, dict[str, float]]:
        return {name: outcome.means for name, outcome in self.variants.items()}

    @property
    def per_query(self) -> dict[str, pd.DataFrame]:
        return {name: outcome.per_query for name, outcome in self.variants.items()}


@dataclass
class CollectionsResult:
    """One comparison across several collections (``datasets:`` in the config): each collection's own
    comparison, laid out as a single-collection one, and the pooled test of the primary metric.

    ``pooled`` has one row per treatment (``stats.pooled.pooled_comparison``): the delta averaged over the
    collections (``weighting``: equal weight per collection, or per query), its stratified-bootstrap
    interval, the stratified sign-flip p-value (adjusted over the treatments), the random-effects
    meta-analysis (effect, interval, tau², I²) and the verdict. ``per_collection`` has one row per
    (collection, treatment) on the primary metric, its p adjusted over the family of every collection's
    primary tests.
    """

    config: ExperimentConfig  # the whole config, with its ``datasets`` list
    primary_metric: str
    collections: dict[str, ComparisonResult]  # by collection name, in config order
    pooled: pd.DataFrame
    per_collection: pd.DataFrame
    weighting: str = "collection"
    timings: dict[str, float] = field(default_factory=dict)
    tracking_uri: str | None = None
    parent_run_id: str | None = None  # the run of the whole comparison; each collection's is nested in it
    collection_run_ids: dict[str, str] = field(default_factory=dict)  # each collection's own parent run
    ui_hint: str | None = None
    recorded: list[str] = field(default_factory=list)
