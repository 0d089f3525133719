"""Fixtures of the runner's tests: the real servers, and the README's main command run once (the main job's
``--json`` run, the sweep, the session's comparisons and the embedding cache they share are the whole
suite's, in tests/conftest.py)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from support.comparisons import Comparisons
from support.readme import readme_run_command
from support.servers import mlflow_server, mlflow_server_on_postgres, postgres  # noqa: F401 - shared fixtures


@pytest.fixture(scope="session")
def readme_main_job(comparison: Comparisons, example_run) -> tuple[Path, subprocess.CompletedProcess]:
    """The README's main command (``abcompare run configs/rrf_vs_dbsf.yaml``) run verbatim, its output
    piped, from a folder laid out like the checkout, once per session (``comparison.command``): the folder
    and the finished command. It prints the console's report, which the ``--json`` run (``example_run``)
    does not, so it is a run of its own; it runs after that one, so its vectors come from the embedding
    cache and its cost line says the encoding was cached. The tests of the command, of the README's sample
    output and of the console's cost line read this one run."""
    command = readme_run_command()
    assert command[:2] == ["abcompare", "run"], command
    run = comparison.command(command[1:], name="readme-main-job", checkout_layout=True)
    return run.workdir, run.process
