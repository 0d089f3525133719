"""Multiple-comparison correction of a family of p-values: Holm (FWER) or Benjamini-Hochberg (FDR).

Max-T (``maxt``) needs the per-query differences, not only the p-values: see :mod:`abcompare.stats.maxt`.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from abcompare.core.vocabulary import BH, CORRECTIONS, HOLM, MAXT


def canonical_correction(method: str) -> str:
    """The canonical name of a correction (``"fdr_bh" -> "bh"``); ValueError for an unknown one."""
    kind = CORRECTIONS.get(str(method).lower())
    if kind is None:
        raise ValueError(f"unknown correction {method!r}; use one of {', '.join(CORRECTIONS)}")
    return kind


def holm(pvalues: np.ndarray) -> np.ndarray:
    """Holm's step-down adjusted p-values: max_{j<=i} min(1, (m - j + 1) p_(j)), in the input order."""
    p = np.asarray(pvalues, dtype=np.float64)
    m = p.size
    if m == 0:
        return p.copy()
    order = np.argsort(p, kind="stable")
    stepped = np.maximum.accumulate((m - np.arange(m)) * p[order])
    adjusted = np.empty_like(p)
    adjusted[order] = np.minimum(stepped, 1.0)
    return adjusted


def benjamini_hochberg(pvalues: np.ndarray) -> np.ndarray:
    """Benjamini-Hochberg adjusted p-values (FDR), via ``scipy.stats.false_discovery_control``."""
    p = np.asarray(pvalues, dtype=np.float64)
    if p.size == 0:
        return p.copy()
    return np.asarray(stats.false_discovery_control(p, method="bh"), dtype=np.float64)


def adjust_pvalues(pvalues: np.ndarray, method: str = "holm") -> np.ndarray:
    """Adjust a family of p-values with ``method`` ('holm', 'bh' or 'none', which returns them unchanged)."""
    kind = canonical_correction(method)
    if kind == MAXT:
        raise ValueError("max-T adjusts from the per-query differences: use stats.maxt.max_t_sign_flip")
    if kind == HOLM:
        return holm(pvalues)
    if kind == BH:
        return benjamini_hochberg(pvalues)
    return np.asarray(pvalues, dtype=np.float64).copy()


def per_test_alpha(pvalues: np.ndarray, method: str, alpha: float) -> np.ndarray:
    """The level each raw p-value of the family is held to under ``method`` ('holm', 'bh' or 'none').

    The step at which a test is judged depends on its rank r among the m p-values (ascending): Holm
    compares p_(r) with alpha / (m - r + 1), Benjamini-Hochberg with alpha r / m. Tied p-values are
    accepted or rejected together, at the first tied step for Holm (the lowest rank) and the last for BH
    (the highest). Used for the minimum detectable effect, so that it is computed at the level the verdict
    actually used.
    """
    p = np.asarray(pvalues, dtype=np.float64)
    kind = canonical_correction(method)
    if kind == MAXT:
        raise ValueError("max-T levels come from its null distribution: use MaxTResult.alpha_effective")
    m = p.size
    if kind not in (HOLM, BH) or m <= 1:
        return np.full(m, float(alpha))
    if kind == HOLM:
        return alpha / (m - stats.rankdata(p, method="min") + 1)
    return alpha * (stats.rankdata(p, method="max") / m)
