"""A real `mlflow server` on 127.0.0.1 (single worker, job execution off): the comparison logs over HTTP."""

from __future__ import annotations

import pytest
from mlflow import MlflowClient


@pytest.mark.server
def test_comparison_logs_to_a_real_tracking_server(comparison) -> None:
    """The main job logged to the session's tracking server (``comparison(..., store="server")``, the run
    the browser's pages and the determinism test also read), without the timing pass: what is logged over
    HTTP, not what it cost."""
    run = comparison("rrf_vs_dbsf", store="server")
    payload = run.payload
    assert payload["tracking_uri"] == run.tracking_uri and run.tracking_uri.startswith("http://127.0.0.1:")
    assert not (run.workdir / "mlflow.db").exists(), "nothing was written to the local default store"
    client = MlflowClient(tracking_uri=run.tracking_uri)
    parent = client.get_run(payload["parent_run_id"])
    assert parent.info.status == "FINISHED"
    assert "_vs_control.dbsf.ndcg_at_10.delta" in parent.data.metrics
    for variant, run_id in payload["variant_run_ids"].items():
        child = client.get_run(run_id)
        assert child.data.tags["mlflow.parentRunId"] == parent.info.run_id
        assert child.data.metrics["ndcg_at_10"] == payload["means"][variant]["ndcg@10"]  # as computed
        artifacts = {a.path for a in client.list_artifacts(run_id, "tables")}
        assert "tables/per_query_metrics.parquet" in artifacts
