"""Minimum detectable effect: the normal-approximation formula, and that it really has the stated power."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from abcompare.stats.power import minimum_detectable_effect
from abcompare.stats.ttest import paired_ttest


def test_mde_by_hand():
    # z_{0.975} = 1.959964, z_{0.8} = 0.841621
    assert minimum_detectable_effect(0.2, 100) == pytest.approx((1.959964 + 0.841621) * 0.2 / 10, rel=1e-6)
    assert minimum_detectable_effect(0.2, 400, alpha=0.01, power=0.9) == pytest.approx(
        (2.575829 + 1.281552) * 0.2 / 20, rel=1e-6
    )


def test_mde_is_zero_when_differences_do_not_vary_and_rejects_bad_levels():
    assert minimum_detectable_effect(0.0, 50) == 0.0
    with pytest.raises(ValueError):
        minimum_detectable_effect(0.1, 50, power=1.0)


def test_a_true_effect_of_one_mde_is_detected_about_80_percent_of_the_time():
    rng = np.random.default_rng(12)
    n, reps, sd = 200, 4000, 0.15
    effect = minimum_detectable_effect(sd, n)
    d = rng.normal(effect, sd, size=(n, reps))
    rejected = int((paired_ttest(d).pvalue <= 0.05).sum())
    low, high = stats.binom.interval(0.999, reps, 0.8)
    assert low <= rejected <= high
