"""Helpers for the execution tests: the lean sweep they share, and what "the same numbers" means."""

from __future__ import annotations

from support.cli import NO_TIMING

# the shipped 24-point sweep, kept lean: fewer resamples, no MLflow (the backends never touch it), no latency
# timing pass (the driver times the variants on either backend; these runs compare the numbers, not costs).
# SWEEP_SETTINGS are the ``--set`` values (the session's ``comparison`` runs them untimed by default).
SWEEP_SETTINGS = ("significance.n_resamples=200", "tracking.enabled=false")
SWEEP_OVERRIDES = [*(arg for setting in SWEEP_SETTINGS for arg in ("--set", setting)), *NO_TIMING]


#: A grid row's cost figures that say how the embedding cache was found (encoded here, or read from it), not
#: what the backend computed: the run that encodes first and the one after it differ in them.
CACHE_STATE = ("embeddings", "encoded_chunks", "encode_ratio")


def without_timings(row: dict) -> dict:
    """A grid row without its measured seconds and its cache state (sizes stay)."""

    def measured(key: str) -> bool:
        name = key.removeprefix("efficiency.")
        return key.startswith("efficiency.") and ("seconds" in name or name in CACHE_STATE)

    return {k: v for k, v in row.items() if not measured(k)}


def same_numbers(a: dict, b: dict) -> None:
    """Two ``--json`` results agree on everything but timings and the embedding cache's state: means,
    per-query derived statistics, p-values, alignment and judgments (efficiency holds measured seconds, so
    only its sizes must agree)."""
    for key in ("n_queries", "primary_metric", "verdicts", "means", "comparison", "alignment", "judged"):
        assert a[key] == b[key], key
    grids = [[without_timings(row) for row in result["grid"] or []] for result in (a, b)]
    assert grids[0] == grids[1], "grid"
    assert a["efficiency"].keys() == b["efficiency"].keys()
    for name, cost in a["efficiency"].items():
        assert cost["efficiency.index_bytes"] == b["efficiency"][name]["efficiency.index_bytes"], name
