"""Load a logged comparison back from MLflow as pandas frames, for notebooks, scripts and the report.

``load_comparison()`` finds the store (``MLFLOW_TRACKING_URI``, else the nearest ``mlflow.db`` in this folder
or above it: never creating one), the latest comparison in it (or the run you name), and returns its summary
table, per-query metrics per variant, hits (with each hit's judgment grade) and query texts, with helpers
for per-query deltas. What is read where is :mod:`abcompare.tracking.layout`'s, the names the writer used.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
import pandas as pd

from abcompare.core.errors import TrackingError
from abcompare.core.settings import ComparisonSettings, FamilySettings, PooledSettings
from abcompare.core.vocabulary import relevance_mark
from abcompare.outcome.html import page
from abcompare.outcome.markdown import view_markdown
from abcompare.outcome.rows import primary_first
from abcompare.outcome.sentences import ATTRIBUTION_PARTS, attribution_row, attribution_sentence
from abcompare.outcome.view import ComparisonView, ExperimentView, PooledView
from abcompare.tracking.layout import (
    ATTRIBUTION_PER_QUERY_TABLE,
    ATTRIBUTION_TABLE,
    COLLECTION_TAG,
    COMPARISON_TABLE,
    COMPARISON_TAG,
    COST_TABLE,
    DATASET_TAG,
    GRID_TABLE,
    HITS_FILE,
    PARENT_RUN_TAG,
    PER_COLLECTION_TABLE,
    PER_QUERY_TABLE,
    POOLED_TABLE,
    PRIMARY_METRIC_TAG,
    QUERIES_TABLE,
    RESULT_FILE,
    ROLE_COLLECTIONS,
    ROLE_COMPARISON,
    ROLE_CONTROL,
    ROLE_TAG,
    SUMMARY_FILE,
    VARIANT_TAG,
    table_file,
    verdict_tag,
)
from abcompare.tracking.store import DEFAULT_DB, quiet_mlflow, sqlite_path

if TYPE_CHECKING:
    from mlflow import MlflowClient
    from mlflow.entities import Run

#: How many folders above the working directory :func:`find_store` looks for ``mlflow.db``.
SEARCH_LEVELS = 8

#: A stored table's settings type (``core.settings``).
Stored = TypeVar("Stored", PooledSettings, FamilySettings)


@dataclass(kw_only=True)
class LoadedRun:
    """What every comparison read back from MLflow has, one collection's or the top run across several:
    its run, where it is, the runs nested under it and what it was logged with."""

    parent_run_id: str  # a comparison's parent run, or the top run across collections
    experiment_id: str
    name: str
    runs: pd.DataFrame  # the runs nested under it (variants or collections), as mlflow.search_runs has them
    tracking_uri: str = ""
    extras: dict[str, Any] = field(default_factory=dict)  # its result.json (the view's values)
    params: dict[str, str] = field(default_factory=dict)  # its params (the settings)
    tags: dict[str, str] = field(default_factory=dict)  # its tags

    @property
    def source(self) -> str:
        """Where it was read from, for a page's footer."""
        return f"run {self.parent_run_id} in {self.tracking_uri}"

    def table(self, name: str) -> pd.DataFrame | None:
        """Any table the run logged under ``tables/`` (``judge_labels``: every (query, hit) a ``judge:``
        section graded, with people's grade and the label's source), read on demand; None when the run has
        no such table."""
        import tempfile

        client, _ = _client(self.tracking_uri)
        if table_file(name) not in _artifact_paths(client, self.parent_run_id, "tables"):
            return None
        with tempfile.TemporaryDirectory() as tmp:
            return _read_table(client, self.parent_run_id, name, Path(tmp))


