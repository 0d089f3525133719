"""Fixtures for the execution backends: one in-process Ray for the whole session (starting one costs
seconds) and the local backend's numbers on the fusion sweep as the reference."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from execution_support import SWEEP_OVERRIDES
from support.cli import REPO, run_cli
from support.ray_local import ray_in_this_process


@pytest.fixture(scope="session")
def ray_in_process():
    """``ray.init(address="local", num_cpus=2)`` in the test process, on the loopback interface, with its
    own short temp folder (Ray's socket paths must stay under 108 characters); shut down at the end."""
    yield from ray_in_this_process()


@pytest.fixture(scope="session")
def local_sweep(tmp_path_factory: pytest.TempPathFactory, embedding_cache: Path) -> dict:
    """``abcompare run configs/fusion_sweep.yaml --json`` on the local backend (the reference numbers)."""
    workdir = tmp_path_factory.mktemp("local-sweep")
    args = ["run", str(REPO / "configs" / "fusion_sweep.yaml"), "--json", *SWEEP_OVERRIDES]
    result = run_cli(args, workdir, embedding_cache)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout)
