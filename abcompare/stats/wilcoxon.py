"""Wilcoxon signed-rank test on per-query differences, with an explicit zero-difference policy."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from abcompare.core.vocabulary import ZERO_METHODS
from abcompare.stats.paired import as_columns

#: scipy's 'auto' enumerates all 2^n sign flips for tied or zero data up to this many queries.
_SCIPY_ENUMERATION_MAX_N = 13


@dataclass(frozen=True)
class WilcoxonResult:
    """Per metric: signed-rank statistic and two-sided p-value; ``zero_method`` says how zeros were ranked."""

    statistic: np.ndarray
    pvalue: np.ndarray
    zero_method: str


def _enumerated(column: np.ndarray, zero_method: str) -> tuple[float, float]:
    """scipy's small-sample path for tied or zero data (a sign-flip permutation test of the rank sum r+).

    scipy runs it with a Python-level statistic (about half a second per column); the ranks of |d| do not
    change under sign flips, so r+ is a vectorised dot product here, with the same p-value.
    """
    zero = column == 0
    ranks = np.zeros(column.size)
    kept = ~zero if zero_method == "wilcox" else np.ones(column.size, dtype=bool)
    ranks[kept] = stats.rankdata(np.abs(column[kept]))
    split = ranks[zero].sum() / 2.0 if zero_method == "zsplit" else 0.0

    def r_plus(x: np.ndarray, axis: int) -> np.ndarray:
        return (np.moveaxis(x, axis, -1) > 0) @ ranks + split

    res = stats.permutation_test(
        (column,), r_plus, permutation_type="samples", vectorized=True, alternative="two-sided"
    )
    r_minus = ranks[column < 0].sum() + split
    return float(min(r_plus(column, 0), r_minus)), float(res.pvalue)


def _has_ties_or_zeros(column: np.ndarray) -> bool:
    magnitudes = np.abs(column)
    return bool(np.any(column == 0) or np.unique(magnitudes).size < magnitudes.size)


def wilcoxon_test(d: np.ndarray, zero_method: str = "pratt") -> WilcoxonResult:
    """Two-sided Wilcoxon signed-rank test per column, as ``scipy.stats.wilcoxon(method='auto')`` computes it.

    scipy's choice is kept per metric: exact distribution for n <= 50 without ties or zeros, all sign flips
    for n <= 13 with them, the normal approximation otherwise. All-zero columns give statistic 0, p = 1
    (scipy gives NaN or raises).
    """
    if zero_method not in ZERO_METHODS:
        raise ValueError(f"unknown zero_method {zero_method!r}; use one of {', '.join(ZERO_METHODS)}")
    x, squeeze = as_columns(d)
    statistic = np.zeros(x.shape[1])
    pvalue = np.ones(x.shape[1])
    for j in range(x.shape[1]):
        column = x[:, j]
        if np.all(column == 0):
            continue
        if column.size <= _SCIPY_ENUMERATION_MAX_N and _has_ties_or_zeros(column):
            statistic[j], pvalue[j] = _enumerated(column, zero_method)
        else:
            res = stats.wilcoxon(column, zero_method=zero_method, alternative="two-sided", method="auto")
            statistic[j], pvalue[j] = float(res.statistic), float(res.pvalue)
    if squeeze:
        return WilcoxonResult(statistic[0], pvalue[0], zero_method)
    return WilcoxonResult(statistic, pvalue, zero_method)
