"""The paired bootstrap's intervals agree with scipy.stats.bootstrap, its p-value with a reference."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from abcompare.stats.bootstrap import paired_bootstrap


def scipy_interval(d: np.ndarray, method: str, b: int, alpha: float = 0.05):
    res = stats.bootstrap(
        (d,), np.mean, n_resamples=b, method=method, confidence_level=1 - alpha, rng=np.random.default_rng(9)
    )
    return res.confidence_interval


def quantile_tolerance(d: np.ndarray, b: int) -> float:
    """5 sd of the difference of two independent bootstrap 2.5% quantile estimates (normal approximation).

    One estimate has sd sqrt(q (1 - q) / B) / phi(z_q) * se = 2.67 se / sqrt(B) at q = 0.025.
    """
    se = d.std(ddof=1) / np.sqrt(d.size)
    q = 0.025
    one = np.sqrt(q * (1 - q) / b) / stats.norm.pdf(stats.norm.ppf(q)) * se
    return 5 * np.sqrt(2) * one


@pytest.mark.parametrize("shape", ["skewed", "discrete"])
def test_bca_and_percentile_intervals_agree_with_scipy_within_monte_carlo_error(shape):
    rng = np.random.default_rng(21)
    if shape == "skewed":
        d = rng.exponential(0.1, size=40) ** 1.5 - 0.02
    else:
        d = rng.choice([-0.2, -0.1, 0.0, 0.0, 0.0, 0.1, 0.3, 0.6], size=40)
    b = 50_000
    ours = paired_bootstrap(d, b, np.random.default_rng(3))
    tol = quantile_tolerance(d, b)
    bca, pct = scipy_interval(d, "BCa", b), scipy_interval(d, "percentile", b)
    assert ours.ci_method == "bca"
    assert abs(ours.bca_low - bca.low) <= tol and abs(ours.bca_high - bca.high) <= tol
    assert abs(ours.pct_low - pct.low) <= tol and abs(ours.pct_high - pct.high) <= tol
    if shape == "skewed":
        # Skewed enough that BCa and percentile differ by more than the tolerance, so the agreement
        # above would catch a BCa that silently fell back to the percentile interval.
        assert abs(bca.high - pct.high) > 2 * tol
    assert ours.statistic == pytest.approx(d.mean())


def test_columns_match_scipy_independently():
    rng = np.random.default_rng(5)
    d = np.column_stack([rng.normal(0.02, 0.1, 80), rng.exponential(0.2, 80) - 0.1])
    b = 10_000
    ours = paired_bootstrap(d, b, np.random.default_rng(4), alpha=0.1)
    for j in range(2):
        ref = scipy_interval(d[:, j], "BCa", b, alpha=0.1)
        # 5% quantile: a little tighter than the 2.5% tolerance, so that bound is conservative here.
        tol = quantile_tolerance(d[:, j], b)
        assert abs(ours.bca_low[j] - ref.low) <= tol and abs(ours.bca_high[j] - ref.high) <= tol


def reference_studentized_pvalue(d: np.ndarray, b: int, seed: int) -> float:
    """Textbook bootstrap-t test, one resample at a time (Hall & Wilson 1991, guideline 2)."""
    rng = np.random.default_rng(seed)
    n = d.size
    t_obs = abs(d.mean() / (d.std(ddof=1) / np.sqrt(n)))
    extreme = 0
    for _ in range(b):
        x = d[rng.integers(0, n, n)]
        se = x.std(ddof=1) / np.sqrt(n)
        extreme += abs((x.mean() - d.mean()) / se) >= t_obs if se > 0 else 0
    return (extreme + 1) / (b + 1)


@pytest.mark.parametrize("shift", [0.0, 0.03, 0.08])
def test_studentized_pvalue_agrees_with_a_reference_implementation(shift):
    rng = np.random.default_rng(8)
    d = rng.choice([-0.2, -0.1, 0.0, 0.1, 0.2], size=40) + shift
    b = 4000
    ours = paired_bootstrap(d, b, np.random.default_rng(1)).pvalue
    ref = reference_studentized_pvalue(d, b, seed=2)
    p = max(ref, 1e-3)
    assert abs(ours - ref) <= 5 * np.sqrt(2 * p * (1 - p) / b) + 2 / b


def test_studentized_pvalue_is_close_to_the_t_test_on_a_large_symmetric_sample():
    d = np.random.default_rng(6).normal(0.01, 0.1, size=2000)
    ours = paired_bootstrap(d, 5000, np.random.default_rng(0)).pvalue
    ref = stats.ttest_1samp(d, 0).pvalue
    assert abs(ours - ref) <= 5 * np.sqrt(ref * (1 - ref) / 5000) + 0.01


def test_all_zero_differences_give_p_one_and_a_zero_interval_without_nan():
    result = paired_bootstrap(np.zeros((25, 2)), 500, np.random.default_rng(0))
    np.testing.assert_array_equal(result.pvalue, [1.0, 1.0])
    for bound in (result.bca_low, result.bca_high, result.pct_low, result.pct_high):
        np.testing.assert_array_equal(bound, [0.0, 0.0])


def test_constant_nonzero_difference_has_a_point_interval_and_smallest_pvalue():
    result = paired_bootstrap(np.full(10, 0.1), 999, np.random.default_rng(0))
    assert result.bca_low == pytest.approx(0.1) and result.bca_high == pytest.approx(0.1)
    assert result.pvalue == pytest.approx(1 / 1000)


def test_same_seed_is_bit_identical():
    d = np.random.default_rng(7).normal(0, 0.1, size=(150, 3))
    a = paired_bootstrap(d, 1000, np.random.default_rng(3))
    b = paired_bootstrap(d, 1000, np.random.default_rng(3))
    for name in ("bca_low", "bca_high", "pct_low", "pct_high", "pvalue", "means"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))


def test_batch_size_changes_nothing_but_rounding():
    d = np.random.default_rng(8).choice([-0.2, 0.0, 0.1, 0.3], size=(400, 2))
    small = paired_bootstrap(d, 300, np.random.default_rng(1), batch_bytes=8 * 400 * 7)
    large = paired_bootstrap(d, 300, np.random.default_rng(1), batch_bytes=1 << 30)
    np.testing.assert_allclose(small.means, large.means, rtol=0, atol=1e-12)


def test_resampled_means_are_means_of_resamples():
    # Every bootstrap mean of d = (0, 1, 3) is (0 a + 1 b + 3 c) / 3 with a + b + c = 3 draws.
    possible = {round((b + 3 * c) / 3, 9) for b in range(4) for c in range(4) if b + c <= 3}
    means = paired_bootstrap(np.array([0.0, 1.0, 3.0]), 2000, np.random.default_rng(0)).means
    assert {round(m, 9) for m in means} == possible  # each has probability >= 1/27: all show up
    assert abs(means.mean() - 4 / 3) < 5 * np.sqrt(np.var([0, 1, 3]) / 3 / 2000)
