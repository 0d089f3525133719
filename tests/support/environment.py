"""What the test machine must provide, and what a test does when it does not."""

from __future__ import annotations

import os

import pytest


def in_ci() -> bool:
    """Whether this is a CI run (``CI=true``), where every shared resource must be present."""
    return os.environ.get("CI", "").lower() in {"1", "true", "yes"}


def skip_unless_ci(reason: str) -> None:
    """Skip for lack of something the test needs, except in CI, where it must be there: the trec_eval and
    collection oracles can then never silently stop running."""
    if in_ci():
        pytest.fail(f"{reason} (CI must provide it)")
    pytest.skip(reason)
