"""The one rule of a relevance grade, shared by every annotation format (pool files included)."""

from __future__ import annotations

import numpy as np

from abcompare.core.limits import MAX_GRADE, MIN_GRADE


def grade_problem(grades: np.ndarray) -> np.ndarray:
    """Which float grades are not whole numbers in ``[MIN_GRADE, MAX_GRADE]`` (NaN and inf included): the one
    rule for every annotation format, so a grade of 1e30 never wraps to a negative integer."""
    with np.errstate(invalid="ignore"):
        return (
            ~np.isfinite(grades) | (np.floor(grades) != grades) | (grades < MIN_GRADE) | (grades > MAX_GRADE)
        )
