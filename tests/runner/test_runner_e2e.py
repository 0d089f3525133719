"""End to end: the main job runs, logs everything to MLflow, and is deterministic."""

from __future__ import annotations

import json
from pathlib import Path

from mlflow import MlflowClient
from support.cli import NO_TIMING, REPO, invoke_cli


def client_for(workdir: Path) -> MlflowClient:
    return MlflowClient(tracking_uri=f"sqlite:///{workdir / 'mlflow.db'}")


def test_main_job_exits_zero_and_prints_json(example_run) -> None:
    workdir, result = example_run
    assert result.returncode == 0, result.stderr[-3000:]
    payload = json.loads(result.stdout)
    assert payload["dataset"] == "hr-docs"
    assert payload["n_queries"] == 124
    rows = payload["comparison"]
    assert {row["treatment"] for row in rows} == {"dbsf"}
    assert [row["metric"] for row in rows if row["role"] == "primary"] == ["ndcg@10"]
    assert sorted(row["metric"] for row in rows) == sorted(
        f"{m}@{k}" for m in ("precision", "recall", "f1", "mrr", "ndcg") for k in (1, 5, 10)
    )
    # RRF and DBSF fuse the same two lists: on this query set they cannot be told apart
    assert {row["verdict"] for row in rows} == {"no significant difference"}
    for row in rows:
        assert 0 < row["p_adjusted"] <= 1
        assert row["ci_low"] <= row["delta"] <= row["ci_high"]
    assert (workdir / "mlflow.db").exists()
    assert (workdir / "mlruns").is_dir()


def test_mlflow_holds_a_parent_and_one_child_per_variant(example_run) -> None:
    workdir, result = example_run
    payload = json.loads(result.stdout)
    client = client_for(workdir)
    experiment = client.get_experiment_by_name("abcompare-hr-docs")
    assert experiment is not None
    assert experiment.artifact_location.startswith("file://")
    runs = client.search_runs([experiment.experiment_id])
    assert all(run.info.status == "FINISHED" for run in runs)
    parent = client.get_run(payload["parent_run_id"])
    children = [r for r in runs if r.data.tags.get("mlflow.parentRunId") == parent.info.run_id]
    assert sorted(r.data.tags["abcompare.role"] for r in children) == ["control", "treatment"]
    for tag in ("abcompare.config_hash", "abcompare.dataset_hash", "abcompare.code_version"):
        assert parent.data.tags[tag]
    assert "| treatment | metric       | role      |" in parent.data.tags["mlflow.note.content"]
    assert "_vs_control.dbsf.ndcg_at_10.delta" in parent.data.metrics
    assert "_vs_control.dbsf.ndcg_at_10.p_adjusted" in parent.data.metrics
    assert parent.inputs.dataset_inputs, "the query set is logged as an MLflow dataset input"
    parent_artifacts = {a.path for a in client.list_artifacts(parent.info.run_id, "tables")}
    assert {
        "tables/comparison.parquet",
        "tables/comparison.json",
        "tables/queries.parquet",
    } <= parent_artifacts
    for child in children:
        mean = payload["means"][child.data.tags["abcompare.variant"]]["ndcg@10"]
        assert child.data.metrics["ndcg_at_10"] == mean  # as computed: every digit (==, not approx)
        assert child.data.params["fusion.method"] in {"rrf", "dbsf"}
        root = {a.path for a in client.list_artifacts(child.info.run_id)}
        assert "metric_distribution.svg" in root  # at the root: the compare view shows it side by side
        tables = {a.path for a in client.list_artifacts(child.info.run_id, "tables")}
        assert {"tables/per_query_metrics.parquet", "tables/per_query_metrics.json"} <= tables
        run_files = {a.path for a in client.list_artifacts(child.info.run_id, "run")}
        assert {"run/run.trec", "run/hits.parquet"} <= run_files


def test_same_config_and_seed_give_identical_numbers(
    example_run, tmp_path: Path, embedding_cache: Path
) -> None:
    _, first = example_run
    # without the latency timing pass, which no number compared here depends on
    args = ["run", str(REPO / "configs" / "rrf_vs_dbsf.yaml"), "--json", *NO_TIMING]
    second = invoke_cli(args, tmp_path, embedding_cache)
    assert second.returncode == 0, second.stderr[-3000:]
    a, b = json.loads(first.stdout), json.loads(second.stdout)
    assert a["means"] == b["means"]
    columns = (
        "delta",
        "ci_low",
        "ci_high",
        "p_t",
        "p_permutation",
        "p_bootstrap",
        "p_wilcoxon",
        "p_adjusted",
    )
    for row_a, row_b in zip(a["comparison"], b["comparison"], strict=True):
        for column in columns:
            assert row_a[column] == row_b[column], (row_a["metric"], column)
