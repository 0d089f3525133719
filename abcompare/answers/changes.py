"""Which queries' answers got better or worse, and how much of the answer change comes with a retrieval
change: the largest per-query wins and losses on each treatment's primary answer metric, with both answers
side by side (plain records, so ``result.json``, ``report.html`` and the notebook read one thing), and the
attribution said as one line per treatment."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from abcompare.answers.compare import AnswerComparison, top_k_changed
from abcompare.answers.generation import Answers
from abcompare.core.vocabulary import PRIMARY, plural

#: How many wins and how many losses per treatment.
ANSWER_CHANGES_SHOWN = 5


def primary_metrics(comparison: AnswerComparison) -> dict[str, str]:
    """treatment -> the answer comparison's primary metric for it."""
    table = comparison.comparison
    rows = table[table["role"] == PRIMARY]
    return dict(zip(rows["treatment"].astype(str), rows["metric"].astype(str), strict=True))


def largest_answer_changes(
    comparison: AnswerComparison,
    answers: Mapping[str, Answers],
    question: Mapping[str, str],
    n: int = ANSWER_CHANGES_SHOWN,
    control: str = "control",
) -> list[dict[str, Any]]:
    """Per treatment, its ``n`` largest wins then its ``n`` largest losses on its primary answer metric,
    over the queries the answer comparison rests on (ties in query order): each a record with the
    question, both scores and answers (with their cited ids), the delta, and whether the top-k hits the
    answers were written from changed."""
    records = []
    for treatment, metric in primary_metrics(comparison).items():
        ours, theirs = comparison.tables[control][metric], comparison.tables[treatment][metric]
        delta = (theirs - ours).sort_values(kind="mergesort")
        changed = top_k_changed(answers[control].hits, answers[treatment].hits)
        wins, losses = delta[delta > 0].iloc[::-1].head(n), delta[delta < 0].head(n)
        for kind, picked in (("win", wins), ("loss", losses)):
            for query_id, change in picked.items():
                query_id = str(query_id)
                control_answer, control_cited = answers[control].answer(query_id)
                answer, cited = answers[treatment].answer(query_id)
                records.append(
                    {
                        "treatment": treatment, "metric": metric, "change": kind, "query_id": query_id,
                        "question": question.get(query_id, ""), "control_score": float(ours[query_id]),
                        "treatment_score": float(theirs[query_id]), "delta": float(change),
                        "top_k_changed": bool(changed.get(query_id, False)),
                        "control_answer": control_answer, "control_cited_ids": list(control_cited),
                        "treatment_answer": answer, "treatment_cited_ids": list(cited),
                    }
                )  # fmt: skip
    return records


def attribution_records(attribution: pd.DataFrame) -> list[dict[str, Any]]:
    """The attribution table as JSON-ready records (pandas gives plain numbers; an undefined share is
    None)."""
    records = attribution.to_dict(orient="records")
    return [{key: None if value != value else value for key, value in row.items()} for row in records]


def attribution_lines(attribution: pd.DataFrame, primary: Mapping[str, str]) -> list[str]:
    """Per treatment, its primary answer metric's summed delta split by whether the query's top-k hits
    changed (``compare.answer_attribution``'s row), as one line."""
    lines = []
    for row in attribution.itertuples():
        if primary.get(row.treatment) != row.metric:
            continue
        total = row.delta_sum_top_k_changed + row.delta_sum_top_k_same
        changed = plural(row.queries_top_k_changed, "query")
        same = plural(row.queries_top_k_same, "query")
        head = f"answers {row.treatment} vs control, {row.metric} by retrieval: summed delta {total:+.3f}, "
        if not row.queries_top_k_changed:
            split = f"all on the {same} with the same top-k hits (no query's hits changed)"
        elif not row.queries_top_k_same:
            split = f"all on the {changed} whose top-k hits changed (every query's hits changed)"
        else:
            share = row.share_with_retrieval_change
            said = (
                "no change to attribute"
                if share != share
                else f"{share + 0.0:.0%} of it with a retrieval change"
            )
            split = (
                f"{row.delta_sum_top_k_changed:+.3f} on the {changed} whose top-k hits changed, "
                f"{row.delta_sum_top_k_same:+.3f} on the {same} with the same hits ({said})"
            )
        lines.append(head + split)
    return lines
