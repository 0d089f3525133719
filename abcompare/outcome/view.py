"""What a comparison shows, built once: the view every page reads (``report.html``, the Markdown job
summary), written to ``result.json`` by :meth:`to_json` and read back by :meth:`from_json` (with the tables
``load_comparison`` reads), so a fresh result and one read back from MLflow render the same.

An experiment's view is each collection's :class:`ComparisonView` and, across several collections, the
:class:`PooledView` of its top run (the pooled verdicts, the per-collection table). The views hold plain
tables and values; the renderers only render them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

import pandas as pd

from abcompare.core.settings import ComparisonSettings, FamilySettings, PairedComparison, PooledSettings
from abcompare.core.vocabulary import PRIMARY
from abcompare.outcome.pooled_sentences import pooled_non_inferiority_sentence, pooled_sentence
from abcompare.outcome.sentences import tuned_sentence, verdict_notes

if TYPE_CHECKING:
    from abcompare.outcome.results import Comparison, ComparisonResult


#: What a view's tables are when read back: a table, the tables by variant, or the ``source`` line.
_Table = pd.DataFrame | Mapping[str, pd.DataFrame] | str | None


@dataclass
class ComparisonView:
    """One collection's comparison as its page shows it, as plain tables and values."""

    name: str
    description: str
    dataset: str
    n_queries: int
    level: str
    convention: str
    comparison: pd.DataFrame  # the statistics table (``settings``: how it was tested)
    per_query: Mapping[str, pd.DataFrame]  # variant -> per-query metrics, indexed by query id
    queries: pd.DataFrame  # indexed by query id: text (and group ...)
    hits: Mapping[str, pd.DataFrame] = field(default_factory=dict)  # variant -> run table with ``grade``
    relevance_threshold: float = 1
    judged: Mapping[str, Mapping[str, float]] = field(default_factory=dict)  # variant -> cutoff, mean_judged
    judgment_warnings: Sequence[str] = ()
    judgments_relevant_only: bool = False  # no judgment below the threshold: unjudged means not relevant
    tuned_sentence: str | None = None
    grid: pd.DataFrame | None = None
    grid_settings: Sequence[str] = ()
    control_seconds_per_query: float | None = None
    cost: pd.DataFrame | None = None  # what each variant costs (stats.cost.cost_table), beside each verdict
    source: str = ""  # where it was recorded (run id), for the footer
    focus: Sequence[str] = ()  # the treatments whose wins and losses are shown (default: the first few)
    attribution: pd.DataFrame | None = None  # where each change comes from, per (treatment, metric)
    attribution_per_query: pd.DataFrame | None = None  # the same per query
    #: Lines under each treatment's verdict (``outcome.sentences.verdict_notes``): the unjudged hits'
    #: range, the queries needed.
    notes: Mapping[str, Sequence[str]] = field(default_factory=dict)
    #: A collection's comparison: the comparison across collections it is part of, ``(name, link)`` (its
    #: top run's page), so the page leads back to the pooled verdict.
    part_of: tuple[str, str] | None = None
    #: What a ``judge:`` and an ``answers:`` section concluded, as the console prints them under the
    #: verdicts: the judge's agreement with people and corrected verdict, the answers' verdicts, their cost.
    stage_lines: Sequence[str] = ()
    #: An ``answers:`` section's largest answer wins and losses per treatment, both answers side by side
    #: (records of ``abcompare.answers.changes.largest_answer_changes``).
    answer_changes: Sequence[Mapping[str, Any]] = ()
    #: How ``comparison`` was tested (alpha, correction, tests, resamples, seed, ...).
    settings: ComparisonSettings = field(kw_only=True)

    @property
    def tested(self) -> PairedComparison:
        """The statistics table with its settings, as the sentences read them."""
        return PairedComparison(self.comparison, self.settings)

    @property
    def primary_metric(self) -> str:
        """The comparison's primary metric: as its settings name it, else its primary rows'."""
        table = self.comparison
        if self.settings.primary_metric:
            return self.settings.primary_metric
        rows = table[table["role"] == PRIMARY]
        return str(rows["metric"].iloc[0]) if len(rows) else str(table["metric"].iloc[0])

    #: The fields :meth:`to_json` writes: every one that is not a table.
    VALUES = (
        "name", "description", "dataset", "n_queries", "level", "convention", "relevance_threshold", "judged",
        "judgment_warnings", "judgments_relevant_only", "tuned_sentence", "grid_settings",
        "control_seconds_per_query", "focus", "notes", "part_of", "stage_lines", "answer_changes",
    )  # fmt: skip

    @classmethod
    def from_result(cls, result: Comparison, part_of: tuple[str, str] | None = None) -> ComparisonView:
        """The view of a fresh comparison (``part_of``: the comparison across collections it belongs to)."""

        cfg = result.config
        queries = result.queries.set_index("query_id") if result.queries is not None else pd.DataFrame()
        return cls(
            name=cfg.name, description=cfg.description or "", dataset=result.dataset_name,
            n_queries=result.n_queries, level=cfg.dataset.level, convention=cfg.evaluation.convention,
            comparison=result.comparison, settings=result.settings, per_query=result.per_query,
            queries=queries,
            hits={name: outcome.run for name, outcome in result.variants.items()},
            relevance_threshold=cfg.evaluation.relevance_threshold,
            judged={name: asdict(coverage) for name, coverage in result.judged.items()},
            judgment_warnings=list(result.judgment_warnings),
            judgments_relevant_only=result.judgments_relevant_only,
            tuned_sentence=tuned_sentence(result.tuned) if result.tuned is not None else None,
            grid=result.grid, grid_settings=cfg.sweep_plan.swept_settings if cfg.sweep_plan else [],
            control_seconds_per_query=result.variants["control"].efficiency.get("efficiency.seconds_per_query"),
            focus=[result.tuned.most_chosen] if result.tuned is not None else [],
            attribution=result.attribution, attribution_per_query=result.attribution_per_query,
            notes=verdict_notes(result.comparison, result.robustness, result.queries_needed),
            cost=result.cost, part_of=part_of, stage_lines=stage_lines(result),
            answer_changes=result.answers.changes() if result.answers is not None else [],
        )  # fmt: skip

    def to_json(self) -> dict[str, Any]:
        """The values (not the tables) as JSON-ready data: what ``result.json`` stores."""
        data = {key: getattr(self, key) for key in self.VALUES}
        data["judged"] = {k: dict(v) for k, v in self.judged.items()}
        data["notes"] = {name: list(lines) for name, lines in self.notes.items()}
        for key in ("judgment_warnings", "grid_settings", "focus", "stage_lines"):
            data[key] = list(data[key])
        data["answer_changes"] = [dict(record) for record in self.answer_changes]
        data["part_of"] = list(self.part_of) if self.part_of is not None else None
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any], **tables: _Table | ComparisonSettings) -> ComparisonView:
        """The view from :meth:`to_json`'s values and the tables read back (``comparison``, ``per_query``,
        ``queries``, ``hits``, ``grid``, ``cost``, ``attribution``, ``attribution_per_query``, ``source``)
        and the comparison's ``settings``."""
        values = {key: data[key] for key in cls.VALUES if data.get(key) is not None}
        values["n_queries"] = int(values["n_queries"])
        values["relevance_threshold"] = float(values.get("relevance_threshold", 1))
        values["judgments_relevant_only"] = bool(values.get("judgments_relevant_only", False))
        if values.get("part_of"):
            values["part_of"] = tuple(values["part_of"])
        values.setdefault("description", "")
        return cls(**values, **tables)


