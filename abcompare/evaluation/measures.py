"""The per-query metrics table's columns, in order; the names themselves are spelled in
:mod:`abcompare.core.vocabulary`."""

from __future__ import annotations

from collections.abc import Iterable

from abcompare.core.vocabulary import (
    COUNT_COLUMNS,
    COUNT_MEASURE,
    JUDGED_MEASURE,
    MEASURES,
    Metric,
    metric_name,
    mlflow_key,
    normalise_cutoffs,
    parse_metric,
)

__all__ = [
    "COUNT_COLUMNS",
    "COUNT_MEASURE",
    "JUDGED_MEASURE",
    "MEASURES",
    "Metric",
    "metric_name",
    "mlflow_key",
    "normalise_cutoffs",
    "parse_metric",
    "per_query_columns",
]


def per_query_columns(cutoffs: Iterable[int]) -> list[str]:
    """The per-query metrics table's columns, in order: every measure at every k, ``judged@k``, then the
    counts."""
    ks = normalise_cutoffs(cutoffs)
    return [
        *(metric_name(m, k) for m in MEASURES for k in ks),
        *(metric_name(JUDGED_MEASURE, k) for k in ks),
        *COUNT_COLUMNS,
        *(metric_name(COUNT_MEASURE, k) for k in ks),
    ]
