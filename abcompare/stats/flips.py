"""The sign-flip test of a family of columns, with the one choice between max-T and the plain test.

``correction="maxt"`` runs Westfall-Young max-T (:func:`~abcompare.stats.maxt.max_t_sign_flip`) on the
sign vectors, so the family is adjusted on the very flips that gave the raw p-values; any other
correction runs the plain sign-flip test (:func:`~abcompare.stats.permutation.sign_flip_test`) and adjusts
each family's p-values with it. The comparison, the non-inferiority test and the pooled comparison all
call :func:`family_sign_flips`; :func:`family_correction` says when max-T has nothing to adjust.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from abcompare.core.vocabulary import HOLM, MAXT
from abcompare.stats.correction import adjust_pvalues
from abcompare.stats.maxt import MaxTResult, max_t_sign_flip
from abcompare.stats.permutation import sign_flip_test


@dataclass(frozen=True)
class FamilyFlips:
    """Per column: the raw sign-flip p-value and the p-value adjusted within its family (``correction``);
    the sign vectors used and whether they were enumerated; the max-T result when max-T ran."""

    pvalue: np.ndarray
    pvalue_adjusted: np.ndarray
    n_resamples: int
    exact: bool
    maxt: MaxTResult | None


def family_correction(correction: str, columns: int, changed_queries: int) -> str:
    """The correction a family is adjusted with: max-T of one column, or over at most one changed query
    (every sign vector then ties), is the plain test, and Holm (which changes nothing there) names it."""
    if correction == MAXT and (columns < 2 or changed_queries < 2):
        return HOLM
    return correction


def family_sign_flips(
    x: np.ndarray,
    correction: str,
    *,
    families: Sequence[object] | None = None,
    n_resamples: int,
    rng: np.random.Generator,
    progress: Callable[[int, int], None] | None = None,
    alternative: str = "two-sided",
) -> FamilyFlips:
    """The sign-flip test of every column of ``x`` ((n,) or (n, m)) on one set of sign vectors, adjusted
    within each family (``families``: one label per column; default one family) by ``correction``."""
    if correction == MAXT:
        maxt = max_t_sign_flip(
            x, families, n_resamples=n_resamples, rng=rng, progress=progress, alternative=alternative
        )
        return FamilyFlips(maxt.pvalue, maxt.pvalue_adjusted, maxt.n_resamples, maxt.exact, maxt)
    flips = sign_flip_test(x, n_resamples, rng, progress=progress, alternative=alternative)
    pvalue = np.atleast_1d(flips.pvalue)
    labels = np.asarray([0] * pvalue.size if families is None else list(families), dtype=object)
    adjusted = np.empty_like(pvalue, dtype=np.float64)
    for label in dict.fromkeys(labels.tolist()):
        columns = np.flatnonzero(labels == label)
        adjusted[columns] = adjust_pvalues(pvalue[columns], correction)
    return FamilyFlips(pvalue, adjusted, flips.n_resamples, flips.exact, None)
