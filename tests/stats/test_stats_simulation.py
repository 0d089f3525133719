"""Simulated A/A comparisons: each test rejects about alpha of the time, and 95% intervals cover ~95%.

Every replicate draws fresh data and fresh resamples, so the number of rejections (coverages) is a
binomial count; the bounds are its central 99.9% range under the nominal rate.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from abcompare.stats.bootstrap import paired_bootstrap
from abcompare.stats.permutation import sign_flip_test
from abcompare.stats.ttest import paired_ttest
from abcompare.stats.wilcoxon import wilcoxon_test

REPS, N_QUERIES, B, ALPHA = 1000, 100, 199, 0.05
NOISE = np.array([-0.2, -0.1, 0.0, 0.0, 0.0, 0.1, 0.2])


def simulate(shift: float, seed: int) -> dict[str, np.ndarray]:
    """Control and treatment share a per-query base score plus independent, identically distributed noise."""
    rng = np.random.default_rng(seed)
    out: dict[str, list] = {k: [] for k in ("t", "perm", "boot", "wilcoxon", "t_ci", "pct_ci", "bca_ci")}
    for _ in range(REPS):
        base = rng.integers(0, 11, N_QUERIES) / 10
        control = base + rng.choice(NOISE, N_QUERIES)
        treatment = base + rng.choice(NOISE, N_QUERIES) + shift
        d = treatment - control
        t = paired_ttest(d, ALPHA)
        boot = paired_bootstrap(d, 4 * B + 3, rng, ALPHA)
        out["t"].append(t.pvalue)
        out["perm"].append(sign_flip_test(d, B, rng).pvalue)
        out["boot"].append(boot.pvalue)
        out["wilcoxon"].append(wilcoxon_test(d, "pratt").pvalue)
        out["t_ci"].append(t.ci_low <= shift <= t.ci_high)
        out["pct_ci"].append(boot.pct_low <= shift <= boot.pct_high)
        out["bca_ci"].append(boot.bca_low <= shift <= boot.bca_high)
    return {k: np.array(v) for k, v in out.items()}


@pytest.fixture(scope="module")
def null_runs() -> dict[str, np.ndarray]:
    return simulate(0.0, seed=2024)


@pytest.fixture(scope="module")
def shifted_runs() -> dict[str, np.ndarray]:
    return simulate(0.05, seed=7)


@pytest.mark.parametrize("test", ["t", "perm", "boot", "wilcoxon"])
def test_rejection_rate_under_the_null_is_near_alpha(null_runs, test):
    rejected = int((null_runs[test] <= ALPHA).sum())
    low, high = stats.binom.interval(0.999, REPS, ALPHA)
    assert low <= rejected <= high, f"{test}: {rejected} of {REPS} rejected"


@pytest.mark.parametrize("interval", ["t_ci", "pct_ci", "bca_ci"])
def test_95_percent_intervals_cover_the_true_difference_about_95_percent_of_the_time(shifted_runs, interval):
    covered = int(shifted_runs[interval].sum())
    low, high = stats.binom.interval(0.999, REPS, 1 - ALPHA)
    assert low <= covered <= high, f"{interval}: {covered} of {REPS} covered"