@dataclass(kw_only=True)
class LoadedCollection(LoadedRun):
    """One collection's comparison read back from MLflow (its parent run and variant runs): everything a
    per-query analysis needs."""

    summary: pd.DataFrame
    #: How ``summary`` was tested, read from the stored table's metadata (a run of any age).
    settings: ComparisonSettings
    per_query: dict[str, pd.DataFrame]
    queries: pd.DataFrame
    hits: dict[str, pd.DataFrame] = field(default_factory=dict)
    grid: pd.DataFrame | None = None  # a sweep's candidates, best first
    cost: pd.DataFrame | None = None  # what each variant costs (indexed by variant), each treatment's ratios
    #: Where each treatment's change comes from (``tables/attribution``: per treatment and metric) and the
    #: same per query (``tables/attribution_per_query``); None for comparisons logged without them.
    attribution_table: pd.DataFrame | None = None
    attribution_per_query: pd.DataFrame | None = None

    @property
    def treatments(self) -> list[str]:
        return [name for name in self.per_query if name != "control"]

    def view(self) -> ComparisonView:
        """What its part of ``report.html`` shows (:func:`loaded_view`)."""
        return loaded_view(self)

    @property
    def metrics(self) -> list[str]:
        return [c for c in self.per_query["control"].columns if "@" in c and "count" not in c]

    def deltas(self, treatment: str, metric: str) -> pd.Series:
        """Per-query ``treatment - control`` for one metric, indexed by query id."""
        control = self.per_query["control"][metric]
        return (self.per_query[treatment][metric] - control).rename(f"delta {metric}")

    def paired(self, treatment: str, metric: str) -> pd.DataFrame:
        """Control, treatment and delta per query, with the query text (and group, when present)."""
        frame = pd.DataFrame(
            {
                "control": self.per_query["control"][metric],
                "treatment": self.per_query[treatment][metric],
            }
        )
        frame["delta"] = frame["treatment"] - frame["control"]
        return frame.join(self.queries, how="left")

    def largest_changes(self, treatment: str, metric: str, n: int = 5) -> tuple[pd.DataFrame, pd.DataFrame]:
        """The ``n`` biggest wins and the ``n`` biggest losses of the treatment, with the query text."""
        frame = self.paired(treatment, metric)
        ordered = frame.sort_values(["delta"], kind="mergesort")
        wins = ordered[ordered["delta"] > 0].iloc[::-1].head(n)
        losses = ordered[ordered["delta"] < 0].head(n)
        return wins, losses

    def win_tie_loss(self, treatment: str) -> pd.DataFrame:
        """Per metric: how many queries the treatment won, tied and lost."""
        rows = []
        for metric in self.metrics:
            d = self.deltas(treatment, metric).to_numpy()
            rows.append(
                {
                    "metric": metric,
                    "wins": int((d > 0).sum()),
                    "ties": int((d == 0).sum()),
                    "losses": int((d < 0).sum()),
                }
            )
        return pd.DataFrame(rows).set_index("metric")

    def by_group(self, treatment: str, metric: str, group: str = "group") -> pd.DataFrame:
        """Mean control, treatment and delta per query group (e.g. keyword vs semantic queries)."""
        frame = self.paired(treatment, metric)
        if group not in frame.columns:
            raise KeyError(f"queries have no {group!r} column; columns are {list(self.queries.columns)}")
        table = frame.groupby(group)[["control", "treatment", "delta"]].mean()
        table["n_queries"] = frame.groupby(group).size()
        return table

    def attribution(self, treatment: str, metric: str) -> pd.DataFrame:
        """Where the treatment's change on ``metric`` comes from: one row per part (``new``, ``lost``,
        ``reorder``, ``ideal``) with its share of the mean delta (``delta``; the rows add up to the
        comparison's delta) and what it counts (``count``: relevant hits for nDCG, precision and recall,
        queries for MRR and F1, as ``unit`` says); ``attrs`` holds the delta, the unjudged newcomers and the
        sentence the console printed."""

        row = attribution_row(self.attribution_table, treatment, metric)
        if row is None:
            raise KeyError(f"no attribution of {treatment!r} on {metric!r} was logged with this comparison")
        counts = [int(row[f"{part}_count"]) if f"{part}_count" in row else 0 for part in ATTRIBUTION_PARTS]
        frame = pd.DataFrame(
            {"delta": [float(row[part]) for part in ATTRIBUTION_PARTS], "count": counts, "unit": row["unit"]},
            index=pd.Index(ATTRIBUTION_PARTS, name="part"),
        )
        frame.attrs.update(
            delta=float(row["delta"]),
            unjudged_newcomers=int(row["unjudged_newcomers"]),
            sentence=attribution_sentence(self.attribution_table, treatment, metric),
        )
        return frame

    def attribution_by_query(self, treatment: str, metric: str) -> pd.DataFrame:
        """The treatment's per-query delta on ``metric`` split into its parts, with the counts, the class of
        an MRR or F1 query's change (``change``) and the query text, indexed by query id."""
        table = self.attribution_per_query
        if table is None:
            raise KeyError("no per-query attribution was logged with this comparison")
        rows = table[(table["treatment"] == treatment) & (table["metric"] == metric)]
        rows = rows.drop(columns=["treatment", "metric"]).set_index("query_id")
        rows.index = rows.index.astype(str)
        return rows.join(self.queries, how="left")

    def top_hits(self, variant: str, query_id: str, n: int = 5) -> pd.DataFrame:
        """The first ``n`` hits a variant returned for a query: key, score, ``relevant`` (✓ annotated
        relevant at the comparison's threshold, ○ judged not relevant, blank: not judged) and a preview."""
        run = self.hits.get(variant)
        if run is None:
            raise KeyError(f"no hits were loaded for {variant!r}")
        rows = run[run["query_id"].astype(str) == str(query_id)].sort_values("rank").head(n).copy()
        threshold = float(self.extras.get("relevance_threshold", 1))
        if "grade" in rows:
            rows["relevant"] = [relevance_mark(grade, threshold) for grade in rows["grade"].astype(float)]
        columns = [c for c in ("rank", "relevant", "key", "score", "content") if c in rows.columns]
        rows = rows[columns]
        if "content" in rows:
            rows["content"] = rows["content"].fillna("").str.slice(0, 160)
        return rows.set_index("rank")