def stage_lines(result: Comparison) -> list[str]:
    """The judge's and the answers' lines, when their sections ran (empty otherwise)."""
    return [
        *(result.judge.lines() if result.judge is not None else []),
        *(result.answers.lines() if result.answers is not None else []),
    ]


@dataclass
class PooledView:
    """The top run's page across several collections: the pooled verdicts, the forest of the collections,
    the per-collection table linking to each collection's own run."""

    name: str
    description: str
    primary_metric: str
    weighting: str  # "collection" (equal weight per collection) | "per_query"
    pooled: pd.DataFrame  # stats.pooled.pooled_comparison: one row per treatment
    per_collection: pd.DataFrame  # one row per (collection, treatment)
    sentences: Mapping[str, str]  # treatment -> the pooled verdict sentence
    links: Mapping[str, str] = field(default_factory=dict)  # collection -> its comparison run's page
    source: str = ""  # where it was recorded (the top run's id), for the footer
    #: treatment -> the pooled non-inferiority line (with a margin only)
    non_inferiority: Mapping[str, str] = field(default_factory=dict)
    #: With a ``judge:`` section: the corrected verdict pooled across the collections, as the console says it.
    stage_lines: Sequence[str] = ()
    #: How ``pooled`` was made, and how ``per_collection``'s family was adjusted.
    settings: PooledSettings = field(kw_only=True)
    family: FamilySettings = field(kw_only=True)

    VALUES = ("name", "description", "primary_metric", "weighting", "sentences", "links", "non_inferiority",
              "stage_lines")  # fmt: skip

    @classmethod
    def from_result(cls, result: ComparisonResult, links: Mapping[str, str]) -> PooledView:
        """The view of a fresh comparison across collections; ``links``: each collection's run page."""

        cfg, pooled, per_collection = result.config, result.pooled, result.per_collection
        settings, family = result.pooled_settings, result.family
        names = [str(name) for name in pooled["treatment"]]
        sentences = {name: pooled_sentence(pooled, per_collection, settings, name) for name in names}
        lines = {name: pooled_non_inferiority_sentence(pooled, settings, name) for name in names}
        return cls(
            name=cfg.name, description=cfg.description or "", primary_metric=result.primary_metric,
            weighting=result.weighting, pooled=pooled, per_collection=per_collection, sentences=sentences,
            links=dict(links), non_inferiority={name: line for name, line in lines.items() if line},
            stage_lines=result.pooled_judge.lines() if result.pooled_judge is not None else (),
            settings=settings, family=family,
        )  # fmt: skip

    def to_json(self) -> dict[str, Any]:
        """The values (not the tables) as JSON-ready data: what the top run's ``result.json`` stores."""
        data = {key: getattr(self, key) for key in self.VALUES}
        data["stage_lines"] = list(self.stage_lines)
        return {key: dict(value) if isinstance(value, Mapping) else value for key, value in data.items()}

    @classmethod
    def from_json(
        cls, data: Mapping[str, Any], **tables: pd.DataFrame | str | PooledSettings | FamilySettings
    ) -> PooledView:
        """The view from :meth:`to_json`'s values and the tables read back (``pooled``, ``per_collection``,
        ``source``) with their ``settings`` and ``family``."""
        values = {key: data[key] for key in cls.VALUES if data.get(key) is not None}
        values.setdefault("description", "")
        return cls(**values, **tables)


