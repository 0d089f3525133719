"""Fixtures for end-to-end runs: a real `abcompare run` in a temporary working directory."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def cli_env(cache_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MLFLOW_")}
    env["ABCOMPARE_CACHE_DIR"] = str(cache_dir)
    env["MLFLOW_SUPPRESS_PRINTING_URL_TO_STDOUT"] = "true"
    env["HF_HUB_OFFLINE"] = "1"
    return env


def run_cli(args: list[str], cwd: Path, cache_dir: Path, timeout: float = 600) -> subprocess.CompletedProcess:
    """Run the installed console script (the very command a user types) and capture its output."""
    exe = Path(sys.executable).with_name("abcompare")
    command = [str(exe)] if exe.exists() else [sys.executable, "-m", "abcompare.cli"]
    return subprocess.run(
        command + args, cwd=cwd, env=cli_env(cache_dir), capture_output=True, text=True, timeout=timeout
    )


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
