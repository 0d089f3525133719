"""Each row's interval at the level its verdict uses, so a row's interval and its verdict say the same.

The verdict comes from the primary test's p-value adjusted within the row's family; an unadjusted 95%
bootstrap interval beside it can exclude 0 while the verdict says "no significant difference". The
interval here inverts the verdict's own test at the verdict's own level:

- permutation test with max-T: delta +- c se, c the max-T critical value of the row's family at alpha,
  read off the very sign vectors the p-values use (simultaneous: all rows of a family cover together);
- permutation test with Holm, Benjamini-Hochberg or none: delta +- c_j se, c_j the critical value of the
  row's own sign-flip null at the level its raw p was held to (Holm alpha/(m - r + 1), BH alpha r / m,
  none alpha): within one column |t| is monotone in |sum|, so the interval excludes 0 exactly when the raw
  p passes that level;
- the t test (and Wilcoxon or the bootstrap as primary, approximately): the t interval at that level.

Where the two can still differ (Holm stopped at an earlier row, BH accepted a later one, a tie at the
critical value, a test the t interval only approximates), ``ci_agrees`` is False and ``ci_note`` says why.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from abcompare.core.vocabulary import BH, CORRECTION_LABELS, HOLM, MAXT, PERMUTATION, T_TEST
from abcompare.stats.maxt import MaxTResult

#: The interval's method, as the ``ci_method`` column names it.
MAXT_SIMULTANEOUS = "max-T simultaneous"
SIGN_FLIP = "sign-flip"
T_INTERVAL = "t"


def verdict_interval(
    delta: np.ndarray,
    se: np.ndarray,
    n_queries: np.ndarray,
    level: np.ndarray,
    *,
    null: MaxTResult | None,
) -> tuple[np.ndarray, np.ndarray, str]:
    """``delta +- c se`` with c the critical value at ``level`` (per row): from ``null``'s sign flips
    when given (its ``families`` say which rows share a maximum), else Student's t with n - 1 degrees of
    freedom. A row without spread (se 0) is the point delta, or the whole line when no level can reject."""
    delta, se = np.asarray(delta, dtype=np.float64), np.asarray(se, dtype=np.float64)
    level = np.asarray(level, dtype=np.float64)
    if null is not None:
        c, method = null.critical_value(level), (MAXT_SIMULTANEOUS if _shares_maxima(null) else SIGN_FLIP)
    else:
        df = np.maximum(np.asarray(n_queries, dtype=np.float64) - 1, 1)
        c, method = stats.t.ppf(1.0 - level / 2.0, df), T_INTERVAL
    with np.errstate(invalid="ignore"):
        half = np.where(se > 0, c * se, np.where(np.isinf(c), np.inf, 0.0))
    return delta - half, delta + half, method


def _shares_maxima(null: MaxTResult) -> bool:
    """Whether some family of ``null`` has more than one column (max-T), not one null per column."""
    return bool(np.bincount(null.families).max() > 1)


def agreement(low: np.ndarray, high: np.ndarray, p_adjusted: np.ndarray, alpha: float) -> np.ndarray:
    """Per row: whether 'the interval excludes 0' and 'the adjusted p is <= alpha' say the same."""
    excludes = (np.asarray(low) > 0) | (np.asarray(high) < 0)
    return excludes == (np.asarray(p_adjusted, dtype=np.float64) <= alpha)


def interval_note(excludes_zero: bool, correction: str, primary: str) -> str:
    """Why a row's interval and verdict differ (only called where they do)."""
    if correction == HOLM and excludes_zero:
        return "the interval excludes 0 at this row's Holm step, but Holm stopped at a smaller p before it"
    if correction == BH and not excludes_zero:
        return "Benjamini-Hochberg passes this row through a larger p of its family, past the row's own level"
    if primary not in (PERMUTATION, T_TEST):
        return f"the interval is a t interval, the verdict the {primary} test's: they differ at the edge"
    return "the row sits at the critical value: interval and test differ by a tie"


def interval_label(correction: str, primary: str, alpha: float) -> str:
    """What the rows' intervals are, in one phrase for a table's title or a settings line."""
    confidence = f"{100 * (1 - alpha):g}%"
    test = "sign flips" if primary == PERMUTATION else "t"
    if correction == MAXT:
        return (
            f"CI: {confidence} simultaneous over the row's family (max-T critical value, the p's sign flips)"
        )
    if correction == HOLM:
        return f"CI: at each row's Holm level alpha/(m - r + 1) ({test})"
    if correction == BH:
        return f"CI: at each row's Benjamini-Hochberg level alpha r/m ({test})"
    return f"CI: {confidence}, {CORRECTION_LABELS.get(correction, correction)} correction ({test})"


def add_verdict_intervals(
    table: pd.DataFrame, correction: str, primary: str, alpha: float, null: MaxTResult | None
) -> None:
    """Set ``ci_low``/``ci_high``/``ci_method``/``ci_level`` (the interval at the verdict's level, see the
    module docstring) and ``ci_agrees``/``ci_note`` on the comparison table; needs ``alpha_effective`` and
    ``p_adjusted``. ``null``: the sign flips behind the permutation p-values (None without them)."""
    se = table["sd_delta"].to_numpy(dtype=np.float64) / np.sqrt(table["n_queries"].to_numpy(dtype=np.float64))
    if correction == MAXT and null is not None:
        level = np.full(len(table), float(alpha))
    else:
        level = table["alpha_effective"].to_numpy(dtype=np.float64)
    low, high, method = verdict_interval(
        table["delta"].to_numpy(), se, table["n_queries"].to_numpy(), level,
        null=null if primary == PERMUTATION else None,
    )  # fmt: skip
    table["ci_low"], table["ci_high"], table["ci_method"], table["ci_level"] = low, high, method, 1.0 - level
    agrees = agreement(low, high, table["p_adjusted"].to_numpy(), alpha)
    table["ci_agrees"] = agrees
    excludes = (low > 0) | (high < 0)
    table["ci_note"] = [
        "" if ok else interval_note(bool(out), correction, primary)
        for ok, out in zip(agrees, excludes, strict=True)
    ]
