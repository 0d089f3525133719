"""The sign-flip test agrees with scipy.stats.permutation_test (exactly when it enumerates)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from abcompare.stats.permutation import sign_flip_test


def scipy_sign_flip(d: np.ndarray, n_resamples: int, seed: int = 1):
    return stats.permutation_test(
        (d,),
        lambda x, axis: np.mean(x, axis=axis),
        permutation_type="samples",
        vectorized=True,
        n_resamples=n_resamples,
        alternative="two-sided",
        rng=np.random.default_rng(seed),
    )


@pytest.mark.parametrize("n", [2, 5, 10, 13])
def test_enumerated_pvalue_equals_scipys_exact_pvalue(n):
    rng = np.random.default_rng(n)
    d = rng.choice([-0.2, -0.1, 0.0, 0.1, 0.1, 0.3], size=(n, 3))
    ours = sign_flip_test(d, n_resamples=10_000, rng=np.random.default_rng(0))
    assert ours.exact and ours.n_resamples == 2**n
    for j in range(3):
        ref = scipy_sign_flip(d[:, j], 10_000)
        assert ours.pvalue[j] == pytest.approx(ref.pvalue, rel=1e-12)


def test_enumerated_pvalue_by_hand():
    # d = (1, 2, 3): sums over the 8 sign vectors are +-6, +-4, +-2, +-0; |sum| >= 6 for 2 of 8.
    assert sign_flip_test(np.array([1.0, 2.0, 3.0]), 100).pvalue == pytest.approx(2 / 8)


def test_monte_carlo_pvalue_agrees_with_scipy_within_monte_carlo_error():
    rng = np.random.default_rng(11)
    d = rng.choice([-0.3, -0.1, 0.0, 0.0, 0.1, 0.2, 0.4], size=(60, 3)) + np.array([0.0, 0.02, 0.05])
    b = 20_000
    ours = sign_flip_test(d, b, np.random.default_rng(5))
    assert not ours.exact
    for j in range(3):
        ref = scipy_sign_flip(d[:, j], b).pvalue
        # Two independent estimates of p: the difference has sd <= sqrt(2 p (1 - p) / B); allow 5 sd.
        p = max(ref, 1e-3)
        assert abs(ours.pvalue[j] - ref) <= 5 * np.sqrt(2 * p * (1 - p) / b) + 2 / b


def test_monte_carlo_pvalue_is_never_zero():
    d = np.full(40, 0.5) + np.linspace(0, 0.01, 40)
    result = sign_flip_test(d, 999, np.random.default_rng(0))
    assert result.pvalue == pytest.approx(1 / 1000)


def test_all_zero_differences_give_p_one():
    assert sign_flip_test(np.zeros(30), 500, np.random.default_rng(0)).pvalue == 1.0
    assert sign_flip_test(np.zeros(5), 500, np.random.default_rng(0)).pvalue == 1.0


def test_same_seed_gives_bit_identical_pvalues_and_another_seed_differs():
    d = np.random.default_rng(2).normal(0.01, 0.1, size=(200, 4))
    first = sign_flip_test(d, 2000, np.random.default_rng(42)).pvalue
    again = sign_flip_test(d, 2000, np.random.default_rng(42)).pvalue
    other = sign_flip_test(d, 2000, np.random.default_rng(43)).pvalue
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other)


def test_batch_size_does_not_change_the_result():
    d = np.random.default_rng(3).normal(0.01, 0.1, size=(300, 2))
    small = sign_flip_test(d, 1000, np.random.default_rng(1), batch_bytes=8 * 300 * 7).pvalue
    large = sign_flip_test(d, 1000, np.random.default_rng(1), batch_bytes=1 << 30).pvalue
    np.testing.assert_array_equal(small, large)


def test_each_column_is_tested_as_it_would_be_alone_when_enumerated():
    d = np.random.default_rng(4).choice([-1.0, 0.0, 1.0, 2.0], size=(9, 3))
    together = sign_flip_test(d, 1000).pvalue
    alone = [sign_flip_test(d[:, j], 1000).pvalue for j in range(3)]
    np.testing.assert_array_equal(together, alone)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(-5, 5), min_size=2, max_size=11))
def test_enumerated_pvalue_is_a_valid_probability_and_symmetric_in_sign(values):
    d = np.array(values, dtype=float) / 10
    p = sign_flip_test(d, 4096).pvalue
    assert 0 < p <= 1
    assert sign_flip_test(-d, 4096).pvalue == pytest.approx(p)
    assert sign_flip_test(d[::-1], 4096).pvalue == pytest.approx(p)
