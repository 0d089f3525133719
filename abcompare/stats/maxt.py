"""Westfall-Young single-step max-T: sign-flip p-values adjusted for a family of correlated columns.

Each query's whole row of differences (every metric of every treatment) is flipped at once, so the null
distribution of the largest studentized statistic knows how the columns move together: near-duplicate
columns cost almost nothing, independent ones cost about what Holm costs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

from abcompare.stats._chunks import BATCH_BYTES, chunk_sizes, single_threaded_blas
from abcompare.stats.paired import as_columns
from abcompare.stats.permutation import _RTOL, ALTERNATIVES, all_sign_bits, random_sign_bits

#: Relative tolerance when comparing studentized statistics that are equal in exact arithmetic.
_T_RTOL = 1e-9
#: A column whose variance under a sign vector is below this share of sum(d^2)/(n - 1) has none.
_FLAT = 1e-12


@dataclass(frozen=True)
class MaxTResult:
    """Per column: studentized statistic, raw and max-T adjusted two-sided p-values.

    ``pvalue`` is the marginal sign-flip p of each column (the same number :func:`sign_flip_test` gives
    with the same sign vectors); ``pvalue_adjusted`` compares each column's |t| with the largest |t*| of
    its family under every sign vector. ``null_max`` holds those maxima, one column per family (in the
    order of ``family_labels``), so critical values can be read off at any level.
    """

    statistic: np.ndarray
    pvalue: np.ndarray
    pvalue_adjusted: np.ndarray
    families: np.ndarray
    family_labels: tuple[object, ...]
    null_max: np.ndarray
    n_resamples: int
    exact: bool

    def critical_value(self, alpha: float | np.ndarray) -> np.ndarray:
        """Per column: the smallest |t| whose adjusted p is <= ``alpha`` (inf when none can be).

        ``alpha`` is one level or one per column (a step-down correction holds each column to its own).
        With N sign vectors and b(c) of them reaching a family maximum >= c, the adjusted p is
        b / N when enumerated and (b + 1) / (N + 1) otherwise; the critical value is the (k+1)-th largest
        maximum with k = floor(alpha N), resp. floor(alpha (N + 1)) - 1 (p <= alpha for |t| above it).
        """
        n = self.null_max.shape[0]
        level = np.broadcast_to(np.asarray(alpha, dtype=np.float64), self.families.shape)
        k = np.floor(level * n) if self.exact else np.floor(level * (n + 1)) - 1
        k = k.astype(np.int64)
        descending = -np.sort(-self.null_max, axis=0)
        value = descending[np.clip(k, 0, n - 1), self.families]
        return np.where(k < 0, np.inf, np.where(k >= n, 0.0, value))

    def alpha_effective(self, alpha: float) -> np.ndarray:
        """Per column: the two-sided normal level whose critical value is the max-T one (for the MDE)."""
        return np.minimum(2.0 * stats.norm.sf(self.critical_value(alpha)), 1.0)


def studentized(sums: np.ndarray, squares: np.ndarray, n: int, gamma: np.ndarray) -> np.ndarray:
    """t = mean / (sd / sqrt(n)) of columns with these sums and sums of squares (sign flips keep squares).

    A column without spread gives +-inf when its sum is non-zero (beyond the rounding ``gamma``), else 0.
    """
    var = np.maximum(squares - sums * sums / n, 0.0) / (n - 1)
    flat = var <= _FLAT * squares / (n - 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = (sums / n) / np.sqrt(var / n)
    spread_free = np.where(np.abs(sums) > gamma, np.copysign(np.inf, sums), 0.0)
    return np.where(flat, spread_free, t)


def _family_codes(families: Sequence[object] | np.ndarray | None, m: int) -> tuple[np.ndarray, tuple]:
    if families is None:
        return np.zeros(m, dtype=np.intp), (0,)
    labels = list(families)
    if len(labels) != m:
        raise ValueError(f"families has {len(labels)} labels for {m} columns")
    order: dict[object, int] = {}
    codes = np.array([order.setdefault(label, len(order)) for label in labels], dtype=np.intp)
    return codes, tuple(order)


@single_threaded_blas()
def max_t_sign_flip(
    d: np.ndarray,
    families: Sequence[object] | np.ndarray | None = None,
    *,
    n_resamples: int = 10_000,
    rng: np.random.Generator | None = None,
    batch_bytes: int = BATCH_BYTES,
    progress: Callable[[int, int], None] | None = None,
    alternative: str = "two-sided",
) -> MaxTResult:
    """Single-step max-T adjusted sign-flip p-values for the columns of ``d`` (n queries x m columns).

    Parameters
    ----------
    d : array of shape (n,) or (n, m)
        Per-query differences treatment - control; the columns may be metrics and treatments.
    families : sequence of m labels, optional
        Columns with the same label form one multiplicity family (default: all columns, one family).
        Every family is adjusted on the same sign vectors.
    n_resamples : int
        Random sign vectors B; when 2^n <= B all 2^n are enumerated and the p-values are exact.
    rng : numpy.random.Generator
        The source of the sign vectors (one 64-bit draw per 64 queries per vector, as
        :func:`~abcompare.stats.permutation.sign_flip_test` uses, so raw p-values agree with it).
    batch_bytes, progress
        Batch size of the vectorised products, and an optional ``progress(done, total)`` callback.
    alternative : {'two-sided', 'greater'}
        ``greater`` tests mean(d) > 0 one-sided: t and its family maxima are taken with their sign
        (M*_F = max_{j in F} t*_j, p_adj_j = (1 + #{M*_F >= t_j}) / (B + 1)); the critical values and
        :meth:`MaxTResult.alpha_effective` are the two-sided ones' and are not meant for it.

    Returns
    -------
    MaxTResult
        ``statistic`` (studentized t), ``pvalue`` (raw), ``pvalue_adjusted``, ``null_max``, ...

    Notes
    -----
    Under the null, each query's row of differences is as likely to appear with either sign; flipping a
    whole row keeps the dependence between the columns. With t*_j the studentized mean of column j under a
    sign vector and M*_F = max_{j in F} |t*_j| the maximum over the column's family F,

        p_adj_j = (1 + #{M*_F >= |t_j|}) / (B + 1)     (#{...} / 2^n when enumerated),

    which controls the family-wise error rate strongly under subset pivotality (Westfall & Young 1993).
    Studentizing puts columns of different spread on one scale; within one column |t| is monotone in
    |sum| (the sum of squares does not change under sign flips), so the raw p-value is the plain
    sign-flip test's. A raw hit always counts as an adjusted hit, so p_adj >= p. A 1-D ``d`` is one
    column (the result's arrays have length 1).

    References
    ----------
    P. H. Westfall and S. S. Young, *Resampling-Based Multiple Testing*, Wiley, 1993.
    M. D. Smucker, J. Allan and B. Carterette, "A comparison of statistical significance tests for
    information retrieval evaluation", CIKM 2007.
    """
    x, _ = as_columns(d)
    n, m = x.shape
    if alternative not in ALTERNATIVES:
        raise ValueError(f"alternative must be one of {', '.join(ALTERNATIVES)}, got {alternative!r}")
    one_sided = alternative == "greater"
    if n_resamples < 1:
        raise ValueError("n_resamples must be at least 1")
    if n < 2:
        raise ValueError("a studentized statistic needs at least 2 queries")
    codes, labels = _family_codes(families, m)
    n_families = len(labels)
    rng = rng if rng is not None else np.random.default_rng()
    order = np.argsort(codes, kind="stable")
    starts = np.flatnonzero(np.r_[True, np.diff(codes[order]) != 0])
    total = x.sum(axis=0)
    squares = (x * x).sum(axis=0)
    gamma = _RTOL * np.abs(x).sum(axis=0)
    t_obs = studentized(total, squares, n, gamma)
    if one_sided:  # t itself, loosened by the tolerance whatever its sign (an infinite t stays infinite)
        threshold = np.where(t_obs >= 0, t_obs * (1.0 - _T_RTOL), t_obs * (1.0 + _T_RTOL))
        observed = total - gamma
    else:
        threshold = np.abs(t_obs) * (1.0 - _T_RTOL)
        observed = np.abs(total) - gamma
    exact = n < 63 and 2**n <= n_resamples
    used = 2**n if exact else int(n_resamples)
    null_max = np.empty((used, n_families))
    raw_hits = np.zeros(m, dtype=np.int64)
    adjusted_hits = np.zeros(m, dtype=np.int64)
    done = 0
    for rows in chunk_sizes(used, max(n, m), batch_bytes):
        bits = all_sign_bits(n, done, done + rows) if exact else random_sign_bits(rng, rows, n)
        sums = total - 2.0 * (bits @ x)
        raw = (sums if one_sided else np.abs(sums)) >= observed
        t = studentized(sums, squares, n, gamma)
        t = t if one_sided else np.abs(t)
        family_max = np.maximum.reduceat(t[:, order], starts, axis=1)
        null_max[done : done + rows] = family_max
        raw_hits += raw.sum(axis=0)
        adjusted_hits += (raw | (family_max[:, codes] >= threshold)).sum(axis=0)
        done += rows
        if progress is not None and not exact:
            progress(done, used)
    if exact and progress is not None:
        progress(n_resamples, n_resamples)
    pvalue, adjusted = _pvalues(raw_hits, adjusted_hits, used, exact, codes, n_families)
    return MaxTResult(t_obs, pvalue, adjusted, codes, labels, null_max, used, exact)


def _pvalues(
    raw_hits: np.ndarray,
    adjusted_hits: np.ndarray,
    used: int,
    exact: bool,
    codes: np.ndarray,
    n_families: int,
) -> tuple[np.ndarray, np.ndarray]:
    """The raw and adjusted p-values from the hit counts: hits / 2^n when enumerated, else
    (1 + hits) / (B + 1); a family of one column is not adjusted."""
    if exact:
        pvalue, adjusted = raw_hits / used, adjusted_hits / used
    else:
        pvalue, adjusted = (raw_hits + 1.0) / (used + 1.0), (adjusted_hits + 1.0) / (used + 1.0)
    pvalue, adjusted = np.minimum(pvalue, 1.0), np.minimum(adjusted, 1.0)
    single = np.bincount(codes, minlength=n_families)[codes] == 1
    return pvalue, np.where(single, pvalue, adjusted)
