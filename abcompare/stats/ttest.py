"""Paired t-test on per-query differences: two-sided p-value and the t interval for the mean difference."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from abcompare.stats.paired import as_columns, constant_columns


@dataclass(frozen=True)
class TTestResult:
    """Per metric: t statistic, degrees of freedom, two-sided p-value, t interval for the mean difference."""

    statistic: np.ndarray
    df: int
    pvalue: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray


def paired_ttest(d: np.ndarray, alpha: float = 0.05) -> TTestResult:
    """Two-sided one-sample t-test of mean(d) = 0 (= scipy's ``ttest_rel``), vectorised over columns.

    ``d`` is (n,) or (n, metrics). Identical pairs (sd = 0) give t = 0, p = 1 when the mean is 0 and
    t = +-inf, p = 0 otherwise, instead of scipy's NaN.
    """
    x, squeeze = as_columns(d)
    n = x.shape[0]
    df = n - 1
    mean = x.mean(axis=0)
    se = np.where(constant_columns(x), 0.0, x.std(axis=0, ddof=1) / np.sqrt(n))
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(se > 0, mean / np.where(se > 0, se, 1.0), np.sign(mean) * np.inf)
    t = np.where((se == 0) & (mean == 0), 0.0, t)
    p = np.minimum(2.0 * stats.t.sf(np.abs(t), df), 1.0)
    half = stats.t.ppf(1.0 - alpha / 2.0, df) * se
    low, high = mean - half, mean + half
    if squeeze:
        return TTestResult(t[0], df, p[0], low[0], high[0])
    return TTestResult(t, df, p, low, high)
