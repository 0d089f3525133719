"""The rows and formats every view of a comparison shares, each written once: the order of the rows (each
treatment in table order, its primary metric first), the formats of a number, a p-value, a difference and
its interval, a sweep grid's columns and cells, and the order of the verdict section.

The console, the MLflow description, ``report.html`` and the forest figure ask these for their rows and
text and only add their own styling (colour, bold, HTML), so two screens never disagree on an order or a
digit.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from abcompare.core.vocabulary import PRIMARY, SIGNIFICANT

#: What a cell shows when there is no value.
MISSING = "–"
#: Digits of the tables people read on a screen (console, report.html); sentences and the description use 3.
TABLE_DIGITS = 4
#: A sweep grid's columns after its swept settings, in every view.
GRID_COLUMNS = ("mean", "delta", "CI of delta", "p adj.", "verdict", "ms/query")
#: Which of :data:`GRID_COLUMNS` are numbers (right-aligned).
GRID_NUMERIC = (True, True, True, True, False, True)


# ------------------------------------------------------------------------------------------ formats
def is_missing(value: Any) -> bool:
    """None or NaN: a value the table does not have."""
    return value is None or (isinstance(value, (float, np.floating)) and math.isnan(value))


def format_number(value: Any, digits: int = TABLE_DIGITS) -> str:
    """A mean or an interval end: ``digits`` decimals, or :data:`MISSING`."""
    return MISSING if is_missing(value) else f"{value:.{digits}f}"


def format_p(p: Any, digits: int = 3) -> str:
    """A p-value: ``digits`` decimals, 4 below 0.001 (so a small p keeps a significant digit), and
    ``< 0.0001`` below that; :data:`MISSING` when there is none."""
    if is_missing(p):
        return MISSING
    if p < 1e-4:
        return "< 0.0001"
    return f"{p:.4f}" if p < 1e-3 else f"{p:.{digits}f}"


def format_delta(delta: float, digits: int = TABLE_DIGITS) -> str:
    """A difference with its sign: ``+0.0312``."""
    return f"{delta:+.{digits}f}"


def format_interval(low: Any, high: Any, digits: int = TABLE_DIGITS) -> str:
    """A confidence interval: ``[0.0080, 0.0550]``."""
    return f"[{format_number(low, digits)}, {format_number(high, digits)}]"


def format_ms_per_query(seconds: Any) -> str:
    """Seconds per query as milliseconds with two decimals, or :data:`MISSING`."""
    return MISSING if is_missing(seconds) else f"{1000 * seconds:.2f}"


def format_duration(seconds: Any) -> str:
    """A time people compare: ``448 s``, ``2.5 s``, ``812 ms``, ``3.1 ms``, ``0.213 ms`` (three significant
    digits), or :data:`MISSING`."""
    if is_missing(seconds):
        return MISSING
    if seconds >= 1:
        return f"{seconds:.3g} s" if seconds < 1000 else f"{seconds:,.0f} s"
    return f"{1000 * seconds:.3g} ms"


def format_bytes(count: Any) -> str:
    """A size in SI units, three significant digits: ``91 MB``, ``492 kB``, ``0 B``."""
    if is_missing(count):
        return MISSING
    value = float(count)
    for unit in ("B", "kB", "MB", "GB"):
        if value < 1000 or unit == "GB":
            return f"{value:.3g} {unit}" if unit != "B" else f"{value:.0f} B"
        value /= 1000
    return MISSING  # unreachable


def format_ratio(ratio: float) -> str:
    """A ratio of two costs: ``12x``, ``2.3x``, and two significant digits below 1: ``0.25x``, ``0.031x``."""
    if ratio >= 10:
        return f"{ratio:.0f}x"
    return f"{ratio:.1f}x" if ratio >= 1 else f"{ratio:.2g}x"


def verdict_label(verdict: str) -> str:
    """A verdict in a table cell: starred (★) when significant, so the mark survives without colour."""
    return f"★ {verdict}" if verdict in SIGNIFICANT else str(verdict)


# ------------------------------------------------------------------------------------------ order
def primary_first(table: pd.DataFrame) -> pd.DataFrame:
    """The comparison's rows in the one reading order: treatments as the table lists them, and within
    each treatment the primary metric first, then the secondary metrics in table order."""
    if table.empty:
        return table
    treatment_order = {name: i for i, name in enumerate(dict.fromkeys(table["treatment"]))}
    codes = table["treatment"].map(treatment_order).to_numpy()
    secondary = (table["role"] != PRIMARY).to_numpy()
    return table.iloc[np.lexsort((secondary, codes))]


# ------------------------------------------------------------------------------------------ judgments
#: Up to this many variants' judged@k are listed by name; more (a sweep's) are summarised as a range.
JUDGED_LISTED = 4


def judged_line(judged: Mapping[str, Mapping[str, Any]], relevant_only: bool = False) -> str:
    """judged@k in one line, for every view (``judged``: variant -> ``cutoff``, ``mean_judged``): each
    variant's share, or, for more than :data:`JUDGED_LISTED` variants (a sweep's), the control's and the
    treatments' range; and, when the judgments list relevant items only (``relevant_only``), that an
    unjudged hit is then not relevant, so a low share is no gap in the judgments."""
    k = int(next(iter(judged.values()))["cutoff"])
    if len(judged) <= JUDGED_LISTED:
        shares = ", ".join(f"{name} {float(cov['mean_judged']):.2f}" for name, cov in judged.items())
    else:
        values = [float(cov["mean_judged"]) for name, cov in judged.items() if name != "control"]
        control = float(judged["control"]["mean_judged"]) if "control" in judged else math.nan
        shares = f"control {control:.2f}, the {len(values)} treatments {min(values):.2f}-{max(values):.2f}"
    line = f"judged@{k} (share of the top {k} with a judgment): {shares}"
    if relevant_only:
        line += "; the judgments list relevant items only, so every unjudged hit counts as not relevant"
    return line


# ------------------------------------------------------------------------------------------ sweep grid
def grid_headers(settings: Sequence[str]) -> list[str]:
    """A grid's header row: the swept settings (or ``candidate`` when none are named), then
    :data:`GRID_COLUMNS`."""
    return [*(settings or ["candidate"]), *GRID_COLUMNS]


def grid_numeric(settings: Sequence[str]) -> list[bool]:
    """Which of :func:`grid_headers` are numbers."""
    return [False] * max(len(settings), 1) + list(GRID_NUMERIC)


def grid_cells(row: dict[str, Any], settings: Sequence[str], digits: int = TABLE_DIGITS) -> list[str]:
    """One grid row as plain text, in :func:`grid_headers`' order."""
    named = [str(row[name]) for name in settings] if settings else [str(row["candidate"])]
    return [
        *named,
        format_number(row["treatment_mean"], digits),
        format_delta(row["delta"], digits),
        format_interval(row["ci_low"], row["ci_high"], digits),
        format_p(row["p_adjusted"], digits),
        verdict_label(row["verdict"]),
        format_ms_per_query(row.get("efficiency.seconds_per_query")),
    ]
