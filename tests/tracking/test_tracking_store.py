"""The MLflow layer: safe keys, flattened params, fast failure on a dead server, no run left RUNNING."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from abcompare.core.errors import TrackingError
from abcompare.tracking.lifecycle import closing_runs
from abcompare.tracking.store import check_reachable, flatten, mlflow_key, open_tracker


def test_mlflow_keys_replace_the_at_sign() -> None:
    assert mlflow_key("ndcg@10") == "ndcg_at_10"
    assert mlflow_key("dbsf.recall@5.p_adjusted") == "dbsf.recall_at_5.p_adjusted"
    assert mlflow_key("a:b") == "a_b"


def test_flatten_nested_settings_into_dotted_params() -> None:
    flat = flatten({"fusion": {"method": "rrf", "k": 60}, "retrievers": {"bm25": {"k1": 1.5}}, "top_k": 20})
    assert flat == {"fusion.method": "rrf", "fusion.k": "60", "retrievers.bm25.k1": "1.5", "top_k": "20"}


def test_an_unreachable_server_is_a_tracking_error_naming_the_uri() -> None:
    with pytest.raises(
        TrackingError,
        match=r"tracking\.uri: cannot reach the MLflow tracking server at http://127\.0\.0\.1:9",
    ):
        check_reachable("http://127.0.0.1:9", timeout=3)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One SQLite store for this module (creating its tables takes seconds); one experiment per test."""
    return tmp_path_factory.mktemp("store")


def tracker_in(folder: Path, experiment: str):
    return open_tracker(f"sqlite:///{folder / 'mlflow.db'}", experiment, (folder / experiment).as_uri())


def statuses(tracker) -> set[str]:
    runs = tracker.client.search_runs([tracker.experiment_id])
    return {run.info.status for run in runs}


def test_an_error_marks_every_open_run_failed(store: Path) -> None:
    tracker = tracker_in(store, "errors")
    with pytest.raises(ValueError), closing_runs(tracker.end_all):
        parent = tracker.start_run("parent", {})
        tracker.start_run("child", {}, parent_id=parent)
        raise ValueError("boom")
    assert statuses(tracker) == {"FAILED"}


def test_ctrl_c_marks_every_open_run_killed(store: Path) -> None:
    tracker = tracker_in(store, "ctrl-c")
    with pytest.raises(KeyboardInterrupt), closing_runs(tracker.end_all):
        parent = tracker.start_run("parent", {})
        tracker.start_run("child", {}, parent_id=parent)
        raise KeyboardInterrupt
    assert statuses(tracker) == {"KILLED"}


def test_finished_runs_stay_finished_when_a_later_step_fails(store: Path) -> None:
    tracker = tracker_in(store, "later-failure")
    with pytest.raises(RuntimeError), closing_runs(tracker.end_all):
        parent = tracker.start_run("parent", {})
        child = tracker.start_run("child", {}, parent_id=parent)
        tracker.end_run(child)
        raise RuntimeError("stats failed")
    runs = {r.info.run_name: r.info.status for r in tracker.client.search_runs([tracker.experiment_id])}
    assert runs == {"parent": "FAILED", "child": "FINISHED"}


def test_tables_are_logged_as_parquet_and_as_mlflow_table_view(store: Path, tmp_path: Path) -> None:
    from abcompare.tracking.writer import RunWriter

    tracker = tracker_in(store, "tables")
    writer = RunWriter(tmp_path / "staging")  # what every comparison writes through
    writer.tracker = tracker
    writer.start_run("r", "r", {})
    run_id = writer.run_ids["r"]
    frame = pd.DataFrame({"ndcg@10": [0.5, 1.0]}, index=pd.Index(["q1", "q2"], name="query_id"))
    writer.table("r", "per_query_metrics", frame)
    writer.log("r", metrics={"ndcg@10": 0.75, "missing": float("nan")})
    writer.end_run("r")
    artifacts = {a.path for a in tracker.client.list_artifacts(run_id, "tables")}
    assert artifacts == {"tables/per_query_metrics.parquet", "tables/per_query_metrics.json"}
    run = tracker.client.get_run(run_id)
    assert run.data.metrics == {"ndcg_at_10": 0.75}
    local = tracker.client.download_artifacts(run_id, "tables/per_query_metrics.parquet", str(tmp_path))
    pd.testing.assert_frame_equal(pd.read_parquet(local), frame)


def test_a_deleted_experiment_is_a_clear_error(store: Path) -> None:
    tracker = tracker_in(store, "deleted")
    tracker.client.delete_experiment(tracker.experiment_id)
    with pytest.raises(TrackingError, match="deleted"):
        tracker_in(store, "deleted")
