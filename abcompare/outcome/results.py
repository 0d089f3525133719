"""What a comparison produced, as the runner hands it to the console, ``--json``, MLflow and notebooks.

These are the types at the runner's last stage boundary; the stages' own types (the alignment report, the
judged coverage, a sweep's tuned comparison) are named here for type checkers only, so this module ties no
stage to another at run time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pandas as pd

from abcompare.core.settings import PairedComparison

if TYPE_CHECKING:
    from abcompare.answers.stage import AnswersOutcome
    from abcompare.config import ExperimentConfig
    from abcompare.core.settings import ComparisonSettings, FamilySettings, PooledSettings
    from abcompare.data.alignment import AlignmentReport
    from abcompare.evaluation.judgments import JudgedCoverage
    from abcompare.judging.pooled import PooledJudge
    from abcompare.judging.stage import JudgeOutcome
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
class Comparison:
    """One collection's comparison: each variant's outcome, the comparison table and what explains it."""

    config: ExperimentConfig  # this collection's own config (``dataset:`` set)
    dataset_name: str
    n_queries: int
    primary_metric: str
    variants: dict[str, VariantOutcome]
    comparison: pd.DataFrame
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
    judge: JudgeOutcome | None = None
    #: The answers stage (``abcompare.answers.stage.AnswersOutcome``), None without an answers section.
    answers: AnswersOutcome | None = None
    #: How ``comparison`` was tested (alpha, correction, the tests run, resamples, seed, ...): carried
    #: beside the table, not in its ``attrs``.
    settings: ComparisonSettings = field(kw_only=True)

    @property
    def tested(self) -> PairedComparison:
        """The comparison table with its settings, as the sentences read them."""
        return PairedComparison(self.comparison, self.settings)

    @property
    def alignment(self) -> dict[str, AlignmentReport]:
        return {name: outcome.alignment for name, outcome in self.variants.items()}

    @property
    def means(self) -> dict[str, dict[str, float]]:
        return {name: outcome.means for name, outcome in self.variants.items()}

    @property
    def per_query(self) -> dict[str, pd.DataFrame]:
        return {name: outcome.per_query for name, outcome in self.variants.items()}


@dataclass(frozen=True)
class Recorded:
    """Where a comparison was recorded in MLflow (what the tracking session returns; None when off).

    ``parent_run_id`` is the run of the whole comparison: one collection's parent run, or across several
    the top run each collection's comparison is nested under. ``lines`` say so for the console."""

    uri: str
    experiment_id: str | None
    parent_run_id: str | None
    collection_run_ids: dict[str, str] = field(default_factory=dict)  # each collection's own parent run
    variant_run_ids: dict[str, dict[str, str]] = field(default_factory=dict)  # by collection, by variant
    lines: tuple[str, ...] = ()

    @property
    def ui_hint(self) -> str | None:
        return self.lines[-1].removeprefix("View: ") if self.lines else None


@dataclass
class ComparisonResult:
    """Everything an experiment produced: each collection's :class:`Comparison` (one for ``dataset:``,
    several for ``datasets:``, in config order) and, across several, the pooled test of the primary metric.

    ``pooled`` has one row per treatment (``stats.pooled.pooled_comparison``): the delta averaged over the
    collections (``weighting``: equal weight per collection, or per query), its interval at the verdict's
    level (the stratified bootstrap's beside it), the stratified sign-flip p-value (adjusted over the
    treatments), the random-effects meta-analysis (effect, interval, tau², I²) and the verdict.
    ``per_collection`` has one row per (collection, treatment) on the primary metric, its p adjusted over
    the family of every collection's primary tests. Both are None for one collection.

    With one collection its comparison's fields read through (``result.comparison``, ``result.variants``).
    """

    config: ExperimentConfig  # the whole config (with its ``datasets`` list across several)
    primary_metric: str
    collections: dict[str, Comparison]  # by collection name, in config order; 1..n
    pooled: pd.DataFrame | None = None
    per_collection: pd.DataFrame | None = None
    weighting: str = "collection"
    timings: dict[str, float] = field(default_factory=dict)
    where: Recorded | None = None
    #: Across several collections with a ``judge:`` section, the corrected verdict pooled across them
    #: (``abcompare.judging.pooled.PooledJudge``); None otherwise.
    pooled_judge: PooledJudge | None = None  # where it was recorded (None: tracking off, or not yet recorded)
    #: Across several collections, how ``pooled`` was made and how ``per_collection``'s family was adjusted
    #: (``stats.pooled.pooled_test``); None for one collection.
    pooled_settings: PooledSettings | None = None
    family: FamilySettings | None = None

    def __getattr__(self, name: str) -> Any:
        """One collection's comparison read through: ``result.comparison`` is its comparison table."""
        collections = self.__dict__.get("collections") or {}
        if len(collections) == 1 and (name in Comparison.__dataclass_fields__ or name in _READ_THROUGH):
            return getattr(next(iter(collections.values())), name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    @property
    def tracking_uri(self) -> str | None:
        return self.where.uri if self.where is not None else None

    @property
    def parent_run_id(self) -> str | None:
        return self.where.parent_run_id if self.where is not None else None

    @property
    def collection_run_ids(self) -> dict[str, str]:
        return dict(self.where.collection_run_ids) if self.where is not None else {}

    @property
    def variant_run_ids(self) -> dict[str, str]:
        """A one-collection comparison's variant runs (across several: each collection's, in ``where``)."""
        if self.where is None or len(self.collections) != 1:
            return {}
        return dict(self.where.variant_run_ids.get(next(iter(self.collections)), {}))

    @property
    def recorded(self) -> list[str]:
        return list(self.where.lines) if self.where is not None else []

    @property
    def ui_hint(self) -> str | None:
        return self.where.ui_hint if self.where is not None else None


_READ_THROUGH = ("alignment", "means", "per_query")
