"""Fixtures of the runner's tests: the real servers, and the README's main command run once (the main job's
``--json`` run, the sweep and the embedding cache they share are the whole suite's, in tests/conftest.py)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from support.cli import REPO, run_cli
from support.readme import readme_run_command
from support.servers import mlflow_server, mlflow_server_on_postgres, postgres  # noqa: F401 - shared fixtures


@pytest.fixture(scope="session")
def readme_main_job(
    tmp_path_factory: pytest.TempPathFactory, embedding_cache: Path
) -> tuple[Path, subprocess.CompletedProcess]:
    """The README's main command (``abcompare run configs/rrf_vs_dbsf.yaml``) run verbatim, its output
    piped, from a folder laid out like the checkout, once per session: the folder and the finished command.
    The test of the command and the test of the README's sample output read this one run."""
    workdir = tmp_path_factory.mktemp("readme-main-job")
    (workdir / "configs").symlink_to(REPO / "configs")
    command = readme_run_command()
    assert command[:2] == ["abcompare", "run"], command
    return workdir, run_cli(command[1:], workdir, embedding_cache)
