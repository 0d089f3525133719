"""Metric names: ``ndcg@10`` inside abcompare, ``ndcg_at_10`` at the MLflow boundary, and the column order."""

from __future__ import annotations

import operator
import re
from collections.abc import Iterable

from abcompare.errors import ConfigError

MEASURES: tuple[str, ...] = ("precision", "recall", "f1", "mrr", "ndcg")
"""The per-query measures every convention reports, in column order."""

COUNT_MEASURE = "true_positive_count"
"""The one count that depends on the cutoff (``true_positive_count@k``)."""

JUDGED_MEASURE = "judged"
"""The share of the top k that has a judgment of any grade (``judged@k``): a diagnostic, never tested."""

COUNT_COLUMNS: tuple[str, ...] = ("retrieved_count", "relevant_count", "judged_count")
"""Counts that do not depend on the cutoff."""

_NAME = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*?)\s*(?:@|_at_)\s*(\d+)\s*$")


def metric_name(measure: str, k: int) -> str:
    """The canonical name of a measure at cutoff ``k``: ``metric_name("ndcg", 10) == "ndcg@10"``."""
    measure = measure.strip().lower()
    if measure not in (*MEASURES, JUDGED_MEASURE, COUNT_MEASURE):
        raise ConfigError(
            f"unknown measure {measure!r}", field="metrics", hint=f"use one of {', '.join(MEASURES)}"
        )
    return f"{measure}@{_cutoff(k)}"


def _cutoff(value: object) -> int:
    """``value`` as a positive int, or a ``ConfigError`` on the field ``k``."""
    try:
        if isinstance(value, bool):
            raise TypeError
        k = operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        k = 0
    if k <= 0:
        raise ConfigError(f"cutoff must be a positive integer, got {value!r}", field="k", hint="e.g. k=10")
    return k


def parse_metric(name: str) -> tuple[str, int]:
    """``"ndcg@10" -> ("ndcg", 10)``; also accepts the MLflow form ``ndcg_at_10`` and any letter case."""
    match = _NAME.match(name) if isinstance(name, str) else None
    if match is None:
        raise ConfigError(
            f"not a metric name: {name!r}", field="metrics", hint="write it as measure@k, e.g. ndcg@10"
        )
    measure, k = match.group(1).lower(), int(match.group(2))
    return measure, int(metric_name(measure, k).rsplit("@", 1)[1])


def mlflow_key(name: str) -> str:
    """The MLflow-safe form of a column name (``@`` is not allowed there): ``ndcg@10 -> ndcg_at_10``."""
    return name.replace("@", "_at_")


def normalise_cutoffs(k: int | Iterable[int]) -> tuple[int, ...]:
    """The cutoffs as a sorted tuple of distinct positive ints; a bad one is a ``ConfigError`` on ``k``."""
    values = tuple(k) if isinstance(k, Iterable) and not isinstance(k, str) else (k,)
    if not values:
        raise ConfigError("no cutoff given", field="k", hint="give at least one k, e.g. k=(1, 5, 10)")
    return tuple(sorted({_cutoff(value) for value in values}))


def metric_columns(cutoffs: Iterable[int]) -> list[str]:
    """The per-query metrics table's columns, in order: every measure at every k, ``judged@k``, then the
    counts."""
    ks = normalise_cutoffs(cutoffs)
    return [
        *(metric_name(m, k) for m in MEASURES for k in ks),
        *(metric_name(JUDGED_MEASURE, k) for k in ks),
        *COUNT_COLUMNS,
        *(metric_name(COUNT_MEASURE, k) for k in ks),
    ]
