"""Minimum detectable effect of a paired comparison: the smallest true mean difference it can show."""

from __future__ import annotations

import numpy as np
from scipy import stats


def minimum_detectable_effect(
    sd: np.ndarray | float, n: int, alpha: np.ndarray | float = 0.05, power: float = 0.8
) -> np.ndarray | float:
    """Normal-approximation MDE of a two-sided test: (z_{1-alpha/2} + z_{power}) * sd(d) / sqrt(n).

    ``sd`` is the observed standard deviation of the per-query differences; the result is in metric units.
    ``alpha`` may be one level per test (after a multiple-comparison correction); a level of 0 (no
    difference can reach significance, e.g. too few resamples for the correction) gives an infinite MDE.
    """
    levels = np.asarray(alpha, dtype=np.float64)
    if np.any(~(levels >= 0.0) | (levels >= 1.0)) or not 0.0 < power < 1.0:
        raise ValueError("alpha must lie in [0, 1) and power strictly between 0 and 1")
    z = stats.norm.isf(levels / 2.0) + stats.norm.ppf(power)
    spread = np.asarray(sd, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        mde = np.where(spread == 0, 0.0, z * spread / np.sqrt(n))
    return mde if mde.ndim else float(mde)
