"""Fixtures for end-to-end runs: a real `abcompare run` in a temporary working directory."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from e2e_support import REPO, run_cli
from support.servers import mlflow_server, mlflow_server_on_postgres, postgres  # noqa: F401 - shared fixtures


@pytest.fixture(scope="session")
def embedding_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One embedding cache for the whole session, so only the first run encodes the example corpus."""
    return tmp_path_factory.mktemp("embedding-cache")


@pytest.fixture(scope="session")
def example_run(tmp_path_factory: pytest.TempPathFactory, embedding_cache: Path):
    """`abcompare run configs/rrf_vs_dbsf.yaml --json` in a fresh folder with the default SQLite store."""
    workdir = tmp_path_factory.mktemp("example-run")
    result = run_cli(["run", str(REPO / "configs" / "rrf_vs_dbsf.yaml"), "--json"], workdir, embedding_cache)
    return workdir, result


@pytest.fixture(scope="session")
def sweep_run(tmp_path_factory: pytest.TempPathFactory, embedding_cache: Path):
    """`abcompare run configs/fusion_sweep.yaml --json` as shipped (B = 10,000, the README's figures), once
    per session: its folder (with ``mlflow.db``), the parsed JSON and stderr."""
    workdir = tmp_path_factory.mktemp("sweep")
    result = run_cli(["run", str(REPO / "configs" / "fusion_sweep.yaml"), "--json"], workdir, embedding_cache)
    assert result.returncode == 0, result.stderr[-3000:]
    return workdir, json.loads(result.stdout), result.stderr
