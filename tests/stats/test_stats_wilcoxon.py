"""Wilcoxon signed-rank agrees with scipy for every zero-difference policy, and is defined when all d = 0."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from abcompare.stats.wilcoxon import wilcoxon_test


@pytest.mark.parametrize("zero_method", ["pratt", "wilcox", "zsplit"])
@pytest.mark.parametrize("n", [9, 30, 80])
def test_matches_scipy_wilcoxon_with_ties_and_zeros(zero_method, n):
    # n <= 13: scipy enumerates all sign flips; above: the normal approximation with tie correction.
    rng = np.random.default_rng(n)
    d = rng.choice([-0.3, -0.1, 0.0, 0.0, 0.0, 0.1, 0.2, 0.5], size=(n, 2))
    ours = wilcoxon_test(d, zero_method)
    for j in range(2):
        ref = stats.wilcoxon(d[:, j], zero_method=zero_method)
        assert ours.pvalue[j] == pytest.approx(ref.pvalue, rel=1e-12)
        assert ours.statistic[j] == pytest.approx(ref.statistic, rel=1e-12)
    assert ours.zero_method == zero_method


@pytest.mark.parametrize("n", [13, 14])
def test_matches_scipy_on_both_sides_of_its_enumeration_limit(n):
    d = np.resize([0.1, -0.1, 0.0, 0.2, 0.1, 0.3, -0.2, 0.1], n)
    ref = stats.wilcoxon(d, zero_method="pratt")
    assert wilcoxon_test(d, "pratt").pvalue == pytest.approx(ref.pvalue, rel=1e-12)


def test_small_sample_without_ties_uses_scipys_exact_distribution():
    d = np.array([0.11, -0.02, 0.35, 0.24, 0.07, -0.15, 0.42, 0.19, 0.03, 0.28])
    exact = stats.wilcoxon(d, method="exact").pvalue
    # By hand: negative ranks are 1 (0.02) and 5 (0.15), so T = 6. Subsets of {1..10} with rank sum <= 6:
    # sums 0..6 have 1, 1, 1, 2, 2, 3, 4 subsets = 14, so the two-sided p is 2 * 14 / 2^10.
    assert exact == pytest.approx(2 * 14 / 1024)
    assert wilcoxon_test(d).pvalue == pytest.approx(exact, rel=1e-12)


def test_each_column_gets_its_own_exact_or_asymptotic_choice():
    clean = np.array([0.11, -0.02, 0.35, 0.24, 0.07, -0.15, 0.42, 0.19, 0.03, 0.28])
    tied = np.array([0.1, 0.1, 0.0, 0.2, -0.1, 0.1, 0.3, 0.0, 0.2, 0.1])
    ours = wilcoxon_test(np.column_stack([clean, tied]))
    assert ours.pvalue[0] == pytest.approx(stats.wilcoxon(clean).pvalue, rel=1e-12)
    assert ours.pvalue[1] == pytest.approx(stats.wilcoxon(tied, zero_method="pratt").pvalue, rel=1e-12)


@pytest.mark.parametrize("zero_method", ["pratt", "wilcox", "zsplit"])
def test_all_zero_differences_give_p_one(zero_method):
    result = wilcoxon_test(np.zeros((20, 2)), zero_method)
    np.testing.assert_array_equal(result.pvalue, [1.0, 1.0])


def test_unknown_zero_method_is_rejected():
    with pytest.raises(ValueError, match="zero_method"):
        wilcoxon_test(np.ones(5), "drop")
