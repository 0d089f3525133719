"""A real `mlflow server` on 127.0.0.1 (single worker, job execution off): the comparison logs over HTTP."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mlflow import MlflowClient
from support.cli import NO_TIMING, REPO, run_cli


@pytest.mark.server
def test_comparison_logs_to_a_real_tracking_server(
    mlflow_server: str, tmp_path: Path, embedding_cache: Path
) -> None:
    args = [
        "run", str(REPO / "configs" / "rrf_vs_dbsf.yaml"), "--json",
        "--set", f"tracking.uri={mlflow_server}", "--set", "significance.n_resamples=1000",
        *NO_TIMING,  # what is logged over HTTP, not what it cost
    ]  # fmt: skip
    result = run_cli(args, tmp_path, embedding_cache)
    assert result.returncode == 0, result.stderr[-3000:]
    payload = json.loads(result.stdout)
    assert payload["tracking_uri"] == mlflow_server
    assert not (tmp_path / "mlflow.db").exists(), "nothing was written to the local default store"
    client = MlflowClient(tracking_uri=mlflow_server)
    parent = client.get_run(payload["parent_run_id"])
    assert parent.info.status == "FINISHED"
    assert "_vs_control.dbsf.ndcg_at_10.delta" in parent.data.metrics
    for variant, run_id in payload["variant_run_ids"].items():
        child = client.get_run(run_id)
        assert child.data.tags["mlflow.parentRunId"] == parent.info.run_id
        assert child.data.metrics["ndcg_at_10"] == payload["means"][variant]["ndcg@10"]  # as computed
        artifacts = {a.path for a in client.list_artifacts(run_id, "tables")}
        assert "tables/per_query_metrics.parquet" in artifacts
