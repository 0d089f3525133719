"""Pair a treatment's per-query metrics with the control's by ``query_id`` and validate them for testing."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from abcompare.core.errors import StatisticsError
from abcompare.core.vocabulary import CONTROL, MEASURES

#: Measures compared by default; other columns (counts such as ``relevant_count``) are not metrics.
_METRIC_RE = re.compile(r"^(" + "|".join(MEASURES) + r")@\d+$")
_MAX_IDS_SHOWN = 5
#: Relative spread below which a column of differences counts as constant (float rounding only).
_CONSTANT_RTOL = 1e-12


@dataclass(frozen=True)
class PairedDifferences:
    """Control and treatment scores aligned by query: arrays of shape (n_queries, n_metrics)."""

    query_ids: np.ndarray
    metrics: tuple[str, ...]
    control: np.ndarray
    treatment: np.ndarray

    @property
    def d(self) -> np.ndarray:
        """Per-query differences treatment - control, shape (n_queries, n_metrics)."""
        return self.treatment - self.control

    @property
    def n_queries(self) -> int:
        return int(self.control.shape[0])


def compared_columns(frame: pd.DataFrame) -> list[str]:
    """The columns named ``<measure>@<k>`` for a measure in :data:`MEASURES`, in frame order."""
    return [str(c) for c in frame.columns if _METRIC_RE.match(str(c))]


def _show(ids: Sequence[object]) -> str:
    shown = ", ".join(repr(str(i)) for i in list(ids)[:_MAX_IDS_SHOWN])
    more = len(ids) - _MAX_IDS_SHOWN
    return f"{shown} and {more} more" if more > 0 else shown


def _by_query(frame: pd.DataFrame, name: str) -> pd.DataFrame:
    """The frame indexed by ``query_id`` as strings; a ``query_id`` column is accepted too."""
    if not isinstance(frame, pd.DataFrame):
        raise StatisticsError(
            f"{name} must be a per-query metrics DataFrame, got {type(frame).__name__}",
            field=name,
            hint="pass the table evaluate_run returns (indexed by query_id)",
        )
    if "query_id" in frame.columns and frame.index.name != "query_id":
        frame = frame.set_index("query_id")
    frame = frame.copy()
    frame.index = frame.index.astype(str)
    duplicated = frame.index[frame.index.duplicated()].unique()
    if len(duplicated):
        raise StatisticsError(
            f"{name} has more than one row for query {_show(duplicated)}",
            field=name,
            hint="a per-query metrics table has exactly one row per query_id",
        )
    return frame


def _values(frame: pd.DataFrame, metrics: Sequence[str], name: str) -> np.ndarray:
    """The metric columns as a float array, refusing non-numeric columns and non-finite scores."""
    try:
        values = frame.loc[:, list(metrics)].to_numpy(dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise StatisticsError(
            f"{name} has a non-numeric metric column ({exc})",
            field=name,
            hint="metric columns must hold numbers",
        ) from exc
    bad = ~np.isfinite(values)
    if bad.any():
        rows, cols = np.nonzero(bad)
        query, metric = frame.index[rows[0]], metrics[cols[0]]
        raise StatisticsError(
            f"{name} has a missing or non-finite score for query {query!r}, metric {metric!r}"
            f" ({len(rows)} such score(s) in all)",
            field=f"{name}.{metric}",
            hint="every query needs a score in both runs; drop the query from both or fix the evaluation",
        )
    return values


def paired_differences(
    control: pd.DataFrame,
    treatment: pd.DataFrame,
    metrics: Sequence[str] | None = None,
    *,
    treatment_name: str = "treatment",
) -> PairedDifferences:
    """Align ``treatment`` with ``control`` by query_id and check both (same queries, >= 2, finite scores)."""
    control = _by_query(control, CONTROL)
    treatment = _by_query(treatment, treatment_name)
    if metrics is None:
        metrics = compared_columns(control)
        if not metrics:
            raise StatisticsError(
                "the control has no metric columns (named like 'ndcg@10')",
                field=CONTROL,
                hint=f"name them <measure>@<k> with a measure in {', '.join(MEASURES)}, "
                "or pass metrics=[...]",
            )
    else:
        metrics = [str(m) for m in metrics]
        if not metrics:
            raise StatisticsError("metrics= is empty", field="metrics", hint="name at least one column")
    for name, frame in ((CONTROL, control), (treatment_name, treatment)):
        missing = [m for m in metrics if m not in frame.columns]
        if missing:
            raise StatisticsError(
                f"{name} has no column {_show(missing)}",
                field=name,
                hint="both frames need every compared metric column",
            )
    only_control = control.index.difference(treatment.index, sort=False)
    only_treatment = treatment.index.difference(control.index, sort=False)
    if len(only_control) or len(only_treatment):
        parts = []
        if len(only_control):
            parts.append(f"{len(only_control)} only in control ({_show(only_control)})")
        if len(only_treatment):
            parts.append(f"{len(only_treatment)} only in {treatment_name} ({_show(only_treatment)})")
        raise StatisticsError(
            "control and " + treatment_name + " are not paired: queries " + "; ".join(parts),
            field=treatment_name,
            hint="evaluate both runs on the same queries (a query with no hits scores 0, it is not dropped)",
        )
    if len(control.index) < 2:
        raise StatisticsError(
            f"a paired test needs at least 2 queries, got {len(control.index)}",
            field=CONTROL,
            hint="evaluate on more queries",
        )
    treatment = treatment.loc[control.index]
    return PairedDifferences(
        query_ids=control.index.to_numpy(),
        metrics=tuple(metrics),
        control=_values(control, metrics, CONTROL),
        treatment=_values(treatment, metrics, treatment_name),
    )


def as_columns(d: np.ndarray) -> tuple[np.ndarray, bool]:
    """``d`` as a float (n, m) array, and whether the caller passed a 1-D array (to squeeze results back)."""
    arr = np.asarray(d, dtype=np.float64)
    if arr.ndim == 1:
        return arr[:, None], True
    if arr.ndim != 2:
        raise ValueError(f"differences must be 1-D or 2-D (queries x metrics), got shape {arr.shape}")
    return arr, False


def constant_columns(x: np.ndarray) -> np.ndarray:
    """Columns of (n, m) ``x`` whose values are all equal up to rounding (e.g. 0.4 - 0.3 vs 0.2 - 0.1).

    Such columns have sd(d) = 0 in exact arithmetic; treating the rounding noise as spread would turn
    t and d_z into meaningless huge numbers.
    """
    return np.ptp(x, axis=0) <= _CONSTANT_RTOL * np.abs(x).max(axis=0)
