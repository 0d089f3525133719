"""The paired t-test agrees with scipy.stats.ttest_rel and never returns NaN for identical runs."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from abcompare.stats.ttest import paired_ttest


@pytest.mark.parametrize("alpha", [0.05, 0.1])
def test_matches_scipy_ttest_rel_on_fixed_data(alpha):
    rng = np.random.default_rng(7)
    control = rng.integers(0, 11, size=(30, 4)) / 10
    treatment = np.clip(control + rng.choice([-0.2, -0.1, 0, 0, 0.1, 0.2, 0.3], size=(30, 4)), 0, 1)
    ours = paired_ttest(treatment - control, alpha)
    for j in range(4):
        ref = stats.ttest_rel(treatment[:, j], control[:, j])
        ci = ref.confidence_interval(confidence_level=1 - alpha)
        assert ours.statistic[j] == pytest.approx(ref.statistic, rel=1e-12)
        assert ours.pvalue[j] == pytest.approx(ref.pvalue, rel=1e-12)
        assert ours.ci_low[j] == pytest.approx(ci.low, rel=1e-12)
        assert ours.ci_high[j] == pytest.approx(ci.high, rel=1e-12)
    assert ours.df == 29


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(-1, 1, allow_nan=False), min_size=3, max_size=40))
def test_pvalue_matches_scipy_whenever_scipy_is_defined(values):
    d = np.array(values)
    if d.std() == 0 or np.ptp(d) == 0:
        return  # identical values: the rounding noise in d.std() is not spread (p = 0 / 1 by design)
    ref = stats.ttest_1samp(d, 0.0)
    assert paired_ttest(d).pvalue == pytest.approx(ref.pvalue, rel=1e-9, abs=1e-300)


def test_all_zero_differences_give_p_one_and_a_zero_width_interval():
    result = paired_ttest(np.zeros(12))
    assert (result.statistic, result.pvalue, result.ci_low, result.ci_high) == (0.0, 1.0, 0.0, 0.0)


def test_constant_nonzero_difference_is_infinitely_significant():
    result = paired_ttest(np.full(5, 0.25))
    assert result.statistic == np.inf and result.pvalue == 0.0
    assert result.ci_low == result.ci_high == pytest.approx(0.25)
