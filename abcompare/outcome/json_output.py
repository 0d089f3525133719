"""What ``abcompare run --json`` prints, for scripts and CI gates: each collection's comparison and, across
several, the pooled section. Every value passes the one JSON rule (:mod:`abcompare.core.json_values`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from abcompare.core.json_values import json_records, json_row, json_value
from abcompare.outcome import rows as shared
from abcompare.outcome.attribution_sentences import attribution_json
from abcompare.outcome.cost_sentences import cost_json
from abcompare.outcome.pooled_sentences import (
    pooled_non_inferiority_sentence,
    pooled_settings_line,
)
from abcompare.outcome.sentences import (
    as_json,
    queries_needed_sentence,
    robustness_sentence,
    settings_line,
    tuned_sentence,
)
from abcompare.outcome.view import ExperimentView, PooledView

if TYPE_CHECKING:
    from abcompare.outcome.results import Comparison, ComparisonResult, Recorded
    from abcompare.stats.tuning import TunedComparison


def result_as_json(result: ComparisonResult) -> dict[str, Any]:
    """The comparison as plain JSON: one collection's comparison as :func:`comparison_json` writes it;
    across several, each collection's so under ``collections``, with the pooled section (the shape the
    result's view gives: its pooled section, or its one collection alone)."""
    view = ExperimentView.from_result(result)
    pooled = [_collections_json(result, section) for section in view.sections]
    alone = [comparison_json(c, result.where, name, result.timings) for name, c in result.collections.items()
             if name in view.alone]  # fmt: skip
    (data,) = [*pooled, *alone]
    return data


def _collections_json(result: ComparisonResult, section: PooledView) -> dict[str, Any]:
    """A comparison across collections as plain JSON: each collection's comparison, the pooled section."""
    return {
        "name": result.config.name,
        "primary_metric": section.primary_metric,
        "weighting": section.weighting,
        "collections": {
            name: comparison_json(c, result.where, name, c.timings) for name, c in result.collections.items()
        },
        "pooled": _pooled_json(section),
        "per_collection": json_records(section.per_collection),
        "pooled_settings": pooled_settings_line(section.settings, section.family, section.weighting),
        **({} if result.pooled_judge is None else {"judge_pooled": result.pooled_judge.as_json()}),
        "tracking_uri": result.tracking_uri,
        "experiment": result.config.tracking.experiment,
        "parent_run_id": result.parent_run_id,
        "collection_run_ids": result.collection_run_ids,
        "timings": result.timings,
    }


def comparison_json(
    result: Comparison, where: Recorded | None, name: str, timings: Mapping[str, float]
) -> dict[str, Any]:
    """One collection's comparison as plain JSON, with where it was recorded (``where``: its parent run
    is ``where.collection_run_ids[name]``)."""

    return {
        "name": result.config.name,
        "dataset": result.dataset_name,
        "n_queries": result.n_queries,
        "primary_metric": result.primary_metric,
        "verdicts": as_json(result.tested),
        "settings": settings_line(result.tested),
        "tracking_uri": where.uri if where is not None else None,
        "experiment": result.config.tracking.experiment,
        "parent_run_id": where.collection_run_ids.get(name) if where is not None else None,
        "variant_run_ids": dict(where.variant_run_ids.get(name, {})) if where is not None else {},
        "means": {name: _numbers(means) for name, means in result.means.items()},
        "efficiency": {name: _numbers(o.efficiency) for name, o in result.variants.items() if o.efficiency},
        "cost": cost_json(result.cost),
        "alignment": {name: report.to_dict() for name, report in result.alignment.items()},
        "comparison": json_records(shared.primary_first(result.comparison)),  # the one reading order
        "judged": {name: asdict(cov) for name, cov in result.judged.items()},
        "attribution": attribution_json(result.attribution),
        "judgments_relevant_only": result.judgments_relevant_only,
        "judgment_warnings": list(result.judgment_warnings),
        "robustness": _rows_json(result.robustness, robustness_sentence),
        "queries_needed": _rows_json(result.queries_needed, queries_needed_sentence),
        "tuned": _tuned_json(result.tuned),
        "grid": None if result.grid is None else json_records(result.grid),
        "timings": dict(timings),
        **({} if result.judge is None else {"judge": result.judge.as_json()}),  # only with a judge: section
        **({} if result.answers is None else {"answers": result.answers.as_json()}),  # only with answers:
    }


def _rows_json(table: pd.DataFrame | None, sentence: Callable[[Mapping[str, Any]], str]) -> dict[str, Any]:
    """Per treatment, its row of ``table`` with its ``sentence``: the robustness (the range of the primary
    delta the unjudged hits allow, whether the verdict holds over it) or the queries needed to detect
    min_effect (``null`` counts: no change to detect)."""
    if table is None:
        return {}
    rows = table.to_dict(orient="records")
    return {str(row["treatment"]): {**json_row(row), "sentence": sentence(row)} for row in rows}


def _tuned_json(tuned: TunedComparison | None) -> dict[str, Any] | None:
    """A sweep's tuned comparison as plain data (the per-query held-out table stays in MLflow)."""
    if tuned is None:
        return None
    return {
        "metric": tuned.metric,
        "delta": tuned.delta,
        "ci_low": tuned.ci_low,
        "ci_high": tuned.ci_high,
        "p_value": tuned.p_value,
        "choices": list(tuned.choices),
        "most_chosen": tuned.most_chosen,
        "folds": tuned.folds,
        "sentence": tuned_sentence(tuned),
    }


def _numbers(values: Mapping[str, object]) -> dict[str, object]:
    """Means and efficiency figures: every number as a float (a count too), under the one JSON rule."""
    return {
        k: json_value(float(v) if isinstance(v, (int, float, np.integer, np.floating)) else v)
        for k, v in values.items()
    }


def _pooled_json(section: PooledView) -> list[dict[str, Any]]:
    """The pooled rows with their sentence, and with a margin the non-inferiority line."""
    pooled = section.pooled
    rows = [{**json_row(row), "sentence": section.sentences[str(row["treatment"])]}
            for row in pooled.to_dict(orient="records")]  # fmt: skip
    margin = section.settings.non_inferiority_margin
    for row in rows:
        if margin is not None and "non_inferiority" in row:
            row["non_inferiority_margin"] = margin
            row["non_inferiority_sentence"] = pooled_non_inferiority_sentence(
                pooled, section.settings, row["treatment"]
            )
    return rows
