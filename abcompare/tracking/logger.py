"""What a comparison writes to MLflow: a parent run for the comparison, a child run per variant.

The names are :mod:`abcompare.tracking.layout`'s. Every variant run has the same metric keys, table names and
root-level plot file, so MLflow's compare view lines the variants up; each treatment's run also carries its
comparison with the control (``_vs_control.<metric>.delta`` ...), so the runs table, the chart view and the
compare view show deltas and adjusted p-values beside the means. It is handed tables and the files
:mod:`abcompare.tracking.artifacts` made (the run file, the plots, the report); it decides where they go and
sends them through a :mod:`~abcompare.tracking.writer` (in a writer process, for ``abcompare run``).
:class:`NullLogger` stands in when tracking is off.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import pandas as pd

from abcompare.core.vocabulary import NON_INFERIORITY_CODE, PRIMARY, VERDICT_CODE
from abcompare.outcome.markdown import view_description
from abcompare.outcome.rows import primary_first
from abcompare.outcome.sentences import (
    attribution_row,
    cost_sentence,
    secondary_summary,
    tuned_sentence,
    verdict_run_name,
    verdict_sentence,
)
from abcompare.outcome.view import ComparisonView
from abcompare.tracking.layout import (
    ALIGNMENT_FILE,
    ANNOTATION_FILES_TAG,
    ATTRIBUTION_FIELDS,
    ATTRIBUTION_PER_QUERY_TABLE,
    ATTRIBUTION_TABLE,
    CODE_VERSION_TAG,
    COLLECTION_TAG,
    COMPARISON_FIELDS,
    COMPARISON_TABLE,
    COMPARISON_TAG,
    CONFIG_HASH_TAG,
    COST_RATIO_FIELDS,
    COST_TABLE,
    COST_TAG,
    DATASET_HASH_TAG,
    DATASET_TAG,
    GRID_TABLE,
    HELD_OUT_TABLE,
    JUDGMENTS_TAG,
    N_QUERIES_METRIC,
    NON_INFERIORITY_FIELDS,
    NOTE_TAG,
    PER_QUERY_ALL_TABLE,
    PER_QUERY_TABLE,
    PRIMARY_METRIC_TAG,
    QUERIES_NEEDED_FIELDS,
    QUERIES_TABLE,
    ROBUSTNESS_FIELDS,
    ROLE_COMPARISON,
    ROLE_TAG,
    RUN_NAME_TAG,
    SUMMARY_FILE,
    TIMINGS_FILE,
    TUNED_PREFIX,
    TUNED_TAG,
    VARIANT_TAG,
    VERDICT_TAG,
    VIEW_TAG,
    attribution_key,
    compare_url,
    comparison_key,
    cost_ratio_key,
    cost_tag,
    detail_key,
    mean_key,
    metric_key,
    run_url,
    secondary_tag,
    verdict_tag,
    view_url,
    vs_control_key,
)
from abcompare.tracking.run_logger import Nesting, RunLogger, header_width, stamped
from abcompare.tracking.store import flatten, ui_command
from abcompare.tracking.writer import Command, RecordedRuns

if TYPE_CHECKING:
    from abcompare.config import ExperimentConfig
    from abcompare.data.dataset import Dataset
    from abcompare.outcome.results import Comparison, VariantOutcome


PARENT = "parent"


def variant_handle(name: str) -> str:
    return f"variant:{name}"


class Logger(Protocol):
    """What the runner calls, stage by stage (:class:`ComparisonLogger`, or :class:`NullLogger`)."""

    def start(self) -> None: ...
    def log_variant(
        self, outcome: VariantOutcome, settings: Mapping[str, Any], files: Mapping[str, str | Path]
    ) -> None: ...
    def log_comparison(self, result: Comparison, files: Mapping[str, str | Path]) -> None: ...
    def part_of(self) -> tuple[str, str] | None: ...
    def finish(self) -> RecordedRuns | None: ...
    def abort(self, status: str) -> None: ...


class NullLogger:
    """Tracking is off: every step does nothing, and nothing is recorded."""

    background = False

    def start(self) -> None:
        pass

    def log_variant(
        self, outcome: VariantOutcome, settings: Mapping[str, Any], files: Mapping[str, str | Path]
    ) -> None:
        pass

    def log_comparison(self, result: Comparison, files: Mapping[str, str | Path]) -> None:
        pass

    def part_of(self) -> tuple[str, str] | None:
        return None

    def finish(self) -> RecordedRuns | None:
        return None

    def abort(self, status: str) -> None:
        pass


class ComparisonLogger(RunLogger):
    """Logs one comparison: the runner calls :meth:`start`, :meth:`log_variant` per variant,
    :meth:`log_comparison`, then :meth:`finish` (or :meth:`abort` when something failed)."""

    def __init__(
        self,
        config: ExperimentConfig,
        config_path: Path | None,
        dataset: Dataset,
        version: str,
        staging: Path,
        *,
        background: bool = False,
        nested: Nesting | None = None,
    ) -> None:
        super().__init__(config, config_path, version, staging, background=background)
        self.nested = nested  # a collection's comparison: its parent run goes under the whole comparison's
        self.dataset = dataset
        self.dataset_hash = dataset.fingerprint()
        self.variant_handles: list[str] = []  # variant runs, ended with the comparison
        self.logged_efficiency: dict[str, set[str]] = {}  # the efficiency.* each variant run has already

    def _common_tags(self) -> dict[str, str]:
        return {
            CONFIG_HASH_TAG: self.config_hash,
            DATASET_HASH_TAG: self.dataset_hash,
            DATASET_TAG: self.dataset.name,
            CODE_VERSION_TAG: self.version,
            COMPARISON_TAG: self.config.name,
            **self.config.tracking.tags,
        }

    def _judgment_tags(self) -> dict[str, str]:
        """Which judgments the comparison used, so two comparisons on different judgment sets are never
        confused: the files with their sha256, and how many judgments they hold."""
        annotations = self.dataset.annotations
        threshold = self.config.evaluation.relevance_threshold
        relevant = int((annotations["grade"] >= threshold).sum()) if "grade" in annotations else 0
        files = "; ".join(
            f"{Path(p).name} sha256:{digest[:16]}" for p, digest in self.dataset.annotation_files
        )
        tags = {
            JUDGMENTS_TAG: f"{len(annotations)} judgments ({relevant} at grade >= {threshold}) on "
            f"{annotations['query_id'].nunique()} queries",
        }
        if files:
            tags[ANNOTATION_FILES_TAG] = files
        return tags

    def _log_answers(self, result: Comparison) -> None:
        """An answers: section's tables on the parent run, and each judged answer as a trace of it."""
        if result.answers is None:
            return
        for name, table in result.answers.tables().items():
            self._send(Command.TABLE, PARENT, name, table)
        records = result.answers.trace_records()
        if records:
            self._send(Command.TRACES, PARENT, records)

    def part_of(self) -> tuple[str, str] | None:
        """A collection's comparison: the comparison across collections it is part of (its top run's name
        and page), for its report.html; None for a comparison of its own."""
        return self.nested.part_of if self.nested is not None else None

    def run_name(self) -> str:
        """The parent's name: the comparison's name and when it started, so runs can be told apart."""
        base = self.config.tracking.run_name or self.config.name
        if self.nested is not None and self.nested.collection not in base:  # the run says its collection
            base = f"{self.nested.collection}: {base}"
        return stamped(base, self.started)

    # ---------------------------------------------------------------- stages
    def start(self) -> None:
        """Open the store and the parent run; log the settings, the config and the query set."""
        cfg = self.config
        tags = {**self._common_tags(), **self._judgment_tags(), ROLE_TAG: ROLE_COMPARISON}
        nesting: dict[str, str] = {}
        if self.nested is not None:
            tags[COLLECTION_TAG] = self.nested.collection
            nesting["parent_run_id"] = self.nested.parent_run_id
        settings = {
            "dataset": cfg.dataset.model_dump(mode="json"),
            "evaluation": cfg.evaluation.model_dump(mode="json"),
            "significance": cfg.significance.model_dump(mode="json"),
            "treatments": ",".join(cfg.treatments),
        }
        self._open_run(PARENT, self.run_name(), tags, settings, **nesting)
        self._send(Command.TABLE, PARENT, QUERIES_TABLE, self.dataset.queries.set_index("query_id"))
        self._log_queries(PARENT, self.dataset.name, self.dataset, self.dataset_hash)

    def log_variant(
        self, outcome: VariantOutcome, settings: Mapping[str, Any], files: Mapping[str, str | Path]
    ) -> None:
        """A child run: the variant's settings as params, its means and cost as metrics, its per-query table,
        and the files the runner made for it (its hits, with each hit's judgment grade, among them)."""
        handle = variant_handle(outcome.name)
        tags = {**self._common_tags(), ROLE_TAG: outcome.role, VARIANT_TAG: outcome.name}
        self._send(Command.START_RUN, handle, outcome.name, tags, parent=PARENT)
        primary = self.config.evaluation.primary_metric
        means = sorted(outcome.means.items(), key=lambda item: item[0] != primary)  # the primary first
        metrics = {metric_key(k): float(v) for k, v in means}  # as computed: metrics are data, not display
        metrics[N_QUERIES_METRIC] = float(len(outcome.per_query))
        if "retrieved_count" in outcome.per_query:
            metrics["mean_retrieved_count"] = float(outcome.per_query["retrieved_count"].mean())
        metrics.update({k: float(v) for k, v in outcome.efficiency.items()})
        self.logged_efficiency[handle] = set(outcome.efficiency)
        self._send(Command.LOG, handle, metrics=metrics, params=flatten(settings))
        self._send(Command.TABLE, handle, PER_QUERY_TABLE, outcome.per_query)
        self._send(Command.JSON, handle, ALIGNMENT_FILE, outcome.alignment.to_dict())
        self._send_files(handle, files)
        self._send(
            Command.FLUSH, handle
        )  # written now; the run ends with the comparison (a killed one: FAILED)
        self.variant_handles.append(handle)

    def log_comparison(self, result: Comparison, files: Mapping[str, str | Path]) -> None:
        """The parent run: every comparison figure, the tables, the description, verdict tags, the files
        the runner made (plots, report); each treatment's run gets its own comparison with the control."""

        self.logged = result  # kept, so a lost server's error can carry it
        metrics, tags, sentences = _verdict_figures(result)
        markdown = self._description(result)
        tags[NOTE_TAG] = markdown
        costs = _cost_sentences(result)
        tags.update({cost_tag(name): sentence for name, sentence in costs.items()})
        metrics.update(result.judge.metrics() if result.judge is not None else {})
        metrics.update(result.answers.metrics() if result.answers is not None else {})
        self._send(Command.LOG, PARENT, metrics=metrics, tags=tags)
        self._send_tables(result, markdown, files)
        for name, sentence in sentences.items():
            self._log_vs_control(
                result.comparison, name, sentence, result.attribution, _robustness_figures(result, name)
            )
        self._log_costs(result, costs)
        self._send(Command.EXPERIMENT_TAGS, {VIEW_TAG: json.dumps(headline_view(result))})

    def _description(self, result: Comparison) -> str:
        """The parent run's description (``summary.md``): the verdicts, the table, how it was tested."""
        return view_description(ComparisonView.from_result(result), self._context(result))

    def _send_tables(self, result: Comparison, markdown: str, files: Mapping[str, str | Path]) -> None:
        """The parent run's tables and files: the judge's, the comparison (the one reading order), the
        per-query metrics side by side, a sweep's grid and held-out table, the alignment, the description,
        the timings, the runner's files, the attribution and the cost."""
        for name, table in result.judge.tables().items() if result.judge is not None else ():
            self._send(Command.TABLE, PARENT, name, table)
        self._log_answers(result)
        rows = primary_first(result.comparison).set_index(["treatment", "metric"])
        # the stored form: the settings in the parquet file's metadata (pandas writes ``attrs`` there), where
        # load_comparison reads them back, from this run or one stored before the settings were typed
        rows.attrs = result.settings.to_dict()
        self._send(Command.TABLE, PARENT, COMPARISON_TABLE, rows)
        self._send(Command.TABLE, PARENT, PER_QUERY_ALL_TABLE, _side_by_side(result.per_query))
        if result.grid is not None:
            self._send(Command.TABLE, PARENT, GRID_TABLE, result.grid)
        if result.tuned is not None:
            self._send(Command.TABLE, PARENT, HELD_OUT_TABLE, result.tuned.held_out)
        alignment = {n: report.to_dict() for n, report in result.alignment.items()}
        self._send(Command.JSON, PARENT, ALIGNMENT_FILE, alignment)
        self._send(Command.TEXT, PARENT, SUMMARY_FILE, markdown)
        self._send(Command.JSON, PARENT, TIMINGS_FILE, {"timings_seconds": result.timings})
        self._send_files(PARENT, files)
        if result.attribution is not None:
            self._send(Command.TABLE, PARENT, ATTRIBUTION_TABLE, result.attribution)
            self._send(Command.TABLE, PARENT, ATTRIBUTION_PER_QUERY_TABLE, result.attribution_per_query)
        if result.cost is not None:
            self._send(Command.TABLE, PARENT, COST_TABLE, result.cost)

    def _log_vs_control(
        self,
        comparison: pd.DataFrame,
        treatment: str,
        sentence: str,
        attribution: pd.DataFrame | None,
        extra: Mapping[str, float],
    ) -> None:
        """A treatment's primary comparison with the control, on the treatment's own run (``_vs_control.*``:
        its figures, the parts of its delta, ``vs_control.<metric>.attr.*``, and the ``extra`` figures of
        that comparison: robustness, queries needed), and its verdict ``sentence``."""

        metrics: dict[str, float] = {}
        for row in _primary_rows(comparison, treatment):
            for name, value in _figures(row).items():
                metrics[vs_control_key(row.metric, name)] = value
            parts = attribution_row(attribution, treatment, row.metric)
            if parts is not None:
                for part in ATTRIBUTION_FIELDS:
                    metrics[attribution_key(row.metric, part)] = float(parts[part])
            for name, value in extra.items():
                metrics[detail_key(row.metric, name)] = value
        # the name MLflow's compare view paints on its first screen says the comparison (the metrics box
        # is screens below it); the abcompare.variant tag keeps the bare name
        tags = {VERDICT_TAG: sentence, RUN_NAME_TAG: verdict_run_name(comparison, treatment)}
        self._send(Command.LOG, variant_handle(treatment), metrics=metrics, tags=tags)

    def _log_costs(self, result: Comparison, sentences: Mapping[str, str]) -> None:
        """Each variant run's timed ``efficiency.*`` (measured after every variant ran, so not yet logged),
        and on each treatment's run its cost ratios to the control and its cost sentence."""
        for name, outcome in result.variants.items():
            handle = variant_handle(name)
            done = self.logged_efficiency.get(handle, set())
            metrics = {k: float(v) for k, v in outcome.efficiency.items() if k not in done}
            tags = {}
            if result.cost is not None and name in sentences:
                row = result.cost.loc[name]
                for field in COST_RATIO_FIELDS:
                    if not pd.isna(row[field]):
                        metrics[cost_ratio_key(field)] = float(row[field])
                tags[COST_TAG] = sentences[name]
            if metrics or tags:
                self._send(Command.LOG, handle, metrics=metrics, tags=tags)

    def _context(self, result: Comparison) -> str:
        cfg = self.config
        text = (
            f"**{cfg.name}**: {cfg.description}".rstrip(": ")
            + f". Dataset `{result.dataset_name}`, {result.n_queries} queries, level `{cfg.dataset.level}`, "
            f"convention `{cfg.evaluation.convention}`."
        )
        return text.replace(".. ", ". ")

    def finish(self) -> RecordedRuns:
        """Close the variant runs, then the parent, and wait until everything is written; where it was
        recorded. Runs end only here, so a comparison killed before its end leaves none FINISHED."""
        return self._finish([*self.variant_handles, PARENT])


