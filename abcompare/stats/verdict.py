"""The verdict of each comparison row, from its adjusted p-value, direction and interval (one rule)."""

from __future__ import annotations

import numpy as np

from abcompare.core.vocabulary import BETTER, INCONCLUSIVE, NO_DIFFERENCE, WORSE


def verdicts(
    delta: np.ndarray,
    p_adjusted: np.ndarray,
    ci_low: np.ndarray,
    ci_high: np.ndarray,
    alpha: float,
    min_effect: float | None = None,
) -> np.ndarray:
    """``better``/``worse`` when the adjusted p is <= alpha (by the sign of delta); otherwise
    ``inconclusive`` when ``min_effect`` is set and the interval includes both 0 and an effect of
    ``min_effect`` or more in either direction, else ``no significant difference``.

    With ``min_effect`` set, ``no significant difference`` therefore also says that the interval rules out
    any change as large as the smallest effect of interest (an equivalence-style reading).
    """
    delta, p = np.asarray(delta, dtype=np.float64), np.asarray(p_adjusted, dtype=np.float64)
    low, high = np.asarray(ci_low, dtype=np.float64), np.asarray(ci_high, dtype=np.float64)
    significant = p <= alpha
    undecided = np.zeros(delta.shape, dtype=bool)
    if min_effect is not None:
        undecided = (low <= 0) & (high >= 0) & ((low <= -min_effect) | (high >= min_effect))
    return np.select(
        [significant & (delta > 0), significant & (delta < 0), ~significant & undecided],
        [BETTER, WORSE, INCONCLUSIVE],
        default=NO_DIFFERENCE,
    )
