"""Holm and Benjamini-Hochberg adjusted p-values, checked by hand and against scipy."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from abcompare.stats.correction import adjust_pvalues, benjamini_hochberg, holm

P = np.array([0.01, 0.04, 0.03, 0.005])


def test_holm_by_hand():
    # sorted 0.005, 0.01, 0.03, 0.04 -> 4*0.005, 3*0.01, 2*0.03, max(1*0.04, 0.06)
    np.testing.assert_allclose(holm(P), [0.03, 0.06, 0.06, 0.02])


def test_benjamini_hochberg_by_hand():
    # sorted ranks 1..4 -> 4/1*0.005, 4/2*0.01, 4/3*0.03, 4/4*0.04 = .02, .02, .04, .04 (already monotone)
    np.testing.assert_allclose(benjamini_hochberg(P), [0.02, 0.04, 0.04, 0.02])


def test_adjust_dispatches_by_name_and_none_leaves_p_alone():
    np.testing.assert_allclose(adjust_pvalues(P, "holm"), holm(P))
    np.testing.assert_allclose(adjust_pvalues(P, "BH"), benjamini_hochberg(P))
    np.testing.assert_allclose(adjust_pvalues(P, "fdr_bh"), benjamini_hochberg(P))
    np.testing.assert_array_equal(adjust_pvalues(P, "none"), P)
    with pytest.raises(ValueError, match="bonferroni"):
        adjust_pvalues(P, "bonferroni")


def test_holm_caps_at_one_and_keeps_a_single_p():
    np.testing.assert_allclose(holm(np.array([0.6, 0.7])), [1.0, 1.0])
    np.testing.assert_allclose(holm(np.array([0.03])), [0.03])


pvalues = st.lists(st.floats(0, 1, allow_nan=False), min_size=1, max_size=30).map(np.array)


@given(pvalues)
def test_holm_is_between_raw_p_and_bonferroni_and_keeps_the_order(p):
    adjusted = holm(p)
    assert np.all(adjusted >= p - 1e-15) and np.all(adjusted <= np.minimum(p * p.size, 1) + 1e-15)
    order = np.argsort(p, kind="stable")
    assert np.all(np.diff(adjusted[order]) >= 0)


@given(pvalues)
def test_bh_matches_scipy_and_never_exceeds_holm(p):
    np.testing.assert_allclose(benjamini_hochberg(p), stats.false_discovery_control(p, method="bh"))
    assert np.all(benjamini_hochberg(p) <= holm(p) + 1e-12)
