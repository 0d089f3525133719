"""Answer scores through the retrieval verdict's own machinery: each variant's per-query answer scores
become metric columns of a per-query table, and :func:`abcompare.stats.comparison.paired_comparison` tests
them paired against the control with the configured tests, corrections, intervals, non-inferiority margin
and primary metric (which may be an answer metric). Queries an answer score is missing for (the judge could
not score an answer, or a query has no relevant id for citation recall) are left out of the answer
comparison in every variant, counted and said; nothing is scored 0 in their place. And the attribution:
how much of each answer change comes with a retrieval change (queries whose top-k hits changed) or not."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from abcompare.answers.hits import Hit
from abcompare.answers.scores import ANSWER_METRICS, AnswerScores
from abcompare.core.vocabulary import plural
from abcompare.stats.comparison import PairedComparison, paired_test


@dataclass(frozen=True)
class AnswerComparison:
    """``tested``: the paired comparison over the answer metrics (and any retrieval metrics joined), its
    table (``comparison``) and settings;
    ``queries``: the query ids compared; ``left_out``: per metric, the queries left out for a missing score
    (in any variant); ``tables``: the per-query tables tested (one per variant)."""

    tested: PairedComparison
    queries: tuple[str, ...]
    left_out: dict[str, int]
    tables: dict[str, pd.DataFrame]

    @property
    def comparison(self) -> pd.DataFrame:
        """The comparison table (one row per treatment and metric)."""
        return self.tested.table

    def summary(self) -> str:
        """One line: how many queries the answer verdict rests on, and why any were left out."""
        line = f"answers compared on {plural(len(self.queries), 'query')}"
        missing = [f"{n} without {metric}" for metric, n in self.left_out.items() if n]
        return line + (f" (left out: {', '.join(missing)})" if missing else "")


def answer_tables(
    scores: Mapping[str, AnswerScores],
    metrics: Sequence[str],
    retrieval: Mapping[str, pd.DataFrame] | None = None,
    retrieval_metrics: Sequence[str] = (),
) -> tuple[dict[str, pd.DataFrame], tuple[str, ...], dict[str, int]]:
    """Each variant's per-query table of ``metrics`` (and ``retrieval_metrics`` from ``retrieval``'s
    tables), on the queries every variant has every score for; with the count left out per metric."""
    tables: dict[str, pd.DataFrame] = {}
    for name, score in scores.items():
        table = score.table.loc[:, list(metrics)].copy()
        if retrieval is not None and retrieval_metrics:
            table = table.join(retrieval[name][list(retrieval_metrics)], how="left")
        table.index = table.index.astype(str)
        tables[name] = table
    shared = None
    for table in tables.values():
        shared = table.index if shared is None else shared.intersection(table.index, sort=False)
    assert shared is not None
    complete = np.ones(len(shared), dtype=bool)
    left_out: dict[str, int] = {}
    for metric in [*metrics, *retrieval_metrics]:
        has = np.logical_and.reduce(
            [np.isfinite(t.loc[shared, metric].to_numpy(float)) for t in tables.values()]
        )
        left_out[metric] = int((~has).sum())
        complete &= has
    kept = shared[complete]
    return {n: t.loc[kept] for n, t in tables.items()}, tuple(map(str, kept)), left_out


def compare_answers(
    scores: Mapping[str, AnswerScores],
    *,
    metrics: Sequence[str] | None = None,
    primary_metric: str | None = None,
    retrieval: Mapping[str, pd.DataFrame] | None = None,
    retrieval_metrics: Sequence[str] = (),
    control: str = "control",
    **testing: object,
) -> AnswerComparison:
    """The paired comparison of every treatment's answer scores with ``control``'s (``testing``: the
    significance section's options, as for retrieval). ``metrics`` default to every answer metric the
    scores hold; ``primary_metric`` defaults to the first of them."""
    if metrics is None:
        first = next(iter(scores.values())).table
        metrics = [m for m in ANSWER_METRICS if m in first.columns]
    tables, queries, left_out = answer_tables(scores, metrics, retrieval, retrieval_metrics)
    treatments = {n: t for n, t in tables.items() if n != control}
    tested = paired_test(
        tables[control],
        treatments,
        metrics=[*metrics, *retrieval_metrics],
        primary_metric=primary_metric or metrics[0],
        **testing,
    )
    return AnswerComparison(tested, queries, left_out, tables)


def top_k_changed(control: Mapping[str, Sequence[Hit]], treatment: Mapping[str, Sequence[Hit]]) -> pd.Series:
    """Per query, whether the treatment's top-k hit ids differ from the control's (as a set: a reordering
    of the same hits is no change of what the generator was given)."""
    queries = list(dict.fromkeys([*control, *treatment]))
    return pd.Series(
        [{h.id for h in control.get(q, ())} != {h.id for h in treatment.get(q, ())} for q in queries],
        index=pd.Index(queries, name="query_id"),
        name="top_k_changed",
    )


def answer_attribution(
    tables: Mapping[str, pd.DataFrame],
    hits: Mapping[str, Mapping[str, Sequence[Hit]]],
    metrics: Sequence[str],
    control: str = "control",
) -> pd.DataFrame:
    """Per (treatment, metric): the queries whose top-k changed and not, the summed delta of each group and
    the share of the total delta that comes with a retrieval change (NaN when the total is 0)."""
    rows = []
    for name, table in tables.items():
        if name == control:
            continue
        changed = top_k_changed(hits[control], hits[name]).reindex(table.index, fill_value=False)
        for metric in metrics:
            delta = table[metric] - tables[control].loc[table.index, metric]
            total = float(delta.sum())
            with_change = float(delta[changed].sum())
            rows.append(
                {
                    "treatment": name,
                    "metric": metric,
                    "queries_top_k_changed": int(changed.sum()),
                    "queries_top_k_same": int((~changed).sum()),
                    "delta_sum_top_k_changed": with_change,
                    "delta_sum_top_k_same": float(delta[~changed].sum()),
                    "share_with_retrieval_change": with_change / total if total else float("nan"),
                }
            )
    return pd.DataFrame(rows)
