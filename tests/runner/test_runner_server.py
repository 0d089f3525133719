"""A real `mlflow server` on 127.0.0.1 (single worker, job execution off): the comparison logs over HTTP."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from e2e_support import REPO, run_cli
from mlflow import MlflowClient


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def mlflow_server(tmp_path_factory: pytest.TempPathFactory):
    folder = tmp_path_factory.mktemp("mlflow-server")
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("MLFLOW_")}
    env["MLFLOW_SERVER_ENABLE_JOB_EXECUTION"] = "false"
    command = [
        sys.executable, "-m", "mlflow", "server",
        "--host", "127.0.0.1", "--port", str(port), "--workers", "1",
        "--backend-store-uri", f"sqlite:///{folder / 'server.db'}",
        "--artifacts-destination", str(folder / "artifacts"),
    ]  # fmt: skip
    log = open(folder / "server.log", "w")  # noqa: SIM115 - closed in teardown
    process = subprocess.Popen(command, cwd=folder, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"mlflow server exited: {(folder / 'server.log').read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(f"{url}/health", timeout=2) as response:
                if response.status == 200:
                    break
        except OSError:
            time.sleep(0.5)
    else:
        process.kill()
        pytest.fail("mlflow server did not come up within 120 s")
    yield url
    process.terminate()
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
    log.close()


@pytest.mark.server
def test_comparison_logs_to_a_real_tracking_server(
    mlflow_server: str, tmp_path: Path, embedding_cache: Path
) -> None:
    args = [
        "run", str(REPO / "configs" / "rrf_vs_dbsf.yaml"), "--json",
        "--set", f"tracking.uri={mlflow_server}", "--set", "significance.n_resamples=1000",
    ]  # fmt: skip
    result = run_cli(args, tmp_path, embedding_cache)
    assert result.returncode == 0, result.stderr[-3000:]
    payload = json.loads(result.stdout)
    assert payload["tracking_uri"] == mlflow_server
    assert not (tmp_path / "mlflow.db").exists(), "nothing was written to the local default store"
    client = MlflowClient(tracking_uri=mlflow_server)
    parent = client.get_run(payload["parent_run_id"])
    assert parent.info.status == "FINISHED"
    assert "dbsf.ndcg_at_10.delta" in parent.data.metrics
    for variant, run_id in payload["variant_run_ids"].items():
        child = client.get_run(run_id)
        assert child.data.tags["mlflow.parentRunId"] == parent.info.run_id
        assert child.data.metrics["ndcg_at_10"] == payload["means"][variant]["ndcg@10"]
        artifacts = {a.path for a in client.list_artifacts(run_id, "tables")}
        assert "tables/per_query_metrics.parquet" in artifacts
