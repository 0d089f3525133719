"""Shared fixtures: where the shared collections live (``../shared`` beside the checkout, also in CI)."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.environment import skip_unless_ci

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DIR = (REPO_ROOT.parent / "shared").resolve()


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """The shared folder with real collections and trec_eval's conformance data; skip when absent (fail in
    CI)."""
    if not SHARED_DIR.is_dir():
        skip_unless_ci(f"shared data folder not found at {SHARED_DIR}")
    return SHARED_DIR


@pytest.fixture(scope="session")
def datasets_dir(shared_dir: Path) -> Path:
    return shared_dir / "datasets"


@pytest.fixture(scope="session")
def trec_conformance_dir(shared_dir: Path) -> Path:
    return shared_dir / "conformance" / "trec_eval"
