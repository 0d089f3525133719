"""Fixtures for the execution backends: one in-process Ray for the tests of this folder (starting one costs
seconds; it is stopped when the worker leaves the folder, so it holds no CPUs and no memory for the rest of
the session on its xdist worker) and the local backend's numbers on the fusion sweep as the reference."""

from __future__ import annotations

import pytest
from execution_support import SWEEP_SETTINGS
from support.ray_local import ray_in_this_process


@pytest.fixture(scope="package")
def ray_in_process():
    """``ray.init(address="local", num_cpus=2)`` in the test process, on the loopback interface, with its
    own short temp folder (Ray's socket paths must stay under 108 characters); shut down at the end."""
    yield from ray_in_this_process()


@pytest.fixture(scope="session")
def local_sweep(comparison) -> dict:
    """``abcompare run configs/fusion_sweep.yaml --json`` with ``SWEEP_OVERRIDES`` on the local backend (the
    reference numbers; the session's one run of it)."""
    return comparison("fusion_sweep", *SWEEP_SETTINGS).payload
