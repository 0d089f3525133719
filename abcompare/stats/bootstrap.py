"""Paired bootstrap of the mean difference: percentile and BCa intervals, and a studentized p-value."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import special

from abcompare.stats._chunks import BATCH_BYTES, chunk_sizes, single_threaded_blas
from abcompare.stats.paired import as_columns, constant_columns

_RTOL = 100 * np.finfo(np.float64).eps


@dataclass(frozen=True)
class BootstrapResult:
    """Per metric: percentile and BCa intervals, studentized two-sided p-value, and the resampled means.

    ``ci_method`` is "bca", or "percentile" where BCa is undefined (it then equals the percentile interval).
    """

    statistic: np.ndarray
    pct_low: np.ndarray
    pct_high: np.ndarray
    bca_low: np.ndarray
    bca_high: np.ndarray
    pvalue: np.ndarray
    ci_method: np.ndarray
    means: np.ndarray
    n_resamples: int


class CountSampler:
    """Draws how often each of n queries appears in each bootstrap resample, into buffers reused per batch.

    Fresh multi-MB arrays per batch cost page faults that, measured, took as long as the arithmetic.
    Indices are floor(u * n) for uniform doubles u (bias below n / 2^53), which also makes the random
    stream independent of the batch size.
    """

    def __init__(self, rows: int, n: int) -> None:
        self.n = n
        self.uniform = np.empty((rows, n))
        self.index = np.empty((rows, n), dtype=np.int64)
        self.counts = np.zeros(rows * n, dtype=np.int64)
        self.offsets = (np.arange(rows, dtype=np.int64) * n)[:, None]

    def draw(self, rng: np.random.Generator, rows: int) -> np.ndarray:
        """Counts for ``rows`` resamples (rows x n, float64); the array is overwritten by the next draw."""
        n = self.n
        u, idx, counts = self.uniform[:rows], self.index[:rows], self.counts[: rows * n]
        rng.random(out=u)
        np.multiply(u, n, out=u)
        np.copyto(idx, u, casting="unsafe")  # truncation = floor, as u >= 0
        np.minimum(idx, n - 1, out=idx)  # u * n can round up to n
        np.add(idx, self.offsets[:rows], out=idx)  # row r counts into counts[r * n : (r + 1) * n]
        counts.fill(0)
        np.add.at(counts, idx.ravel(), 1)
        np.copyto(u, counts.reshape(rows, n), casting="unsafe")
        return u


def _bca(
    means: np.ndarray, dev: np.ndarray, c: np.ndarray, alpha: float, tol: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """BCa bounds as scipy.stats.bootstrap computes them (bias from the resamples, acceleration by jackknife).

    The jackknife of a mean is analytic: theta_dot - theta_(i) = c_i / (n - 1), c = d - mean(d).
    """
    below = (dev < -tol).sum(axis=0)
    at_or_below = (dev <= tol).sum(axis=0)
    z0 = special.ndtri((below + at_or_below) / (2.0 * means.shape[0]))
    with np.errstate(divide="ignore", invalid="ignore"):
        accel = (c**3).sum(axis=0) / (6.0 * ((c**2).sum(axis=0)) ** 1.5)
        bounds = []
        for z_alpha in (special.ndtri(alpha / 2.0), special.ndtri(1.0 - alpha / 2.0)):
            shifted = z0 + z_alpha
            bounds.append(special.ndtr(z0 + shifted / (1.0 - accel * shifted)))
    low_q, high_q = bounds
    ok = np.isfinite(low_q) & np.isfinite(high_q)
    low = np.full(means.shape[1], np.nan)
    high = np.full(means.shape[1], np.nan)
    for j in np.flatnonzero(ok):
        low[j], high[j] = np.percentile(means[:, j], [100.0 * low_q[j], 100.0 * high_q[j]])
    return low, high


@single_threaded_blas()
def paired_bootstrap(
    d: np.ndarray,
    n_resamples: int = 10_000,
    rng: np.random.Generator | None = None,
    alpha: float = 0.05,
    *,
    batch_bytes: int = BATCH_BYTES,
    progress: Callable[[int, int], None] | None = None,
) -> BootstrapResult:
    """Resample queries with replacement ``n_resamples`` times; intervals at level 1 - alpha for mean(d).

    The p-value is the studentized (bootstrap-t) test of mean(d) = 0: p = (1 + #{|t*| >= |t|}) / (B + 1),
    t* = (mean* - mean) / se*, which keeps its level on small query sets where the shift method does not.
    All columns of ``d`` ((n,) or (n, metrics)) share the same resampled queries.
    """
    x, squeeze = as_columns(d)
    n, m = x.shape
    if n_resamples < 2:
        raise ValueError("n_resamples must be at least 2")
    rng = rng if rng is not None else np.random.default_rng()
    mean = x.mean(axis=0)
    constant = constant_columns(x)  # every query has the same difference: nothing varies
    # Centred: resampled sums of c and c^2 give the mean and variance without cancellation.
    c = np.where(constant, 0.0, x - mean)
    both = np.concatenate([c, c * c], axis=1)
    tol = _RTOL * np.abs(c).sum(axis=0) / n
    se = np.where(constant, 0.0, x.std(axis=0, ddof=1) / np.sqrt(n))
    with np.errstate(divide="ignore", invalid="ignore"):
        t_obs = np.where(se > 0, mean / np.where(se > 0, se, 1.0), np.sign(mean) * np.inf)
    t_obs = np.abs(np.nan_to_num(t_obs, nan=0.0))
    dev = np.empty((n_resamples, m))
    hits = np.zeros(m, dtype=np.int64)
    done = 0
    sizes = list(chunk_sizes(n_resamples, n, batch_bytes))
    sampler = CountSampler(sizes[0], n)
    for rows in sizes:
        sums = sampler.draw(rng, rows) @ both
        shift = sums[:, :m] / n
        var = np.maximum(sums[:, m:] - n * shift * shift, 0.0) / (n - 1)
        se_b = np.sqrt(var / n)
        with np.errstate(divide="ignore", invalid="ignore"):
            t_b = np.abs(shift) / se_b
        t_b = np.where(np.abs(shift) <= tol, 0.0, t_b)  # a resample with the observed mean is not extreme
        hits += (t_b >= t_obs * (1.0 - 1e-12)).sum(axis=0)
        dev[done : done + rows] = shift
        done += rows
        if progress is not None:
            progress(done, n_resamples)
    means = mean + dev
    pvalue = (hits + 1.0) / (n_resamples + 1.0)
    pct_low, pct_high = np.percentile(means, [100.0 * alpha / 2.0, 100.0 * (1.0 - alpha / 2.0)], axis=0)
    bca_low, bca_high = _bca(means, dev, c, alpha, tol)
    bca_low = np.where(constant, mean, bca_low)
    bca_high = np.where(constant, mean, bca_high)
    pct_low = np.where(constant, mean, pct_low)
    pct_high = np.where(constant, mean, pct_high)
    fallback = ~(np.isfinite(bca_low) & np.isfinite(bca_high))
    ci_method = np.where(fallback, "percentile", "bca")
    bca_low = np.where(fallback, pct_low, bca_low)
    bca_high = np.where(fallback, pct_high, bca_high)
    fields = (mean, pct_low, pct_high, bca_low, bca_high, pvalue, ci_method)
    if squeeze:
        fields = tuple(f[0] for f in fields)
        return BootstrapResult(*fields, means[:, 0], n_resamples)
    return BootstrapResult(*fields, means, n_resamples)
