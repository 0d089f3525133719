"""One rule for a value bound for JSON (``--json``, ``result.json``, the judge's stage): numpy scalars as
Python values, NaN and the infinities as ``None``; JSON has neither, and ``json.dumps`` would write the
invalid ``NaN`` or ``Infinity``."""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import pandas as pd


def json_value(value: object) -> object:
    """``value`` as JSON has it: a numpy scalar as its Python value, a non-finite float as ``None``."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def json_row(row: Mapping[str, object]) -> dict[str, object]:
    """A table row (or any mapping) with :func:`json_value` applied to each value."""
    return {key: json_value(value) for key, value in row.items()}


def json_records(frame: pd.DataFrame) -> list[dict[str, object]]:
    """A table's rows as JSON-ready records (:func:`json_row`), in order."""
    return [json_row(row) for row in frame.to_dict(orient="records")]
