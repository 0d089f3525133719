"""Minimum detectable effect of a paired comparison: the smallest true mean difference it can show."""

from __future__ import annotations

import numpy as np
from scipy import stats


def minimum_detectable_effect(
    sd: np.ndarray | float, n: int, alpha: float = 0.05, power: float = 0.8
) -> np.ndarray | float:
    """Normal-approximation MDE of a two-sided test: (z_{1-alpha/2} + z_{power}) * sd(d) / sqrt(n).

    ``sd`` is the observed standard deviation of the per-query differences; the result is in metric units.
    """
    if not 0.0 < alpha < 1.0 or not 0.0 < power < 1.0:
        raise ValueError("alpha and power must lie strictly between 0 and 1")
    z = stats.norm.ppf(1.0 - alpha / 2.0) + stats.norm.ppf(power)
    return z * np.asarray(sd, dtype=np.float64) / np.sqrt(n)
