"""Where a treatment's change comes from, in words and as plain data, from ``evaluation.attribution``'s
summary: the delta split into new, lost, reorder and ideal, with their counts."""

from __future__ import annotations

from typing import Any

import pandas as pd

from abcompare.core.vocabulary import parse_metric, plural

#: The delta's parts (``evaluation.attribution``), in their reading order.
ATTRIBUTION_PARTS = ("new", "lost", "reorder", "ideal")
#: What each part of a measure's delta is, as a sentence says it after its figure: ``{n}`` its count,
#: ``{hits}`` hit(s), ``{queries}`` the count of queries. nDCG, precision and recall count hits; MRR and F1
#: count queries, each in the class of its change.
_ITEM_PHRASES = {"new": "from {n} newly retrieved relevant {hits}", "lost": "from {n} lost",
                 "reorder": "from reordering"}  # fmt: skip
_PART_PHRASES: dict[str, dict[str, str]] = {
    "ndcg": {**_ITEM_PHRASES, "ideal": "from the ideal DCG (the lists' lengths differ)"},
    "precision": {**_ITEM_PHRASES, "ideal": "from the depth evaluated (the lists' lengths differ)"},
    "recall": {**_ITEM_PHRASES, "ideal": "from the relevant count (judged apart)"},
    "mrr": {"new": "from {queries} with a new first relevant hit", "lost": "from {queries} with none left",
            "reorder": "from {queries} whose first relevant hit moved"},
    "f1": {"new": "from {queries} with more relevant hits", "lost": "from {queries} with fewer",
           "ideal": "from {queries} with as many over another depth"},
}  # fmt: skip


def attribution_row(attribution: pd.DataFrame | None, treatment: str, metric: str) -> pd.Series | None:
    """One (treatment, metric) row of the attribution summary, or None when there is none."""
    if attribution is None or attribution.empty:
        return None
    rows = attribution[(attribution["treatment"] == treatment) & (attribution["metric"] == metric)]
    return None if rows.empty else rows.iloc[0]


def attribution_sentence(attribution: pd.DataFrame | None, treatment: str, metric: str) -> str:
    """Where one treatment's change on ``metric`` comes from, e.g. ``Where it comes from: ndcg@10 +0.031 =
    +0.044 from 61 newly retrieved relevant hits − 0.018 from 23 lost + 0.005 from reordering; 12
    unjudged newcomers in its top 10 (scored 0).`` ('' when there is no attribution). A part that is 0
    (and, for new and lost, counts nothing) is left out: the delta is the sum of the parts shown."""
    row = attribution_row(attribution, treatment, metric)
    if row is None:
        return ""
    measure, k = parse_metric(metric)
    terms: list[str] = []
    for part, phrase in _PART_PHRASES.get(measure, {}).items():
        value = float(row[part])
        count = int(row[f"{part}_count"]) if f"{part}_count" in row else 0
        if value == 0 and not (part in ("new", "lost") and count):
            continue
        if part == "lost" and "{n}" in phrase and not terms:
            phrase += " relevant {hits}"  # no newcomer said what is counted
        words = phrase.format(n=count, hits="hit" if count == 1 else "hits", queries=plural(count, "query"))
        sign = "+" if value >= 0 else ("−" if terms else "-")
        terms.append(f"{sign}{' ' if terms else ''}{abs(value):.3f} {words}")
    body = " ".join(terms) if terms else "+0.000 (nothing moved)"
    text = f"Where it comes from: {metric} {float(row['delta']):+.3f} = {body}"
    unjudged = int(row["unjudged_newcomers"])
    if unjudged:
        text += f"; {plural(unjudged, 'unjudged newcomer')} in its top {k} (scored 0)"
    return text + "."


def attribution_json(attribution: pd.DataFrame | None) -> dict[str, Any]:
    """The attribution as plain data: per treatment and metric, the delta, its parts, their counts (of
    hits, or of queries for MRR and F1: ``unit``) and the unjudged newcomers."""
    out: dict[str, Any] = {}
    if attribution is None:
        return out
    for row in attribution.to_dict(orient="records"):
        counts = {part: int(row[f"{part}_count"]) for part in ("new", "lost", "reorder")}
        out.setdefault(str(row["treatment"]), {})[str(row["metric"])] = {
            "delta": float(row["delta"]),
            "parts": {part: float(row[part]) for part in ATTRIBUTION_PARTS},
            "counts": counts,
            "unit": str(row["unit"]),
            "unjudged_newcomers": int(row["unjudged_newcomers"]),
            "n_queries": int(row["n_queries"]),
            "sentence": attribution_sentence(attribution, str(row["treatment"]), str(row["metric"])),
        }
    return out