@dataclass
class ExperimentView:
    """An experiment as it shows: each collection's :class:`ComparisonView` and, across several, the
    :class:`PooledView` (None for one collection), read by the renderers as :attr:`sections` and
    :attr:`alone`.

    A page shows what its run holds: a comparison's run its one collection, a top run across several the
    pooled section alone (each collection's comparison is its own run and page, linked)."""

    collections: Mapping[str, ComparisonView]
    pooled: PooledView | None = None
    #: The pooled section as a list (none for one collection, one across several) and the collections shown
    #: on their own, in full (each one when no pooled section summarises them): what every renderer iterates
    #: over, so none of them asks which shape it was given.
    sections: tuple[PooledView, ...] = field(init=False)
    alone: Mapping[str, ComparisonView] = field(init=False)

    def __post_init__(self) -> None:
        """The one place a view tells one collection from several (whether a pooled section holds them)."""
        pooled = self.pooled
        self.sections, self.alone = ((pooled,), {}) if pooled is not None else ((), self.collections)

    @classmethod
    def shown(cls, *collections: ComparisonView, pooled: PooledView | None = None) -> ExperimentView:
        """What one page shows: the collections it details (by dataset) and the pooled section, if any."""
        return cls({view.dataset: view for view in collections}, pooled)

    @classmethod
    def from_result(cls, result: ComparisonResult, links: Mapping[str, str] | None = None) -> ExperimentView:
        """The view of a fresh result (``links``: each collection's run page, for the pooled view)."""
        views = {name: ComparisonView.from_result(c) for name, c in result.collections.items()}
        pooled = PooledView.from_result(result, links or {}) if result.pooled is not None else None
        return cls(views, pooled)
