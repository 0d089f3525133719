"""Multiple-comparison correction of a family of p-values: Holm (FWER) or Benjamini-Hochberg (FDR)."""

from __future__ import annotations

import numpy as np
from scipy import stats

#: Accepted names of each correction method.
CORRECTIONS: dict[str, str] = {
    "holm": "holm",
    "bh": "bh",
    "fdr_bh": "bh",
    "benjamini-hochberg": "bh",
    "none": "none",
}


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
    """Adjust a family of p-values with ``method`` in :data:`CORRECTIONS` ('none' returns them unchanged)."""
    kind = CORRECTIONS.get(str(method).lower())
    if kind is None:
        raise ValueError(f"unknown correction {method!r}; use one of {', '.join(CORRECTIONS)}")
    if kind == "holm":
        return holm(pvalues)
    if kind == "bh":
        return benjamini_hochberg(pvalues)
    return np.asarray(pvalues, dtype=np.float64).copy()
