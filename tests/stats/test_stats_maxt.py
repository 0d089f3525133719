"""Westfall-Young max-T: equal to a brute-force enumeration, and family-wise error at alpha in simulation.

The simulations draw fresh data and fresh sign vectors per replicate, so the number of replicates with
any false rejection is a binomial count; bounds are its central 99.9% range under the nominal rate.
"""

from __future__ import annotations

import itertools
import re

import numpy as np
import pytest
from scipy import stats
from stats_synthetic import METRICS, paired_runs
from support.readme import README, as_printed, readme_match

from abcompare.stats.correction import holm
from abcompare.stats.maxt import max_t_sign_flip
from abcompare.stats.permutation import sign_flip_test


def brute_force(d: np.ndarray, families: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """Textbook single-step max-T over all 2^n sign vectors, one vector at a time."""
    n, m = d.shape

    def t_values(x: np.ndarray) -> np.ndarray:
        out = np.zeros(m)
        for j in range(m):
            mean, sd = x[:, j].mean(), x[:, j].std(ddof=1)
            if sd > 1e-12:
                out[j] = abs(mean) / (sd / np.sqrt(n))
            elif abs(mean) > 1e-12:
                out[j] = np.inf
        return out

    observed = t_values(d)
    raw, adjusted = np.zeros(m), np.zeros(m)
    for signs in itertools.product([1.0, -1.0], repeat=n):
        flipped = t_values(d * np.array(signs)[:, None])
        for j in range(m):
            family = [k for k in range(m) if families[k] == families[j]]
            raw[j] += flipped[j] >= observed[j] * (1 - 1e-9)
            adjusted[j] += flipped[family].max() >= observed[j] * (1 - 1e-9)
    return raw / 2**n, adjusted / 2**n


@pytest.mark.parametrize("n", [4, 7, 10])
def test_enumerated_max_t_equals_brute_force(n):
    rng = np.random.default_rng(n)
    # dyadic values: sums are exact, so ties are real ties
    d = rng.choice([-0.5, -0.25, 0.0, 0.0, 0.25, 0.5, 0.75], size=(n, 6))
    d[:, 1] = 2 * d[:, 0]  # a rescaled duplicate: the same |t| under every sign vector
    d[:, 5] = 0.0  # an all-zero column
    families = [0, 0, 0, 1, 1, 1]
    result = max_t_sign_flip(d, families, n_resamples=2**n)
    raw, adjusted = brute_force(d, families)
    assert result.exact and result.n_resamples == 2**n
    np.testing.assert_allclose(result.pvalue, raw, rtol=0, atol=1e-15)
    np.testing.assert_allclose(result.pvalue_adjusted, adjusted, rtol=0, atol=1e-15)
    assert result.pvalue_adjusted[5] == 1.0
    assert result.pvalue_adjusted[0] == result.pvalue_adjusted[1]


def test_a_constant_column_and_single_column_families_by_hand():
    # column 0 moves every query by 0.25 (t = inf); only the all-+ and all-- sign vectors reach it
    d = np.column_stack([np.full(5, 0.25), [0.5, -0.25, 0.25, 0.0, 0.75]])
    alone = max_t_sign_flip(d, ["a", "b"], n_resamples=100)
    assert alone.pvalue_adjusted[0] == pytest.approx(2 / 32) and alone.family_labels == ("a", "b")
    np.testing.assert_array_equal(alone.pvalue_adjusted, alone.pvalue)  # families of one: no adjustment
    together = max_t_sign_flip(d, n_resamples=100)
    raw, adjusted = brute_force(d, [0, 0])
    np.testing.assert_allclose(together.pvalue_adjusted, adjusted, atol=1e-15)


def test_raw_pvalues_are_the_sign_flip_tests_on_the_same_sign_vectors():
    d = np.random.default_rng(3).normal(0.01, 0.1, size=(150, 8))
    maxt = max_t_sign_flip(d, n_resamples=3000, rng=np.random.default_rng(7))
    plain = sign_flip_test(d, 3000, np.random.default_rng(7))
    np.testing.assert_array_equal(maxt.pvalue, plain.pvalue)
    assert np.all(maxt.pvalue_adjusted >= maxt.pvalue)


def test_duplicated_columns_cost_nothing_where_holm_multiplies():
    base = np.random.default_rng(4).normal(0.02, 0.1, size=(120, 1))
    d = np.hstack([base, 3 * base, base + 1e-15, base, 0.5 * base])
    result = max_t_sign_flip(d, n_resamples=4000, rng=np.random.default_rng(1))
    np.testing.assert_array_equal(result.pvalue_adjusted, result.pvalue)
    assert holm(result.pvalue)[0] == pytest.approx(min(1.0, 5 * result.pvalue[0]))


def test_batch_size_and_seed():
    d = np.random.default_rng(5).normal(0.0, 0.1, size=(200, 6))
    small = max_t_sign_flip(d, n_resamples=1000, rng=np.random.default_rng(2), batch_bytes=8 * 200 * 7)
    large = max_t_sign_flip(d, n_resamples=1000, rng=np.random.default_rng(2), batch_bytes=1 << 30)
    np.testing.assert_array_equal(small.pvalue_adjusted, large.pvalue_adjusted)  # the promise: counts
    # the maxima come from ``bits @ x`` in batches of another shape, which BLAS may sum in another order
    # (OpenBLAS' Haswell and Zen kernels: 71 of 1,000 differ by ~3e-15); equal to rounding, not bit for bit
    np.testing.assert_allclose(small.null_max, large.null_max, rtol=1e-12, atol=0)
    other = max_t_sign_flip(d, n_resamples=1000, rng=np.random.default_rng(3))
    assert not np.array_equal(small.pvalue_adjusted, other.pvalue_adjusted)


@pytest.mark.parametrize("alpha", [0.05, 0.1])
def test_critical_value_agrees_with_the_adjusted_pvalues(alpha):
    rng = np.random.default_rng(6)
    d = rng.normal(0.0, 0.1, size=(80, 30)) + np.linspace(0, 0.05, 30)
    result = max_t_sign_flip(d, np.arange(30) % 2, n_resamples=999, rng=rng)
    t, c = np.abs(result.statistic), result.critical_value(alpha)
    assert np.all((t > c) <= (result.pvalue_adjusted <= alpha))
    assert np.all((result.pvalue_adjusted <= alpha) <= (t >= c))
    assert np.all(result.alpha_effective(alpha) < alpha / 2)  # 15 columns per family cost something
    assert np.all(max_t_sign_flip(d, n_resamples=10, rng=rng).critical_value(0.05) == np.inf)


# ------------------------------------------------------------------------------------------ simulation
REPS, N_QUERIES, B, ALPHA = 1500, 300, 999, 0.05


def family_wise_errors(correlated: bool, seed: int) -> dict[str, int]:
    """How many A/A replicates reject any of 15 columns, under max-T and under Holm."""
    rng = np.random.default_rng(seed)
    counts = {"maxt": 0, "holm": 0}
    for _ in range(REPS):
        if correlated:
            control, treatment = paired_runs(rng, N_QUERIES)
            d = treatment - control
        else:
            values = [-0.2, -0.1, 0.0, 0.0, 0.1, 0.3]
            d = rng.choice(values, size=(N_QUERIES, 15)) - rng.choice(values, size=(N_QUERIES, 15))
        result = max_t_sign_flip(d, n_resamples=B, rng=rng)
        counts["maxt"] += bool((result.pvalue_adjusted <= ALPHA).any())
        counts["holm"] += bool((holm(result.pvalue) <= ALPHA).any())
    return counts


@pytest.fixture(scope="module")
def correlated_null() -> dict[str, int]:
    return family_wise_errors(correlated=True, seed=2024)


@pytest.fixture(scope="module")
def independent_null() -> dict[str, int]:
    return family_wise_errors(correlated=False, seed=7)


BOUNDS = stats.binom.interval(0.999, REPS, ALPHA)  # (51, 102) of 1500: 3.4% to 6.8%


def docs_row(label: str) -> tuple[str, ...]:
    """A row of docs/statistics.md's max-T simulation tables: its max-T and Holm rates as printed."""
    text = (README.parent / "docs" / "statistics.md").read_text(encoding="utf-8")
    return readme_match(rf"\| {re.escape(label)} \| ([0-9.]+)% \| ([0-9.]+)% \|", text).groups()


def as_docs_row(counts: dict[str, int], reps: int, row: tuple[str, ...]) -> tuple[str, ...]:
    """``counts`` of ``reps`` replicates as percentages with the row's digits (max-T, then Holm)."""
    return tuple(
        as_printed(100 * counts[key] / reps, text) for key, text in zip(("maxt", "holm"), row, strict=True)
    )


def test_max_t_holds_the_family_wise_error_on_correlated_metric_columns(correlated_null):
    assert BOUNDS[0] <= correlated_null["maxt"] <= BOUNDS[1], correlated_null
    # measured here: max-T 71 (4.7%), Holm 18 (1.2%): Holm pays for 15 columns that are nearly one
    assert correlated_null["holm"] < 0.02 * REPS
    row = docs_row("15 correlated metric columns")
    assert as_docs_row(correlated_null, REPS, row) == row


def test_max_t_costs_what_holm_costs_on_independent_columns(independent_null):
    assert BOUNDS[0] <= independent_null["maxt"] <= BOUNDS[1], independent_null
    assert independent_null["holm"] <= BOUNDS[1]
    # measured here: max-T 87 (5.8%), Holm 65 (4.3%): on independent columns both are about exact
    assert abs(independent_null["maxt"] - independent_null["holm"]) < 0.02 * REPS
    row = docs_row("15 independent columns")
    assert as_docs_row(independent_null, REPS, row) == row


def test_max_t_finds_a_real_gain_on_correlated_columns_more_often_than_holm():
    rng = np.random.default_rng(11)
    j = METRICS.index("ndcg@10")
    found = {"maxt": 0, "holm": 0}
    reps = 300
    for _ in range(reps):
        control, treatment = paired_runs(rng, N_QUERIES, gain=0.12)
        result = max_t_sign_flip(treatment - control, n_resamples=B, rng=rng)
        found["maxt"] += bool(result.pvalue_adjusted[j] <= ALPHA)
        found["holm"] += bool(holm(result.pvalue)[j] <= ALPHA)
    assert found["maxt"] >= 1.5 * found["holm"] + 10, found  # measured here: 53 vs 19 of 300
    row = docs_row("10% of queries move their relevant document up")
    assert as_docs_row(found, reps, row) == row
