"""Prediction-powered inference of the mean paired delta: by hand on a small case, and against the
independent implementation ``ppi-python`` (plain PPI and PPI++'s tuned weight)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as scipy_stats
from support.environment import require_module

from abcompare.stats.ppi import ppi_mean


def test_ppi_by_hand() -> None:
    # judge's mean on the unlabelled queries 0.5, its error on the labelled ones mean([0.5, -0.5]) = 0;
    # standard error sqrt(var([1, 0, 1, 0]) / 4 + var([0.5, -0.5]) / 2) = sqrt(0.0625 + 0.125)
    result = ppi_mean([1.0, 0.0], [0.5, 0.5], [1.0, 0.0, 1.0, 0.0], confidence=0.9)
    z = scipy_stats.norm.ppf(0.95)
    assert result.estimate == pytest.approx(0.5)
    assert result.std_error == pytest.approx(np.sqrt(0.1875))
    assert (result.low, result.high) == pytest.approx((0.5 - z * np.sqrt(0.1875), 0.5 + z * np.sqrt(0.1875)))
    assert (result.judge_only, result.human_only, result.lam) == pytest.approx((0.5, 0.5, 1.0))


def _data(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    truth = rng.normal(0.05, 0.2, 400)
    judged = 0.7 * truth + 0.03 + rng.normal(0, 0.1, 400)  # a biased, noisy judge
    return truth[:60], judged[:60], judged[60:]


@pytest.mark.parametrize("tune", [False, True])
def test_ppi_matches_ppi_python(tune: bool) -> None:
    ppi_py = require_module("ppi_py")
    y, yhat, unlabelled = _data(4)
    ours = ppi_mean(y, yhat, unlabelled, confidence=0.9, tune=tune)
    lam = None if tune else 1.0
    expected = float(np.ravel(ppi_py.ppi_mean_pointestimate(y, yhat, unlabelled, lam=lam))[0])
    low, high = (float(np.ravel(v)[0]) for v in ppi_py.ppi_mean_ci(y, yhat, unlabelled, alpha=0.1, lam=lam))
    assert ours.estimate == pytest.approx(expected, abs=1e-12)
    assert (ours.low, ours.high) == pytest.approx((low, high), abs=1e-12)
    if tune:
        assert 0.0 <= ours.lam <= 1.0 and ours.lam != 1.0


def test_ppi_corrects_the_judges_bias_where_the_judge_alone_does_not() -> None:
    y, yhat, unlabelled = _data(9)
    result = ppi_mean(y, yhat, unlabelled)
    # the judge shrinks the delta (0.7x) and adds 0.03: its own mean misses the truth's mean of 0.05
    assert result.low <= 0.05 <= result.high
    assert abs(result.estimate - y.mean()) < abs(result.judge_only - 0.05) + 0.05


def test_ppi_refuses_too_few_or_non_finite_values() -> None:
    with pytest.raises(ValueError, match="at least two"):
        ppi_mean([1.0], [1.0], [0.0, 1.0])
    with pytest.raises(ValueError, match="finite"):
        ppi_mean([1.0, np.nan], [1.0, 0.0], [0.0, 1.0])