def _verdict_figures(result: Comparison) -> tuple[dict[str, float], dict[str, str], dict[str, str]]:
    """The parent run's figures and verdict tags (a sweep's: its tuned comparison), and each treatment's
    verdict sentence."""
    comparison = result.comparison
    metrics = _parent_metrics(comparison, result.means, result.primary_metric)
    tags = {PRIMARY_METRIC_TAG: result.primary_metric}
    sentences = {name: verdict_sentence(result.tested, name) for name in result.config.treatments}
    for name, sentence in sentences.items():
        tags[verdict_tag(name)] = sentence
        secondary = secondary_summary(result.tested, name)
        if secondary:
            tags[secondary_tag(name)] = secondary
    if result.tuned is not None:
        tags[TUNED_TAG] = tags[VERDICT_TAG] = tuned_sentence(result.tuned)
        tuned = {k: float(getattr(result.tuned, k)) for k in ("delta", "ci_low", "ci_high", "p_value")}
        metrics.update({f"{TUNED_PREFIX}.{k}": v for k, v in tuned.items()})
    else:
        tags[VERDICT_TAG] = "\n".join(sentences.values())
    return metrics, tags, sentences


def _cost_sentences(result: Comparison) -> dict[str, str]:
    """Each treatment's cost sentence (those that retrieved, beside a control that did)."""

    cost = result.cost
    if cost is None or "control" not in cost.index:
        return {}
    return {name: cost_sentence(cost, name) for name in result.config.treatments if name in cost.index}


