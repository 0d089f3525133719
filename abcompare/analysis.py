"""Load a logged comparison back from MLflow as pandas frames, for notebooks and scripts.

``load_comparison()`` finds the latest comparison in ``./mlflow.db`` (or the run you name) and returns
its summary table, per-query metrics per variant, hits and query texts, with helpers for per-query deltas.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from abcompare.errors import TrackingError
from abcompare.tracking import resolve_tracking_uri


@dataclass
class LoadedComparison:
    """A comparison read back from MLflow: everything a per-query analysis needs."""

    parent_run_id: str
    experiment_id: str
    name: str
    summary: pd.DataFrame
    runs: pd.DataFrame
    per_query: dict[str, pd.DataFrame]
    queries: pd.DataFrame
    hits: dict[str, pd.DataFrame] = field(default_factory=dict)

    @property
    def treatments(self) -> list[str]:
        return [name for name in self.per_query if name != "control"]

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

    def top_hits(self, variant: str, query_id: str, n: int = 5) -> pd.DataFrame:
        """The first ``n`` hits a variant returned for a query (key, score and a content preview)."""
        run = self.hits.get(variant)
        if run is None:
            raise KeyError(f"no hits were loaded for {variant!r}")
        rows = run[run["query_id"].astype(str) == str(query_id)].sort_values("rank").head(n)
        columns = [c for c in ("rank", "key", "score", "content") if c in rows.columns]
        rows = rows[columns].copy()
        if "content" in rows:
            rows["content"] = rows["content"].fillna("").str.slice(0, 160)
        return rows.set_index("rank")


def latest_comparison_id(tracking_uri: str | None = None, experiment: str | None = None) -> str:
    """The run id of the most recent finished comparison (optionally within one experiment)."""
    from mlflow import MlflowClient

    client = MlflowClient(tracking_uri=resolve_tracking_uri(tracking_uri))
    if experiment is not None:
        found = client.get_experiment_by_name(experiment)
        if found is None:
            raise TrackingError(f"no experiment named {experiment!r}", field="experiment")
        experiment_ids = [found.experiment_id]
    else:
        experiment_ids = [e.experiment_id for e in client.search_experiments()]
    runs = client.search_runs(
        experiment_ids,
        filter_string="tags.`abcompare.role` = 'comparison' and attributes.status = 'FINISHED'",
        order_by=["attributes.start_time DESC"],
        max_results=1,
    )
    if not runs:
        raise TrackingError("no finished abcompare comparison found", hint="run `abcompare run CONFIG` first")
    return runs[0].info.run_id


def _read_table(client, run_id: str, name: str, folder: Path) -> pd.DataFrame:
    local = client.download_artifacts(run_id, f"tables/{name}.parquet", str(folder))
    return pd.read_parquet(local)


def load_comparison(
    parent_run_id: str | None = None,
    *,
    experiment: str | None = None,
    tracking_uri: str | None = None,
    with_hits: bool = True,
) -> LoadedComparison:
    """Read a comparison (default: the latest finished one) and its variant runs back from MLflow."""
    import tempfile

    import mlflow
    from mlflow import MlflowClient

    uri = resolve_tracking_uri(tracking_uri)
    client = MlflowClient(tracking_uri=uri)
    run_id = parent_run_id or latest_comparison_id(uri, experiment)
    parent = client.get_run(run_id)
    experiment_id = parent.info.experiment_id
    mlflow.set_tracking_uri(uri)
    children = mlflow.search_runs(
        experiment_ids=[experiment_id],
        filter_string=f"tags.`mlflow.parentRunId` = '{run_id}'",
        order_by=["attributes.start_time ASC"],
    )
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        summary = _read_table(client, run_id, "comparison", folder).reset_index()
        queries = _read_table(client, run_id, "queries", folder)
        per_query: dict[str, pd.DataFrame] = {}
        hits: dict[str, pd.DataFrame] = {}
        roles = children.set_index("run_id")["tags.abcompare.variant"].to_dict()
        # control first, then treatments in the order they ran
        ordered = sorted(roles.items(), key=lambda item: item[1] != "control")
        for child_id, variant in ordered:
            sub = folder / child_id
            sub.mkdir()
            per_query[variant] = _read_table(client, child_id, "per_query_metrics", sub)
            if with_hits:
                local = client.download_artifacts(child_id, "run/hits.parquet", str(sub))
                hits[variant] = pd.read_parquet(local)
    if "control" not in per_query:
        raise TrackingError(
            f"run {run_id} has no control variant run", hint="is it an abcompare comparison run?"
        )
    for frame in per_query.values():
        frame.index = frame.index.astype(str)
    queries.index = queries.index.astype(str)
    return LoadedComparison(
        parent_run_id=run_id,
        experiment_id=experiment_id,
        name=parent.data.tags.get("abcompare.comparison", parent.info.run_name),
        summary=summary,
        runs=children,
        per_query=per_query,
        queries=queries,
        hits=hits,
    )


def ecdf(values: pd.Series | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sorted values and their empirical cumulative probabilities, for an ECDF plot of deltas."""
    x = np.sort(np.asarray(values, dtype=float))
    return x, np.arange(1, len(x) + 1) / len(x)
