"""Non-inferiority: the one-sided paired test that the treatment is not worse than the control by more
than a margin, H0: mean(d) <= -margin against H1: mean(d) > -margin, on the shifted differences d + margin.

"No significant difference" is not "no worse": a small query set fails to find a loss as easily as a gain.
This test answers the question a CI gate asks ("is the change at most ``margin`` worse?") with its own
p-value. The columns of ``d`` (one per treatment, on the primary metric) are one family, adjusted with the
comparison's correction, as the primary family of the two-sided test is.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from abcompare.core.vocabulary import MAXT, NON_INFERIOR, NOT_SHOWN_NON_INFERIOR, PERMUTATION, T_TEST
from abcompare.stats.correction import adjust_pvalues, canonical_correction
from abcompare.stats.flips import family_sign_flips
from abcompare.stats.paired import as_columns
from abcompare.stats.ttest import paired_ttest

#: The primary tests with a one-sided shifted form here: the paired t-test and the sign-flip test (on
#: d + margin). The bootstrap's and Wilcoxon's are not built: a margin with them is a config error.
NON_INFERIORITY_TESTS: tuple[str, ...] = (T_TEST, PERMUTATION)


def margin_problem(margin: object, primary: str) -> str | None:
    """What is wrong with a non-inferiority margin for the primary test ``primary``, or None: the one rule
    (a finite number >= 0, in the primary metric's units, for a test in :data:`NON_INFERIORITY_TESTS`)."""
    if margin is None:
        return None
    if isinstance(margin, bool) or not isinstance(margin, (int, float)) or not math.isfinite(margin):
        return f"non_inferiority_margin must be a finite number >= 0 in metric units, got {margin!r}"
    if margin < 0:
        return f"non_inferiority_margin must be >= 0 (how much worse is still acceptable), got {margin!r}"
    if primary not in NON_INFERIORITY_TESTS:
        return (
            f"the non-inferiority test has a one-sided form for the primary tests "
            f"{' and '.join(NON_INFERIORITY_TESTS)} only, and the primary test is {primary!r}"
        )
    return None


@dataclass(frozen=True)
class NonInferiorityResult:
    """Per column (treatment): the shifted mean ``mean(d) + margin``, the one-sided p-value, the p-value
    adjusted within the family of columns, and the verdict at ``alpha`` (``non-inferior`` when the adjusted
    p is <= alpha, else ``not shown non-inferior``)."""

    margin: float
    test: str
    correction: str
    statistic: np.ndarray
    pvalue: np.ndarray
    pvalue_adjusted: np.ndarray
    verdict: np.ndarray


def non_inferiority_test(
    d: np.ndarray,
    margin: float,
    *,
    test: str = PERMUTATION,
    correction: str = "holm",
    alpha: float = 0.05,
    n_resamples: int = 10_000,
    rng: np.random.Generator | None = None,
) -> NonInferiorityResult:
    """One-sided test of mean(d) > -margin for each column of ``d`` ((n,) or (n, treatments)).

    ``test="t"``: t = (mean(d) + margin) / (sd(d) / sqrt(n)), p = P(T_{n-1} >= t), which is
    ``scipy.stats.ttest_rel(treatment + margin, control, alternative="greater")``. ``test="permutation"``:
    the sign-flip test on d + margin, p = #{sum of s * (d + margin) >= sum of d + margin} over the sign
    vectors s (all 2^n when 2^n <= n_resamples, else (b + 1) / (B + 1)). The columns are one family,
    adjusted with ``correction`` (``maxt``: one-sided max-T on the same sign vectors).
    """
    problem = margin_problem(margin, test)
    if problem is not None:
        raise ValueError(problem)
    correction = canonical_correction(correction)
    shifted, _ = as_columns(d)
    shifted = shifted + float(margin)
    if correction == MAXT and test != PERMUTATION:
        raise ValueError("max-T adjusts sign-flip p-values: use test='permutation' with correction='maxt'")
    if test == T_TEST:
        t = np.atleast_1d(paired_ttest(shifted).statistic)  # +-inf / 0 for columns without spread
        pvalue = stats.t.sf(t, shifted.shape[0] - 1)
        adjusted = adjust_pvalues(pvalue, correction)
    else:
        flips = family_sign_flips(
            shifted, correction, n_resamples=n_resamples, rng=rng, alternative="greater"
        )
        pvalue, adjusted = flips.pvalue, flips.pvalue_adjusted
    verdict = np.where(adjusted <= alpha, NON_INFERIOR, NOT_SHOWN_NON_INFERIOR)
    return NonInferiorityResult(
        float(margin), test, correction, shifted.mean(axis=0), pvalue, adjusted, verdict
    )
