"""Helpers for the execution tests: the lean sweep they share, and what "the same numbers" means."""

from __future__ import annotations

from support.cli import NO_TIMING

# the shipped 24-point sweep, kept lean: fewer resamples, no MLflow (the backends never touch it), no latency
# timing pass (the driver times the variants on either backend; these runs compare the numbers, not costs)
SWEEP_OVERRIDES = ["--set", "significance.n_resamples=200", "--set", "tracking.enabled=false", *NO_TIMING]


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