def _primary_rows(comparison: pd.DataFrame, treatment: str | None = None) -> list[Any]:
    """The comparison's primary rows (of one treatment), in table order."""
    rows = comparison[comparison["role"] == PRIMARY]
    if treatment is not None:
        rows = rows[rows["treatment"] == treatment]
    return list(rows.itertuples(index=False))


def _parent_metrics(
    comparison: pd.DataFrame, means: Mapping[str, Mapping[str, float]], primary: str
) -> dict[str, float]:
    """The parent's metrics, in the order its run page lists them (MLflow keeps the order they were
    logged in): each treatment's primary comparison, then every variant's means, the primary metric's
    first. The secondary metrics' statistics are in ``tables/comparison``."""
    metrics: dict[str, float] = {}
    for row in _primary_rows(comparison):
        for name, value in _figures(row).items():
            metrics[comparison_key(row.treatment, row.metric, name)] = value
    for name, values in means.items():
        for metric in sorted(values, key=lambda m: m != primary):
            metrics[mean_key(name, metric)] = float(values[metric])
    return metrics


def _figures(row: Any) -> dict[str, float]:
    """One primary comparison row's figures, as computed (every digit: rounding is for what people read),
    and with a non-inferiority margin the non-inferiority test's."""
    values = {
        "delta": row.delta,
        "ci_low": row.ci_low,
        "ci_high": row.ci_high,
        "p_raw": row.p_primary,
        "p_adjusted": row.p_adjusted,
        "verdict": float(VERDICT_CODE.get(row.verdict, 0)),
    }
    assert tuple(values) == COMPARISON_FIELDS
    values.update(non_inferiority_figures(row._asdict()))
    return {name: float(value) for name, value in values.items()}


