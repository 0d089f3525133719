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
    "judged_columns",
    "metric_columns",
    "per_query_columns",
]


def metric_columns(measures: Iterable[str], cutoffs: Iterable[int]) -> list[str]:
    """Every measure at every cutoff, measure by measure, in the order given: ``precision@1, ...``."""
    ks = list(cutoffs)
    return [metric_name(m, k) for m in measures for k in ks]


def judged_columns(cutoffs: Iterable[int]) -> list[str]:
    """``judged@k`` at every cutoff: how much of each list was judged (a diagnostic, never compared)."""
    return [metric_name(JUDGED_MEASURE, k) for k in cutoffs]


def per_query_columns(cutoffs: Iterable[int], measures: Iterable[str] = MEASURES) -> list[str]:
    """The per-query metrics table's columns, in order: every measure at every k, ``judged@k``, then the
    counts (the cutoffs sorted, each once)."""
    ks = normalise_cutoffs(cutoffs)
    return [
        *metric_columns(measures, ks),
        *judged_columns(ks),
        *COUNT_COLUMNS,
        *(metric_name(COUNT_MEASURE, k) for k in ks),
    ]
