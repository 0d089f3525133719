"""What a comparison across several collections (``datasets:``) writes to MLflow: one top run for the whole
comparison, and each collection's ordinary comparison nested under it.

The top run (role ``collections``) is opened first, so its id exists before the first collection's
:class:`~abcompare.tracking.logger.ComparisonLogger` starts (in its own writer session, possibly in a forked
process): that logger is handed a :class:`Nesting` and puts its parent run under the top run, tagged with
the collection; below it everything is as in a single-collection comparison. The top run then gets the
pooled test (``_pooled.<treatment>.<metric>.*``), the meta-analysis (``pooled.<treatment>.<metric>.*``),
each collection's primary figures (``collection.<name>.<treatment>.<metric>.*``), ``tables/pooled``,
``tables/per_collection``, the forest of the collections, the description and ``report.html``. The names
are :mod:`abcompare.tracking.layout`'s.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from abcompare.core.vocabulary import VERDICT_CODE
from abcompare.outcome.markdown import view_markdown
from abcompare.outcome.view import ExperimentView, PooledView
from abcompare.tracking.artifacts import collections_files
from abcompare.tracking.layout import (
    CODE_VERSION_TAG,
    COMPARISON_TAG,
    CONFIG_HASH_TAG,
    N_QUERIES_METRIC,
    NOTE_TAG,
    PER_COLLECTION_FIELDS,
    PER_COLLECTION_TABLE,
    POOLED_DETAIL_FIELDS,
    POOLED_FIELDS,
    POOLED_TABLE,
    PRIMARY_METRIC_TAG,
    ROLE_COLLECTIONS,
    ROLE_TAG,
    SUMMARY_FILE,
    TIMINGS_FILE,
    VERDICT_TAG,
    VIEW_TAG,
    collection_key,
    pooled_detail_key,
    pooled_key,
    run_url,
    verdict_tag,
    view_url,
)
from abcompare.tracking.logger import headline_view, non_inferiority_figures
from abcompare.tracking.run_logger import Nesting, RunLogger, header_width, stamped
from abcompare.tracking.store import UNRECORDED, ui_command
from abcompare.tracking.writer import Command, RecordedRuns

if TYPE_CHECKING:
    from abcompare.config import ExperimentConfig
    from abcompare.data.dataset import Dataset
    from abcompare.outcome.results import ComparisonResult

#: The top run's handle in its writer session.
TOP = "collections"


class TopRunLogger(RunLogger):
    """Logs the top run of a comparison across collections: the runner calls :meth:`start`, hands
    :meth:`nested` to each collection's logger, then :meth:`log_collections` and :meth:`finish` (or
    :meth:`abort` when something failed: the collections that finished stay FINISHED, the top run is
    marked FAILED or KILLED)."""

    #: The store, the experiment and the top run's id, once started.
    where: RecordedRuns | None = None

    def run_name(self) -> str:
        """The top run's name: the comparison's name and when it started."""
        base = self.config.tracking.run_name or self.config.name
        return stamped(base, self.started)

    def start(self, datasets: Mapping[str, Dataset] | None = None) -> None:
        """Open the store and the top run, log the settings, the config and each collection's query set
        (``datasets``, by collection: MLflow dataset inputs, as a one-collection comparison logs its own),
        and wait until the run exists (its id is what each collection's comparison is nested under)."""
        cfg = self.config
        tags = {
            CONFIG_HASH_TAG: self.config_hash,
            CODE_VERSION_TAG: self.version,
            COMPARISON_TAG: cfg.name,
            ROLE_TAG: ROLE_COLLECTIONS,
            PRIMARY_METRIC_TAG: cfg.evaluation.primary_metric,
            **cfg.tracking.tags,
        }
        self._open_run(TOP, self.run_name(), tags, collections_settings(cfg))
        for name, dataset in (datasets or {}).items():
            self._log_queries(TOP, str(name), dataset, dataset.fingerprint())
        self._send(Command.FLUSH, TOP)  # the settings are visible while the collections run
        self.where = self.session.report()

    def top_run_id(self) -> str | None:
        """The top run's id (None before :meth:`start`, or when the server stopped answering)."""
        run_id = self.where.run_ids.get(TOP) if self.where is not None else None
        return None if run_id in (None, UNRECORDED) else run_id

    def nested(self, collection: str) -> Nesting | None:
        """What collection ``collection``'s logger needs to nest its comparison under the top run
        (``open_logger(..., nested=...)``); call after :meth:`start`."""
        run_id = self.top_run_id()
        if run_id is None:
            return None
        link = self.links({TOP: run_id}).get(TOP)
        return Nesting(run_id, collection, (self.run_name(), link) if link else None)

    def links(self, run_ids: Mapping[str, str]) -> dict[str, str]:
        """Each run's page in MLflow's UI (``workflowType=machine_learning``, as every link abcompare
        writes), by the same keys."""

        if self.where is None:
            return {}
        _, base = ui_command(self.where.uri)
        return {key: run_url(base, self.where.experiment_id, run_id) for key, run_id in run_ids.items()}

    def log_collections(
        self,
        result: ComparisonResult,
        run_ids: Mapping[str, str],
        files: Mapping[str, str | Path] | None = None,
    ) -> None:
        """The top run: the pooled figures and each collection's, the two tables, the verdict tags, the
        description, and the files (``tracking.artifacts.collections_files``: the forest, ``report.html``;
        made here from the view when ``files`` is None). The view is built once, here."""

        view = PooledView.from_result(result, self.links(run_ids))
        if files is None:
            files = collections_files(result.config, view)
        sentences = dict(view.sentences)
        markdown = view_markdown(ExperimentView.shown(pooled=view))
        tags = {NOTE_TAG: markdown, VERDICT_TAG: "\n".join(sentences.values())}
        tags.update({verdict_tag(name): sentence for name, sentence in sentences.items()})
        self._send(Command.LOG, TOP, metrics=collections_metrics(result), tags=tags)
        # the stored form: each table's settings in its parquet file's metadata (pandas writes ``attrs``
        # there), where load_comparison reads them back
        pooled, per_collection = (
            result.pooled.reset_index(drop=True),
            result.per_collection.reset_index(drop=True),
        )
        pooled.attrs, per_collection.attrs = result.pooled_settings.to_dict(), result.family.to_dict()
        self._send(Command.TABLE, TOP, POOLED_TABLE, pooled)
        self._send(Command.TABLE, TOP, PER_COLLECTION_TABLE, per_collection)
        self._send(Command.TEXT, TOP, SUMMARY_FILE, markdown)
        self._send(Command.JSON, TOP, TIMINGS_FILE, {"timings_seconds": result.timings})
        self._send_files(TOP, files)
        self._send(Command.EXPERIMENT_TAGS, {VIEW_TAG: json.dumps(collections_view(result))})

    def finish(self) -> RecordedRuns:
        """Close the top run (each collection's closed with its own comparison) and wait until everything
        is written; where it was recorded. :meth:`abort` closes it FAILED or KILLED; the collections' runs
        are their own loggers' to close."""
        return self._finish([TOP])


# ------------------------------------------------------------------------------------------ what is logged
def collections_settings(config: ExperimentConfig) -> dict[str, Any]:
    """The top run's params: the collections (their names, and each one's dataset settings), the pooling,
    the significance and evaluation settings and the treatments."""
    dumped = config.model_dump(mode="json")
    entries = dumped.get("datasets") or []
    return {
        "collections": ",".join(str(entry.get("name")) for entry in entries),
        "datasets": {
            str(entry.get("name")): {k: v for k, v in entry.items() if k != "name"} for entry in entries
        },
        "evaluation": dumped.get("evaluation", {}),
        "significance": dumped.get("significance", {}),
        "treatments": ",".join(config.treatments),
    }


def _code(verdict: object) -> float:
    return float(VERDICT_CODE.get(str(verdict), 0))


def collections_metrics(result: ComparisonResult) -> dict[str, float]:
    """The top run's metrics in the order its run page lists them: each treatment's pooled figures (with
    a margin, its pooled non-inferiority test's), then its meta-analysis and counts, then each collection's
    primary figures; as computed (every digit)."""

    metrics: dict[str, float] = {}
    pooled = result.pooled
    for row in pooled.to_dict(orient="records"):
        treatment, metric = str(row["treatment"]), str(row["metric"])
        for field in POOLED_FIELDS:
            value = _code(row[field]) if field == "verdict" else row[field]
            metrics[pooled_key(treatment, metric, field)] = float(value)
        for field, value in non_inferiority_figures(row).items():  # with a margin: the pooled test's
            metrics[pooled_key(treatment, metric, field)] = value
    for row in pooled.to_dict(orient="records"):
        treatment, metric = str(row["treatment"]), str(row["metric"])
        for field in POOLED_DETAIL_FIELDS:
            if field in row and row[field] is not None and not pd.isna(row[field]):
                metrics[pooled_detail_key(treatment, metric, field)] = float(row[field])
    for row in result.per_collection.to_dict(orient="records"):
        for field in PER_COLLECTION_FIELDS:
            value = _code(row[field]) if field == "verdict" else row[field]
            key = collection_key(str(row["collection"]), str(row["treatment"]), str(row["metric"]), field)
            metrics[key] = float(value)
    metrics[N_QUERIES_METRIC] = float(sum(c.n_queries for c in result.collections.values()))
    metrics.update(result.pooled_judge.metrics() if result.pooled_judge is not None else {})
    return metrics


def collections_view(result: ComparisonResult) -> dict[str, Any]:
    """The runs table's headline columns (``logger.headline_view``, which each collection's comparison
    also sets) with the pooled delta and adjusted p of the first treatments first: the top run's row
    answers the question, the nested rows keep their own columns."""

    first = next(iter(result.collections.values()))
    view = headline_view(first)
    treatments = [str(name) for name in result.pooled["treatment"]][:3]
    keys = [pooled_key(t, result.primary_metric, f) for t in treatments for f in ("delta", "p_adjusted")]
    columns = [f"metrics.`{key}`" for key in keys]
    view["selectedColumns"] = columns + view["selectedColumns"]
    order = view["columnOrder"]
    view["columnOrder"] = order[:1] + columns + order[1:]
    view["columnWidths"].update(
        {column: header_width(key) for column, key in zip(columns, keys, strict=True)}
    )
    return view


def top_run_lines(recorded: RecordedRuns, top: TopRunLogger, run_ids: Mapping[str, str]) -> list[str]:
    """Where a comparison across collections was recorded, for the console: the top run, each collection's
    run, the top run's page and how to open the runs view."""

    parent = recorded.run_ids.get(TOP)
    links = top.links({TOP: parent, **run_ids})
    lines = [
        f"MLflow: experiment {top.config.tracking.experiment}, run {top.run_name()} "
        f"({parent}), one nested comparison per collection"
    ]
    lines += [f"  {name}: {run_id}" for name, run_id in run_ids.items()]
    lines.append(f"  the whole comparison: {links.get(TOP, '')}")
    command, base = ui_command(recorded.uri)
    url = view_url(base, recorded.experiment_id)
    lines.append(f"View: {command}, then open {url}" if command else f"View: {url}")
    return lines
