"""Helpers for the execution tests: the CLI as a user runs it, and what "the same numbers" means."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from support.cli import cli_command

REPO = Path(__file__).resolve().parents[2]
# the shipped 24-point sweep, kept lean: fewer resamples, no MLflow (the backends never touch it)
SWEEP_OVERRIDES = ["--set", "significance.n_resamples=200", "--set", "tracking.enabled=false"]


def cli_env(cache_dir: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MLFLOW_", "RAY_"))}
    env.update(ABCOMPARE_CACHE_DIR=str(cache_dir), MLFLOW_SUPPRESS_PRINTING_URL_TO_STDOUT="true",
               HF_HUB_OFFLINE="1", **extra)  # fmt: skip
    return env


def run_cli(
    args: list[str], cwd: Path, cache_dir: Path, timeout: float = 600, **env: str
) -> subprocess.CompletedProcess:
    """Run the installed console script and capture its output."""
    return subprocess.run(
        cli_command() + args, cwd=cwd, env=cli_env(cache_dir, **env), capture_output=True, text=True,
        timeout=timeout,
    )  # fmt: skip


def without_timings(row: dict) -> dict:
    """A grid row without its measured seconds (sizes stay)."""
    return {k: v for k, v in row.items() if not (k.startswith("efficiency.") and "seconds" in k)}


def same_numbers(a: dict, b: dict) -> None:
    """Two ``--json`` results agree on everything but timings: means, per-query derived statistics,
    p-values, alignment and judgments (efficiency holds measured seconds, so only its sizes must agree)."""
    for key in ("n_queries", "primary_metric", "verdicts", "means", "comparison", "alignment", "judged"):
        assert a[key] == b[key], key
    grids = [[without_timings(row) for row in result["grid"] or []] for result in (a, b)]
    assert grids[0] == grids[1], "grid"
    assert a["efficiency"].keys() == b["efficiency"].keys()
    for name, cost in a["efficiency"].items():
        assert cost["efficiency.index_bytes"] == b["efficiency"][name]["efficiency.index_bytes"], name