def non_inferiority_figures(row: Mapping[str, Any]) -> dict[str, float]:
    """The non-inferiority test's figures of one row (a comparison's primary row, or a pooled row) as
    MLflow metrics (:data:`NON_INFERIORITY_FIELDS`); none without the test."""
    if not isinstance(row.get("non_inferiority"), str):
        return {}
    tested = {
        "non_inferiority_p_raw": float(row["p_non_inferiority"]),
        "non_inferiority_p": float(row["p_non_inferiority_adjusted"]),
        "non_inferiority": float(NON_INFERIORITY_CODE[row["non_inferiority"]]),
    }
    assert tuple(tested) == NON_INFERIORITY_FIELDS
    return tested


def _robustness_figures(result: Comparison, treatment: str) -> dict[str, float]:
    """One treatment's robustness to the unjudged hits and the queries it would need, as MLflow metrics
    (``ROBUSTNESS_FIELDS``, ``QUERIES_NEEDED_FIELDS``; a figure with no value is left out)."""
    figures: dict[str, float] = {}
    for table, columns in (
        (result.robustness, dict(zip(ROBUSTNESS_FIELDS, ROBUSTNESS_COLUMNS_LOGGED, strict=True))),
        (result.queries_needed, dict(zip(QUERIES_NEEDED_FIELDS, QUERIES_NEEDED_COLUMNS_LOGGED, strict=True))),
    ):
        rows = [] if table is None else table[table["treatment"] == treatment].to_dict(orient="records")
        for row in rows[:1]:
            for field, column in columns.items():
                value = row[column]
                if value is not None and math.isfinite(float(value)):
                    figures[field] = float(value)
    return figures


