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


# ------------------------------------------------------------------------------------------ minimum effect
#: With no ``significance.min_effect``, the smallest effect of interest a verdict is read against: this
#: share of the control's mean on the row's metric (1%).
DEFAULT_RELATIVE_EFFECT = 0.01
#: Where a row's minimum effect came from (its ``min_effect_source``): the config, or the 1% default.
FROM_CONFIG = "significance.min_effect"
FROM_CONTROL_MEAN = "1% of the control's mean"


def minimum_effect_columns(
    verdict: np.ndarray,
    delta: np.ndarray,
    control_mean: np.ndarray | None,
    min_effect: float | None,
) -> dict[str, np.ndarray]:
    """Per row, the smallest effect of interest it is read against and whether a significant change falls
    short of it (the large-n reading: with thousands of queries a negligible change is significant).

    ``min_effect_used``: ``min_effect`` when set, else 1% of ``|control_mean|`` (NaN with neither, e.g. a
    pooled row, which has no control mean); ``min_effect_source``: :data:`FROM_CONFIG`,
    :data:`FROM_CONTROL_MEAN` or ``""``; ``below_min_effect``: the verdict is ``better`` or ``worse`` and
    the point estimate ``|delta|`` is smaller than ``min_effect_used`` (strictly: a change exactly at the
    minimum counts as reaching it). The point estimate decides, not the interval: the verdict's direction
    and the gate's "gain" are the estimate's, and at the sizes where this matters the interval is narrow
    enough to agree with it; the sentence says whether the interval also rules the minimum out.
    """
    verdict = np.asarray(verdict, dtype=object)
    delta = np.asarray(delta, dtype=np.float64)
    if min_effect is not None:
        used = np.full(delta.shape, float(min_effect))
        source = np.full(delta.shape, FROM_CONFIG, dtype=object)
    elif control_mean is not None:
        used = DEFAULT_RELATIVE_EFFECT * np.abs(np.asarray(control_mean, dtype=np.float64))
        source = np.full(delta.shape, FROM_CONTROL_MEAN, dtype=object)
    else:
        used = np.full(delta.shape, np.nan)
        source = np.full(delta.shape, "", dtype=object)
    significant = (verdict == BETTER) | (verdict == WORSE)
    with np.errstate(invalid="ignore"):
        below = significant & (np.abs(delta) < used)
    return {"min_effect_used": used, "min_effect_source": source, "below_min_effect": below}