@dataclass(kw_only=True)
class LoadedComparison(LoadedRun):
    """An experiment read back from MLflow: its 1..n collections' comparisons and, across several, the
    pooled test and the per-collection table of its top run.

    A comparison's parent run holds its one collection (read at once); a top run's collections are its
    nested runs, each read when asked for (:meth:`collection`). With one collection its comparison's fields
    and helpers read through (``loaded.summary``, ``loaded.deltas(...)``), as ``ComparisonResult``'s do."""

    collection_run_ids: dict[str, str]  # collection -> its comparison's parent run, in config order
    pooled: pd.DataFrame | None = None  # one row per treatment (``stats.pooled.pooled_comparison``)
    per_collection: pd.DataFrame | None = None  # one row per (collection, treatment)
    #: How the two were made, read from the stored tables' metadata; None without a pooled test.
    pooled_settings: PooledSettings | None = None
    family: FamilySettings | None = None
    summary_markdown: str = ""  # summary.md: the run's description
    with_hits: bool = True  # whether :meth:`collection` reads each variant's hits
    #: The collections this run holds itself (a comparison's parent run: its one), read with it; a top run
    #: holds none, its collections are nested runs read on demand into ``_loaded``.
    held: dict[str, LoadedCollection] = field(default_factory=dict, repr=False)
    _loaded: dict[str, LoadedCollection] = field(default_factory=dict, repr=False)

    def __getattr__(self, name: str) -> Any:
        """One collection's comparison read through: ``loaded.summary`` is its statistics table."""
        held = self.__dict__.get("held") or {}
        if len(held) == 1 and not name.startswith("_"):
            return getattr(next(iter(held.values())), name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    @property
    def collections(self) -> list[str]:
        """The collections' names, in config order."""
        return list(self.collection_run_ids)

    @property
    def treatments(self) -> list[str]:
        """The treatments, in the order they ran (the first collection's)."""
        return self.collection(self.collections[0]).treatments

    def view(self) -> ExperimentView:
        """What its ``report.html`` shows: the pooled section across several collections, and the
        collections this run holds (:func:`loaded_pooled_view`, :func:`loaded_view`)."""
        views = {name: loaded_view(held) for name, held in self.held.items()}
        return ExperimentView(views, loaded_pooled_view(self))

    def collection(self, name: str) -> LoadedCollection:
        """One collection's comparison, as :func:`load_comparison` reads a single one (read once)."""
        if name not in self.collection_run_ids:
            raise KeyError(f"no collection {name!r} in this comparison; it has {', '.join(self.collections)}")
        if name not in self.held and name not in self._loaded:
            loaded = load_comparison(
                self.collection_run_ids[name], tracking_uri=self.tracking_uri, with_hits=self.with_hits
            )
            self._loaded[name] = loaded.collection(name)
        return self.held.get(name) or self._loaded[name]

    def paired_by_collection(self, treatment: str, metric: str) -> pd.DataFrame:
        """Every collection's per-query control, treatment and delta on ``metric`` with the query text, one
        table indexed by (collection, query id): the pooled test's inputs, for a notebook."""
        frames = {name: self.collection(name).paired(treatment, metric) for name in self.collections}
        return pd.concat(frames, names=["collection", "query_id"])


# ------------------------------------------------------------------------------------------ the store
def find_store(start: Path | None = None) -> tuple[str, list[str]]:
    """The tracking URI to read: ``$MLFLOW_TRACKING_URI``, else the nearest ``mlflow.db`` in ``start`` (the
    working directory) or a folder above it, where ``abcompare run`` left it. Returns the URI and the places
    looked at; raises a ``TrackingError`` naming them when there is none (a store is never created here)."""
    uri = os.environ.get("MLFLOW_TRACKING_URI")
    if uri:
        return uri, ["$MLFLOW_TRACKING_URI"]
    folder = (start or Path.cwd()).resolve()
    looked: list[str] = []
    for candidate in [folder, *folder.parents][: SEARCH_LEVELS + 1]:
        path = candidate / DEFAULT_DB
        looked.append(str(path))
        if path.is_file():
            return f"sqlite:///{path.as_posix()}", looked
    raise TrackingError(
        "no MLflow store found: MLFLOW_TRACKING_URI is not set and there is no mlflow.db in "
        + ", ".join(looked[:3])
        + (f" or {len(looked) - 3} folders above" if len(looked) > 3 else ""),
        hint="run `abcompare run CONFIG` first, or set MLFLOW_TRACKING_URI / pass tracking_uri=",
    )


def _existing_store(uri: str) -> str:
    """A local SQLite store must exist: MLflow would silently create an empty one."""
    if uri.startswith("sqlite:///"):
        path = sqlite_path(uri)
        if not path.is_file():
            raise TrackingError(f"no MLflow store at {path}", hint="run `abcompare run CONFIG` first")
    return uri


def _client(tracking_uri: str | None) -> tuple[MlflowClient, str]:
    from mlflow import MlflowClient
    from mlflow.exceptions import MlflowException

    uri = _existing_store(tracking_uri) if tracking_uri else find_store()[0]
    try:
        return MlflowClient(tracking_uri=uri), uri
    except MlflowException as exc:  # a URI the user typed that MLflow cannot use (an unknown scheme)
        first = str(exc.message).strip().splitlines()[0]
        raise TrackingError(f"cannot use the MLflow store {uri}: {first}", field="tracking_uri") from None


def latest_comparison_id(tracking_uri: str | None = None, experiment: str | None = None) -> str:
    """The run id of the most recent finished comparison (optionally within one experiment): a
    single-collection comparison's parent run or a comparison across collections' top run (never one
    collection's run nested in it)."""
    client, uri = _client(tracking_uri)
    if experiment is not None:
        found = client.get_experiment_by_name(experiment)
        if found is None:
            raise TrackingError(f"no experiment named {experiment!r} in {uri}", field="experiment")
        experiment_ids = [found.experiment_id]
    else:
        experiment_ids = [e.experiment_id for e in client.search_experiments()]
    runs = []  # the latest finished comparison that is not one collection's of a larger one
    for role, where in ((ROLE_COMPARISON, f" and tags.`{COLLECTION_TAG}` IS NULL"), (ROLE_COLLECTIONS, "")):
        runs += client.search_runs(
            experiment_ids,
            filter_string=f"tags.`{ROLE_TAG}` = '{role}' and attributes.status = 'FINISHED'{where}",
            order_by=["attributes.start_time DESC"],
            max_results=1,
        )
    runs.sort(key=lambda run: run.info.start_time, reverse=True)
    if not runs:
        raise TrackingError(
            f"no finished abcompare comparison found in {uri}", hint="run `abcompare run CONFIG` first"
        )
    return runs[0].info.run_id


def _read_table(client: MlflowClient, run_id: str, name: str, folder: Path) -> pd.DataFrame:
    local = client.download_artifacts(run_id, table_file(name, "parquet"), str(folder))
    return pd.read_parquet(local)


def _artifact_paths(client: MlflowClient, run_id: str, folder: str | None = None) -> set[str]:
    return {item.path for item in client.list_artifacts(run_id, folder)}


def _comparison_run(client: MlflowClient, run_id: str, uri: str) -> Run:
    """The parent run of a comparison, or a located error: no such run, or a run that is not one."""
    from mlflow.exceptions import MlflowException

    try:
        run = client.get_run(run_id)
    except MlflowException as exc:
        if exc.error_code != "RESOURCE_DOES_NOT_EXIST" and "not found" not in str(exc.message):
            raise
        raise TrackingError(
            f"no run {run_id} in {uri}", field="RUN_ID", hint="give a comparison's parent run id, or none"
        ) from None
    if run.info.lifecycle_stage == "deleted":  # `latest` skips deleted runs; an id names one on purpose
        raise TrackingError(
            f"run {run_id} in {uri} is deleted (mlflow runs delete, or the UI): no comparison to report",
            field="RUN_ID",
            hint="restore it first (mlflow runs restore --run-id ID), or give a live comparison's id",
        )
    role = run.data.tags.get(ROLE_TAG)
    if role not in (ROLE_COMPARISON, ROLE_COLLECTIONS):
        raise TrackingError(
            f"run {run_id} in {uri} is not an abcompare comparison (role: {role or 'none'})",
            field="RUN_ID",
            hint="give the parent run's id: the one tagged abcompare.role=comparison (or collections)",
        )
    return run


def load_comparison(
    parent_run_id: str | None = None,
    *,
    experiment: str | None = None,
    tracking_uri: str | None = None,
    with_hits: bool = True,
) -> LoadedComparison:
    """Read a comparison (default: the latest finished one) back from MLflow: a comparison's parent run
    (its one collection read at once) or a comparison across collections' top run (the pooled tables;
    :meth:`~LoadedComparison.collection` reads each collection's comparison)."""

    quiet_mlflow()
    client, uri = _client(tracking_uri)
    run_id = parent_run_id or latest_comparison_id(uri, experiment)
    return _load(client, _comparison_run(client, run_id, uri), uri, with_hits=with_hits)


def _nested_runs(client: MlflowClient, parent: Run) -> list[Run]:
    """The runs nested under ``parent`` (a comparison's variants, or the collections' comparisons), in the
    order they started."""
    return client.search_runs(
        [parent.info.experiment_id],
        filter_string=f"tags.`{PARENT_RUN_TAG}` = '{parent.info.run_id}'",
        order_by=["attributes.start_time ASC"],
        max_results=5000,
    )


def _run_fields(
    client: MlflowClient, parent: Run, nested: list[Run], uri: str, folder: Path
) -> dict[str, Any]:
    """:class:`LoadedRun`'s fields, read off the run, its nested runs and its ``result.json``."""
    run_id = parent.info.run_id
    extras: dict[str, Any] = {}
    if RESULT_FILE in _artifact_paths(client, run_id):
        extras = json.loads(Path(client.download_artifacts(run_id, RESULT_FILE, str(folder))).read_text())
    return {
        "parent_run_id": run_id,
        "experiment_id": parent.info.experiment_id,
        "name": parent.data.tags.get(COMPARISON_TAG, parent.info.run_name),
        "runs": _runs_frame(nested),
        "tracking_uri": uri,
        "extras": extras,
        "params": dict(parent.data.params),
        "tags": dict(parent.data.tags),
    }


def _load(client: MlflowClient, parent: Run, uri: str, *, with_hits: bool) -> LoadedComparison:
    """A comparison's run and the runs nested under it: a comparison's parent run holds its one collection
    (its variants nested), a top run the pooled tables (each collection's comparison nested)."""
    import tempfile

    run_id = parent.info.run_id
    nested = _nested_runs(client, parent)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        fields = _run_fields(client, parent, nested, uri, folder)
        names = _artifact_paths(client, run_id, "tables")
        pooled, per_collection = (
            _read_table(client, run_id, table, folder) if table_file(table) in names else None
            for table in (POOLED_TABLE, PER_COLLECTION_TABLE)
        )
        summary = ""
        if SUMMARY_FILE in _artifact_paths(client, run_id):
            summary = Path(client.download_artifacts(run_id, SUMMARY_FILE, str(folder))).read_text()
        held = {}
        if parent.data.tags.get(ROLE_TAG) == ROLE_COMPARISON:  # not a top run: it holds its one collection
            name = parent.data.tags.get(COLLECTION_TAG) or parent.data.tags.get(DATASET_TAG, "")
            held[name] = _load_collection(client, parent, nested, fields, folder, with_hits=with_hits)
    run_ids = {name: run_id for name in held} or _collection_runs(nested, per_collection)
    return LoadedComparison(
        **fields, collection_run_ids=run_ids, pooled=pooled, per_collection=per_collection,
        summary_markdown=summary, with_hits=with_hits, held=held,
        # the settings as stored: each parquet file's metadata, which pandas reads into ``attrs``
        pooled_settings=_stored_settings(pooled, PooledSettings),
        family=_stored_settings(per_collection, FamilySettings),
    )  # fmt: skip


def _stored_settings(table: pd.DataFrame | None, kind: type[Stored]) -> Stored | None:
    """A stored table's settings, as ``kind`` (its parquet file's metadata, which pandas reads into
    ``attrs``); None without the table."""
    return kind.from_dict(table.attrs) if table is not None else None


def _collection_runs(nested: list[Run], per_collection: pd.DataFrame | None) -> dict[str, str]:
    """A top run's collections: each one's parent run, in config order (the per-collection table's)."""
    found = {run.data.tags.get(COLLECTION_TAG, run.info.run_name): run.info.run_id for run in nested}
    order = [] if per_collection is None else list(dict.fromkeys(per_collection["collection"].astype(str)))
    run_ids = {name: found[name] for name in order if name in found}
    run_ids.update({name: rid for name, rid in found.items() if name not in run_ids})  # a failed pooling's
    return run_ids


def _load_collection(
    client: MlflowClient, parent: Run, children: list[Run], fields: dict[str, Any], folder: Path, *,
    with_hits: bool,
) -> LoadedCollection:  # fmt: skip
    """One collection's comparison: its parent run's tables and each variant run's."""
    run_id = parent.info.run_id
    stored = _read_table(client, run_id, COMPARISON_TABLE, folder)
    # the settings as stored: the parquet file's metadata, which pandas reads into ``attrs`` (left on the
    # table, as notebooks read it)
    settings = ComparisonSettings.from_dict(stored.attrs)
    summary = primary_first(stored.reset_index()).reset_index(drop=True)  # the one reading order, from 0
    queries = _read_table(client, run_id, QUERIES_TABLE, folder)
    names = _artifact_paths(client, run_id, "tables")
    grid, cost, attribution, attribution_per_query = (
        _read_table(client, run_id, table, folder) if table_file(table) in names else None
        for table in (GRID_TABLE, COST_TABLE, ATTRIBUTION_TABLE, ATTRIBUTION_PER_QUERY_TABLE)
    )
    per_query: dict[str, pd.DataFrame] = {}
    hits: dict[str, pd.DataFrame] = {}
    variants = {run.info.run_id: run.data.tags.get(VARIANT_TAG, run.info.run_name) for run in children}
    # control first, then treatments in the order they ran
    for child_id, variant in sorted(variants.items(), key=lambda item: item[1] != ROLE_CONTROL):
        sub = folder / child_id
        sub.mkdir()
        per_query[variant] = _read_table(client, child_id, PER_QUERY_TABLE, sub)
        if with_hits:
            hits[variant] = pd.read_parquet(client.download_artifacts(child_id, HITS_FILE, str(sub)))
    if ROLE_CONTROL not in per_query:
        raise TrackingError(
            f"run {run_id} has no control variant run", hint="is it an abcompare comparison run?"
        )
    for frame in per_query.values():
        frame.index = frame.index.astype(str)
    queries.index = queries.index.astype(str)
    return LoadedCollection(
        **fields, summary=summary, settings=settings, per_query=per_query, queries=queries, hits=hits,
        grid=grid, cost=cost, attribution_table=attribution, attribution_per_query=attribution_per_query,
    )  # fmt: skip


def _runs_frame(runs: list[Run]) -> pd.DataFrame:
    """The variant runs as ``mlflow.search_runs`` has them: run_id, status, metrics.*, params.*, tags.*."""
    rows = []
    for run in runs:
        row: dict[str, Any] = {
            "run_id": run.info.run_id,
            "run_name": run.info.run_name,
            "status": run.info.status,
        }
        row.update({f"metrics.{k}": v for k, v in run.data.metrics.items()})
        row.update({f"params.{k}": v for k, v in run.data.params.items()})
        row.update({f"tags.{k}": v for k, v in run.data.tags.items()})
        rows.append(row)
    return pd.DataFrame(rows)


def ecdf(values: pd.Series | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sorted values and their empirical cumulative probabilities, for an ECDF plot of deltas."""
    x = np.sort(np.asarray(values, dtype=float))
    return x, np.arange(1, len(x) + 1) / len(x)


def logged_report(
    parent_run_id: str | None = None, *, tracking_uri: str | None = None, experiment: str | None = None
) -> tuple[str, LoadedComparison]:
    """``report.html`` for a comparison already in MLflow (default: the latest), read back through
    :func:`abcompare.tracking.reader.load_comparison`; the page and the loaded comparison."""

    loaded = load_comparison(parent_run_id, experiment=experiment, tracking_uri=tracking_uri)
    return page(loaded.view()), loaded


def logged_markdown(
    parent_run_id: str | None = None, *, tracking_uri: str | None = None, experiment: str | None = None
) -> tuple[str, LoadedComparison]:
    """The Markdown job summary (:func:`abcompare.outcome.markdown.view_markdown`) of a comparison already
    in MLflow (default: the latest), read back without its hits; the text and the loaded comparison."""

    loaded = load_comparison(parent_run_id, experiment=experiment, tracking_uri=tracking_uri, with_hits=False)
    return view_markdown(loaded.view()), loaded


def loaded_view(loaded: LoadedCollection) -> ComparisonView:
    """The view ``report.html`` shows, from a comparison read back from MLflow: its ``result.json``
    (:meth:`ComparisonView.to_json`) and its tables; older comparisons, without ``result.json``, get what
    their tables, params and tags say."""

    params = loaded.params
    said = {
        "name": loaded.name,
        "dataset": loaded.tags.get(DATASET_TAG, ""),
        "n_queries": len(loaded.queries),
        "level": params.get("dataset.level", ""),
        "convention": params.get("evaluation.convention", ""),
        "relevance_threshold": params.get("evaluation.relevance_threshold", 1),
    }
    return ComparisonView.from_json(
        {**said, **loaded.extras}, comparison=loaded.summary, settings=loaded.settings,
        per_query=loaded.per_query,
        queries=loaded.queries, hits=loaded.hits, grid=loaded.grid, cost=loaded.cost,
        attribution=loaded.attribution_table, attribution_per_query=loaded.attribution_per_query,
        source=loaded.source,
    )  # fmt: skip


def loaded_pooled_view(loaded: LoadedComparison) -> PooledView | None:
    """The top run's view across collections, read back from MLflow: the sentences and links it was
    logged with (``result.json``), the tables as logged; None when the run holds no pooled test."""

    if loaded.pooled is None or loaded.per_collection is None:
        return None
    settings, family = loaded.pooled_settings, loaded.family
    treatments = [str(name) for name in loaded.pooled["treatment"]]
    said = {
        "name": loaded.name,
        "primary_metric": loaded.tags.get(PRIMARY_METRIC_TAG, ""),
        "weighting": loaded.params.get("significance.pooling", "collection"),
        "sentences": {name: loaded.tags.get(verdict_tag(name), "") for name in treatments},
    }
    return PooledView.from_json(
        {**said, **{k: v for k, v in loaded.extras.items() if v}}, pooled=loaded.pooled,
        per_collection=loaded.per_collection, source=loaded.source, settings=settings, family=family,
    )  # fmt: skip
