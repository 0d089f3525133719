"""The log2 rank discount of DCG, tabulated once so that every code path uses the very same floats."""

from __future__ import annotations

import numpy as np

_TABLE: np.ndarray = np.empty(0)


def discounts(n: int) -> np.ndarray:
    """``1 / log2(rank + 1)`` for ranks ``1..n`` (index 0 is rank 1), as a read-only float64 array."""
    global _TABLE
    if n > _TABLE.size:
        size = max(n, 2 * _TABLE.size, 1024)
        table = 1.0 / np.log2(np.arange(2, size + 2, dtype=np.float64))
        table.flags.writeable = False
        _TABLE = table
    return _TABLE[:n]


def discount(position: int) -> float:
    """The discount of the 0-based ``position`` (rank ``position + 1``) as a Python float."""
    return float(discounts(position + 1)[position])
