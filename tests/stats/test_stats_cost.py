"""The cost stage's rules, on hand-made samples: a variant's robust latency, the one "within the noise"
rule, ratios to the control, the noise-aware front and the cost table's states (cached is not 0 s)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from abcompare.stats.cost import (
    CACHED,
    ENCODED,
    NO_EMBEDDINGS,
    PARTLY_CACHED,
    cost_table,
    embeddings_state,
    latency_ratio,
    noise_aware_front,
    on_front,
    summarise_latency,
    within_noise,
)


def test_a_variants_latency_is_the_mean_of_each_querys_median_over_the_rounds() -> None:
    # 3 rounds x 4 queries; round 2 was slowed (a busy machine): each query's median outvotes it
    samples = np.array([[1.0, 2.0, 3.0, 4.0], [9.0, 9.0, 9.0, 9.0], [1.2, 2.2, 3.2, 4.4]])
    latency = summarise_latency(samples)
    # per-query medians by hand: 1.2, 2.2, 3.2, 4.4 -> mean 2.75
    assert latency.mean == pytest.approx(2.75)
    # p95 of [1.2, 2.2, 3.2, 4.4] by linear interpolation: position 0.95 * 3 = 2.85 -> 3.2 + 0.85 * 1.2
    assert latency.p95 == pytest.approx(3.2 + 0.85 * 1.2)
    # the rounds' means are 2.5, 9.0, 2.75: their quartiles (linear) are 2.625 and 5.875
    assert (latency.low, latency.high) == (pytest.approx(2.625), pytest.approx(5.875))
    assert (latency.rounds, latency.queries) == (3, 4)


@pytest.mark.parametrize(
    ("low", "high", "expected"),
    [
        (0.95, 1.05, True),  # straddles 1
        (1.05, 1.30, True),  # reaches into the band [1/1.1, 1.1]
        (1.11, 1.30, False),  # wholly above 1.1: slower beyond the noise
        (0.50, 0.90, False),  # wholly below 1/1.1 = 0.909...: faster beyond the noise
        (0.50, 0.91, True),
    ],
)
def test_the_one_rule_two_latencies_differ_only_outside_the_noise_floors_band(low, high, expected) -> None:
    assert within_noise(low, high, 0.1) is expected


def test_with_no_floor_only_an_interval_excluding_one_is_a_difference() -> None:
    assert within_noise(0.99, 1.01, 0.0) and not within_noise(1.01, 1.02, 0.0)


def test_equal_samples_are_within_the_noise_and_twice_the_work_is_not() -> None:
    rng = np.random.default_rng(1)
    base = rng.uniform(1e-3, 2e-3, size=(5, 30))
    same = latency_ratio(base, base.copy())
    assert (same.ratio, same.low, same.high, same.within_noise) == (1.0, 1.0, 1.0, True)
    double = latency_ratio(2 * base, base)
    assert double.ratio == pytest.approx(2.0) and not double.within_noise
    assert double.low == pytest.approx(2.0) and double.high == pytest.approx(2.0)
    half = latency_ratio(base, 2 * base)
    assert half.ratio == pytest.approx(0.5) and not half.within_noise


def test_samples_of_different_queries_cannot_be_paired() -> None:
    with pytest.raises(ValueError, match="paired"):
        latency_ratio(np.ones((3, 4)), np.ones((3, 5)))


def test_equal_work_dominates_nothing_so_every_point_is_on_the_front() -> None:
    rng = np.random.default_rng(2)
    base = rng.uniform(1e-3, 2e-3, size=(5, 20))
    # the same work, timed with a few percent of jitter: whichever came out fastest is not "better"
    samples = [base * rng.uniform(0.97, 1.03, size=base.shape) for _ in range(4)]
    assert noise_aware_front(samples, [0.01, 0.02, 0.03, 0.00]) == [0, 1, 2, 3]


def test_a_point_faster_beyond_the_noise_and_as_good_dominates() -> None:
    base = np.full((3, 10), 1e-3)
    # 0: fast and good; 1: 5x slower and worse (dominated by 0); 2: 5x slower but best (on the front);
    # 3: as slow as 0 within the noise and worse (0 is not faster beyond the noise: on the front)
    samples = [base, 5 * base, 5 * base, 1.05 * base]
    assert noise_aware_front(samples, [0.02, 0.01, 0.05, 0.0]) == [0, 2, 3]


def test_on_front_marks_grid_rows_and_never_an_untimed_candidate() -> None:
    import pandas as pd

    grid = pd.DataFrame({"candidate": ["a", "b", "c"], "delta": [0.02, 0.01, 0.05]})
    base = np.full((3, 10), 1e-3)
    assert on_front(grid, {"a": base, "b": 5 * base}) == [True, False, False]


@pytest.mark.parametrize(
    ("embedded", "encoded", "state"),
    [(0, 0, NO_EMBEDDINGS), (10, 10, ENCODED), (10, 0, CACHED), (10, 4, PARTLY_CACHED)],
)
def test_embeddings_are_encoded_cached_partly_cached_or_none(embedded, encoded, state) -> None:
    assert embeddings_state(embedded, encoded) == state


def _build(index_bytes: float, model_bytes: float, embedded: float, encoded: float, rate: float | None):
    values = {
        "efficiency.index_bytes": index_bytes,
        "efficiency.model_bytes": model_bytes,
        "efficiency.embedded_chunks": embedded,
        "efficiency.encoded_chunks": encoded,
    }
    if rate is not None:
        values["efficiency.encode_seconds_per_1000_chunks"] = rate
    return values


def test_the_cost_table_gives_each_treatment_its_ratios_to_the_control() -> None:
    base = np.full((3, 8), 2e-3)
    efficiency = {
        "control": _build(1000, 90e6, 200, 200, 40.0),
        "small": _build(1000, 30e6, 200, 200, 10.0),
        "cached": _build(500, 90e6, 200, 0, None),
        "file": {},  # a run file: nothing retrieved, so a row that says where it came from, and no figure
        "python": {"efficiency.seconds_per_query": 0.01},  # a Python retriever: its one call's seconds
    }
    samples = {"control": base, "small": base / 4, "cached": base * 1.02}
    table = cost_table(efficiency, samples, noise_floor=0.1, given={"python": "python"})
    assert list(table.index) == ["control", "small", "cached", "file", "python"]
    assert list(table["source"]) == ["retrieved"] * 3 + ["run file", "python"]
    assert table.loc["python", "seconds_per_query"] == 0.01 and math.isnan(table.loc["python", "query_ratio"])
    assert table.loc[["file"]].drop(columns=["source", "embeddings"]).isna().all(axis=None)
    small, cached = table.loc["small"], table.loc["cached"]
    assert small["encode_ratio"] == pytest.approx(0.25) and small["model_ratio"] == pytest.approx(1 / 3)
    assert small["index_ratio"] == 1.0 and small["query_ratio"] == pytest.approx(0.25)
    assert small["query_within_noise"] == 0.0
    assert small["seconds_per_query"] == pytest.approx(5e-4) and small["embeddings"] == ENCODED
    # cached vectors were never timed: no rate and no ratio, never 0 s
    assert cached["embeddings"] == CACHED and math.isnan(cached["encode_seconds_per_1000_chunks"])
    assert math.isnan(cached["encode_ratio"]) and cached["query_within_noise"] == 1.0
    assert cached["index_ratio"] == 0.5
    assert math.isnan(table.loc["control", "query_ratio"])