#: The robustness and queries-needed tables' columns behind each MLflow field, in the fields' order.
ROBUSTNESS_COLUMNS_LOGGED = ("unjudged_hits", "unjudged_min", "unjudged_max", "holds", "flip_judgments")
QUERIES_NEEDED_COLUMNS_LOGGED = ("queries_needed", "queries_low", "queries_high")


def _side_by_side(per_query: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    frame = pd.concat(
        {name: table[[c for c in table.columns if "@" in c]] for name, table in per_query.items()}, axis=1
    )
    frame.columns = [f"{variant}/{metric}" for variant, metric in frame.columns]
    return frame


def headline_view(result: Comparison) -> dict[str, Any]:
    """The runs table's columns that answer the question (MLflow's shared view state, read back by its UI
    from the experiment tag ``mlflow.sharedViewState.abcompare``): the primary metric's difference and
    adjusted p on the parent, its mean and comparison on each variant's run, then the verdict sentence."""
    primary = result.primary_metric
    metrics: list[str] = []  # the parent's figures first: the parent rows are what the table shows folded
    for name in list(result.config.treatments)[:3] if result.tuned is None else []:
        metrics += [comparison_key(name, primary, f) for f in ("delta", "p_adjusted")]
    if result.tuned is not None:
        metrics += [f"{TUNED_PREFIX}.delta", f"{TUNED_PREFIX}.p_value"]
    metrics.append(metric_key(primary))  # then each variant's own run, unfolded
    metrics += [vs_control_key(primary, f) for f in ("delta", "ci_low", "ci_high", "p_adjusted", "verdict")]
    if result.config.significance.non_inferiority_margin is not None:  # the gate's figure beside them
        metrics.append(vs_control_key(primary, "non_inferiority_p"))
    if result.tuned is not None:
        metrics.append("efficiency.seconds_per_query")
    verdict = f"tags.`{VERDICT_TAG}`"
    # the figures beside the run's name, then the sentence: a narrow screen still shows the delta
    columns = [f"metrics.`{m}`" for m in metrics] + [verdict, "attributes.`Dataset`"]
    return {
        "selectedColumns": columns,
        "columnOrder": ["attributes.`Run Name`", *columns, "runDateAndNestInfo", "duration"],
        "columnWidths": {
            "attributes.`Run Name`": 240,
            **{f"metrics.`{m}`": header_width(m) for m in metrics},
            verdict: 420,
        },
        "orderByKey": "attributes.start_time",
        "orderByAsc": False,
    }


def recorded_lines(recorded: RecordedRuns, experiment: str, names: Mapping[str, str]) -> list[str]:
    """Where the comparison was recorded, for the console: the experiment, the parent and child runs, and
    how to look at them in the classic runs view with the headline columns."""

    ids = recorded.run_ids
    lines = [f"MLflow: experiment {experiment}, parent run {names.get(PARENT, '')} ({ids.get(PARENT, '?')})"]
    variants = {handle.removeprefix("variant:"): run_id for handle, run_id in ids.items() if handle != PARENT}
    lines += _variant_lines(variants)
    command, base = ui_command(recorded.uri)
    experiment_id = recorded.experiment_id
    if PARENT in ids:
        lines.append(f"  the comparison: {run_url(base, experiment_id, ids[PARENT])}")
    if len(variants) == 2:  # the control and one treatment: MLflow's compare view, side by side
        lines.append(f"  side by side: {compare_url(base, experiment_id, list(variants.values()))}")
    url = view_url(base, experiment_id)
    lines.append(f"View: {command}, then open {url}" if command else f"View: {url}")
    return lines


#: Up to this many variant runs are listed one per line; more (a sweep's) are summarised in one line.
VARIANTS_LISTED = 5


def _variant_lines(variants: Mapping[str, str]) -> list[str]:
    """The variant runs' ids, one line each; a sweep's many in one line (the control's id, and where the
    others are: the parent's child runs, each tagged with its variant name)."""
    if len(variants) <= VARIANTS_LISTED:
        return [f"  {name}: {run_id}" for name, run_id in variants.items()]
    others = len(variants) - 1
    return [
        f"  control: {variants.get('control', '?')}; {others} treatment runs: the parent's child runs, "
        f"each tagged {VARIANT_TAG}=<name> (--json lists every id)"
    ]
