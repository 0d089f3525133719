"""Fixtures for the execution backends: the local backend's numbers on the fusion sweep as the reference (the
in-process Ray these tests share is tests/conftest.py's ``ray_in_process``)."""

from __future__ import annotations

import pytest
from execution_support import SWEEP_SETTINGS


@pytest.fixture(scope="session")
def local_sweep(comparison) -> dict:
    """``abcompare run configs/fusion_sweep.yaml --json`` with ``SWEEP_OVERRIDES`` on the local backend (the
    reference numbers; the session's one run of it)."""
    return comparison("fusion_sweep", *SWEEP_SETTINGS).payload
