"""Paired permutation (sign-flip randomization) test of mean(d) = 0, vectorised over resamples and metrics."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from abcompare.stats._chunks import BATCH_BYTES, chunk_sizes, single_threaded_blas
from abcompare.stats.paired import as_columns

#: Relative tolerance for sums that are equal in exact arithmetic but differ by rounding (as scipy does).
_RTOL = 100 * np.finfo(np.float64).eps
#: The alternatives of a sign-flip test: two-sided (mean(d) != 0) and one-sided (mean(d) > 0).
ALTERNATIVES = ("two-sided", "greater")


@dataclass(frozen=True)
class PermutationResult:
    """Per metric: observed mean difference and p-value (two-sided, or one-sided ``greater``); ``exact``
    when all 2^n flips were used."""

    statistic: np.ndarray
    pvalue: np.ndarray
    n_resamples: int
    exact: bool


def all_sign_bits(n: int, start: int, stop: int) -> np.ndarray:
    """Rows start..stop-1 of all 0/1 vectors of length n: bit i of the row number flips query i."""
    rows = np.arange(start, stop, dtype=np.uint64)[:, None]
    return ((rows >> np.arange(n, dtype=np.uint64)) & np.uint64(1)).astype(np.float64)


def random_sign_bits(rng: np.random.Generator, rows: int, n: int) -> np.ndarray:
    """Uniform random 0/1 matrix (rows x n) from raw 64-bit draws (one draw per 64 queries per row)."""
    words = rng.bit_generator.random_raw((rows, -(-n // 64)))
    return np.unpackbits(words.view(np.uint8), axis=1, count=n, bitorder="little").astype(np.float64)


@single_threaded_blas()
def sign_flip_test(
    d: np.ndarray,
    n_resamples: int = 10_000,
    rng: np.random.Generator | None = None,
    *,
    batch_bytes: int = BATCH_BYTES,
    progress: Callable[[int, int], None] | None = None,
    alternative: str = "two-sided",
) -> PermutationResult:
    """Sign-flip test of mean(d) = 0 for each column of ``d`` ((n,) or (n, metrics)).

    Under the null each query's difference is equally likely to have either sign. With 2^n <= n_resamples
    every sign vector is enumerated and p = count / 2^n exactly (scipy's rule); otherwise n_resamples
    random sign vectors give p = (b + 1) / (B + 1), b = resamples with |sum| >= |observed sum|, never 0.
    ``alternative="greater"`` is the one-sided test of mean(d) > 0: b counts resamples with
    sum >= observed sum. One random sign vector is shared by all columns, so the columns are tested on the
    same resamples.
    """
    x, squeeze = as_columns(d)
    n = x.shape[0]
    if n_resamples < 1:
        raise ValueError("n_resamples must be at least 1")
    if alternative not in ALTERNATIVES:
        raise ValueError(f"alternative must be one of {', '.join(ALTERNATIVES)}, got {alternative!r}")
    rng = rng if rng is not None else np.random.default_rng()
    total = x.sum(axis=0)
    one_sided = alternative == "greater"
    observed = total if one_sided else np.abs(total)
    # Flipping the queries in a 0/1 vector s turns the sum S into S - 2 s.d, so only s.d is computed.
    # Ties with the observed sum (frequent: retrieval metrics are discrete) are kept within rounding.
    gamma = _RTOL * np.abs(x).sum(axis=0)

    def extreme(sums: np.ndarray) -> np.ndarray:
        return ((sums if one_sided else np.abs(sums)) >= observed - gamma).sum(axis=0)

    exact = n < 63 and 2**n <= n_resamples
    hits = np.zeros(x.shape[1], dtype=np.int64)
    if exact:
        for start in range(0, 2**n, 4096):
            bits = all_sign_bits(n, start, min(start + 4096, 2**n))
            hits += extreme(total - 2.0 * (bits @ x))
        pvalue = hits / 2**n
        used = 2**n
        if progress is not None:
            progress(n_resamples, n_resamples)
    else:
        done = 0
        for rows in chunk_sizes(n_resamples, n, batch_bytes):
            bits = random_sign_bits(rng, rows, n)
            hits += extreme(total - 2.0 * (bits @ x))
            done += rows
            if progress is not None:
                progress(done, n_resamples)
        pvalue = (hits + 1.0) / (n_resamples + 1.0)
        used = n_resamples
    pvalue = np.minimum(pvalue, 1.0)
    mean = total / n
    if squeeze:
        return PermutationResult(mean[0], pvalue[0], used, exact)
    return PermutationResult(mean, pvalue, used, exact)
