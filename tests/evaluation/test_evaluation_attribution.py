"""Delta attribution: the parts of each per-query delta add up to the evaluator's own delta (property tests
over random runs and judgments, both conventions, both unjudged policies, ties and repeats), and
hand-computed cases pin every class, the ideal part and the tie order."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from abcompare.core.errors import AbcompareWarning
from abcompare.evaluation.attribution import (
    PARTS,
    UNCHANGED,
    attribution,
    attribution_summary,
    scored_lists,
)
from abcompare.evaluation.per_query import per_query_metrics

ATOL = 1e-12
MEASURES = ["precision", "recall", "f1", "mrr", "ndcg"]
KEYS = ["a", "b", "c", "d", "e", " a", "f"]  # " a" is "a" once stripped: a repeat in the trec convention
QUERIES = ["q1", "q2", "q3"]
D2, D3 = 1 / math.log2(3), 1 / math.log2(4)  # the discounts of ranks 2 and 3 (rank 1: 1)


def _run(lists: dict[str, list[tuple[str, float]]]) -> pd.DataFrame:
    rows = [(q, r, key, score) for q, hits in lists.items() for r, (key, score) in enumerate(hits, start=1)]
    return pd.DataFrame(rows, columns=["query_id", "rank", "key", "score"])


def _judgments(grades: dict[str, dict[str, int]]) -> pd.DataFrame:
    rows = [(q, key, g) for q, judged in grades.items() for key, g in judged.items()]
    return pd.DataFrame(rows, columns=["query_id", "key", "grade"])


def _options(convention="ai4j", cutoffs=(3,), threshold=1, unjudged="nonrelevant"):
    return {"measures": MEASURES, "cutoffs": list(cutoffs), "convention": convention,
            "relevance_threshold": threshold, "unjudged": unjudged}  # fmt: skip


def _metrics(options) -> list[str]:
    return [f"{m}@{k}" for m in options["measures"] for k in options["cutoffs"]]


def _evaluated(run, judgments, query_ids, options) -> pd.DataFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AbcompareWarning)
        return per_query_metrics(run, judgments, query_ids, **options)


def _attributed(control, treatment, judgments, query_ids, options, treatment_judgments=None):
    lists_c = scored_lists(control, judgments, query_ids, **options)
    other = judgments if treatment_judgments is None else treatment_judgments
    lists_t = scored_lists(treatment, other, query_ids, **options)
    return attribution(lists_c, lists_t, _metrics(options))


def _row(frame: pd.DataFrame, metric: str, query: str = "q") -> pd.Series:
    return frame[(frame["metric"] == metric) & (frame["query_id"] == query)].iloc[0]


# ------------------------------------------------------------------------------------------ properties
hits = st.lists(st.tuples(st.sampled_from(KEYS), st.sampled_from([0.0, 0.5, 1.0])), max_size=7)
runs = st.dictionaries(st.sampled_from(QUERIES), hits, max_size=3)
graded = st.dictionaries(st.sampled_from(KEYS[:5] + ["g"]), st.integers(0, 3), min_size=1, max_size=5)
judgment_sets = st.dictionaries(st.sampled_from(QUERIES), graded, min_size=1, max_size=3)
conventions = st.sampled_from(["ai4j", "trec"])
policies = st.sampled_from(["nonrelevant", "condensed"])
cutoff_sets = st.lists(st.integers(1, 6), min_size=1, max_size=2, unique=True)


@settings(max_examples=40)
@given(runs, runs, judgment_sets, conventions, policies, cutoff_sets, st.sampled_from([1, 2]))
def test_the_parts_add_up_to_the_evaluators_delta(
    control, treatment, grades, convention, unjudged, ks, threshold
):
    """Per query and in total, new + lost + reorder + ideal is the evaluator's own delta (nDCG, precision,
    recall, to 1e-12), and every MRR and F1 query is in exactly one class, which carries its whole delta."""
    options = _options(convention, ks, threshold, unjudged)
    judgments = _judgments(grades)
    query_ids = sorted(grades)
    run_c, run_t = _run(control), _run(treatment)
    before = _evaluated(run_c, judgments, query_ids, options)
    after = _evaluated(run_t, judgments, query_ids, options)
    parts = _attributed(run_c, run_t, judgments, query_ids, options)
    summary = attribution_summary(parts)
    for metric in _metrics(options):
        rows = parts[parts["metric"] == metric].set_index("query_id")
        delta = (after[metric] - before[metric]).reindex(rows.index)
        np.testing.assert_allclose(rows["delta"], delta, rtol=0, atol=ATOL)
        np.testing.assert_allclose(rows[list(PARTS)].sum(axis=1), delta, rtol=0, atol=ATOL)
        total = summary.set_index("metric").loc[metric]
        assert total["delta"] == pytest.approx(after[metric].mean() - before[metric].mean(), abs=ATOL)
        assert total[list(PARTS)].sum() == pytest.approx(total["delta"], abs=ATOL)
        if metric.startswith(("mrr", "f1")):
            assert set(rows["change"]) <= {*PARTS, UNCHANGED}
            # the class's part is the whole delta, every other part is 0: exactly, against attribution's own
            # delta (the evaluator's ``delta`` above is another computation of F1, equal to ATOL)
            for part in PARTS:
                whole = np.where(rows["change"] == part, rows["delta"], 0.0)
                np.testing.assert_array_equal(rows[part], whole)
            assert (rows.loc[rows["change"] == UNCHANGED, "delta"] == 0).all()


@settings(max_examples=30)
@given(runs, judgment_sets, conventions, st.data())
def test_a_rerank_only_treatment_changes_by_reordering_alone(control, grades, convention, data):
    """The same hits in another order, every one within the cutoff: nothing new, nothing lost, the same
    normaliser, so all of the nDCG delta is reordering and precision and recall do not move."""
    treatment = {q: data.draw(st.permutations(hits_of)) for q, hits_of in control.items()}

    def descending(lists):  # scores that follow the list order, so both conventions read it as given
        return {q: [(key, float(len(hits_of) - i)) for i, (key, _) in enumerate(hits_of)]
                for q, hits_of in lists.items()}  # fmt: skip

    options = _options(convention, (7,))  # k beyond every list
    parts = _attributed(
        _run(descending(control)), _run(descending(treatment)), _judgments(grades), sorted(grades), options
    )
    for measure in ("ndcg", "precision", "recall"):
        rows = parts[parts["metric"] == f"{measure}@7"]
        assert (rows[["new", "lost", "ideal"]] == 0).all().all()
        assert (rows[["new_count", "lost_count"]] == 0).all().all()
        np.testing.assert_allclose(rows["reorder"], rows["delta"], rtol=0, atol=ATOL)
    assert (parts.loc[parts["metric"] == "precision@7", "delta"] == 0).all()


# ------------------------------------------------------------------------------------------ by hand
def test_ndcg_new_and_reordered_hits_by_hand():
    """ai4j, k = 3, relevant a, b, c. Control [a, x, b]: DCG 1 + 1/2 = 1.5, ideal 1 + D2 + 1/2 = 2.1309.
    Treatment [b, a, c]: DCG = ideal, nDCG 1. Delta 1 - 1.5/2.1309 = 0.2961 =
    new c at rank 3: (1/2)/2.1309 = 0.2346; reorder a (1 -> D2) and b (1/2 -> 1): (D2 - 1 + 1/2)/2.1309
    = 0.0614; nothing lost (x is not relevant), the ideal the same."""
    judgments = _judgments({"q": {"a": 1, "b": 1, "c": 1}})
    control = _run({"q": [("a", 0), ("x", 0), ("b", 0)]})
    treatment = _run({"q": [("b", 0), ("a", 0), ("c", 0)]})
    row = _row(_attributed(control, treatment, judgments, ["q"], _options()), "ndcg@3")
    ideal = 1 + D2 + D3
    assert row["delta"] == pytest.approx(1 - 1.5 / ideal, abs=ATOL)
    assert row["new"] == pytest.approx(D3 / ideal, abs=ATOL)
    assert row["reorder"] == pytest.approx((D2 - 1 + 1 - D3) / ideal, abs=ATOL)
    assert (row["lost"], row["ideal"]) == (0, 0)
    assert (row["new_count"], row["lost_count"], row["reorder_count"]) == (1, 0, 2)


def test_lost_hits_and_the_ideal_part_when_the_treatment_returns_fewer_hits():
    """ai4j, k = 3, relevant a, b. Control [a, b, x]: DCG 1 + D2, ideal over min(3, 2) = 2 ranks: 1 + D2,
    nDCG 1. Treatment [a]: depth 1, ideal 1, nDCG 1. Delta 0 = lost b: -D2/(1 + D2) = -0.3869, plus the
    ideal: 1/1 - 1/(1 + D2) = +0.3869. Precision: 2/3 -> 1/1, delta 1/3 = lost b -1/3 (over the
    control's depth 3) + ideal 1/1 - 1/3 = 2/3."""
    judgments = _judgments({"q": {"a": 1, "b": 1}})
    control = _run({"q": [("a", 0), ("b", 0), ("x", 0)]})
    treatment = _run({"q": [("a", 0)]})
    parts = _attributed(control, treatment, judgments, ["q"], _options())
    ndcg, precision = _row(parts, "ndcg@3"), _row(parts, "precision@3")
    assert ndcg["delta"] == pytest.approx(0, abs=ATOL)
    assert ndcg["lost"] == pytest.approx(-D2 / (1 + D2), abs=ATOL)
    assert ndcg["ideal"] == pytest.approx(1 - 1 / (1 + D2), abs=ATOL)
    assert (ndcg["new"], ndcg["reorder"], ndcg["lost_count"]) == (0, 0, 1)
    assert precision["delta"] == pytest.approx(1 / 3, abs=ATOL)
    assert precision["lost"] == pytest.approx(-1 / 3, abs=ATOL)
    assert precision["ideal"] == pytest.approx(2 / 3, abs=ATOL)


def test_the_trec_tie_order_decides_the_reordering():
    """trec, k = 2, b graded 2, a graded 0. Control scores a and b 1.0 each: trec_eval breaks the tie by key
    descending, so b ranks first: DCG 2, ideal 2, nDCG 1. Treatment a 0.9 above b 0.5: DCG 2·D2, nDCG D2.
    Delta D2 - 1 = -0.3691, all reordering (b moved from rank 1 to rank 2); MRR 1 -> 1/2, the same first
    relevant hit moved: class reorder, -0.5. (Were ties broken by key ascending, a would lead and both
    deltas would be 0.)"""
    judgments = _judgments({"q": {"a": 0, "b": 2}})
    control = _run({"q": [("a", 1.0), ("b", 1.0)]})
    treatment = _run({"q": [("b", 0.5), ("a", 0.9)]})
    parts = _attributed(control, treatment, judgments, ["q"], _options("trec", (2,)))
    ndcg, mrr = _row(parts, "ndcg@2"), _row(parts, "mrr@2")
    assert ndcg["reorder"] == pytest.approx(D2 - 1, abs=ATOL)
    assert ndcg["delta"] == pytest.approx(D2 - 1, abs=ATOL)
    assert (ndcg["new"], ndcg["lost"], ndcg["ideal"], ndcg["reorder_count"]) == (0, 0, 0, 1)
    assert (mrr["change"], mrr["reorder"]) == ("reorder", pytest.approx(-0.5, abs=ATOL))


MRR_CASES = {  # control, treatment, class, delta; relevant a and b, k = 2
    "none before": ([("x", 0)], [("a", 0)], "new", 1.0),  # 0 -> 1/1
    "another first": ([("x", 0), ("b", 0)], [("a", 0), ("b", 0)], "new", 0.5),  # 1/2 -> 1/1, a not b
    "the same moved": ([("x", 0), ("a", 0)], [("a", 0)], "reorder", 0.5),  # a: 1/2 -> 1/1
    "none left": ([("a", 0)], [("x", 0)], "lost", -1.0),  # 1/1 -> 0
    "another at the same rank": ([("b", 0)], [("a", 0)], UNCHANGED, 0.0),  # 1/1 -> 1/1
    "none in either": ([("x", 0)], [("y", 0)], UNCHANGED, 0.0),
}


@pytest.mark.parametrize("case", sorted(MRR_CASES))
def test_each_mrr_class_by_hand(case):
    control, treatment, expected, delta = MRR_CASES[case]
    judgments = _judgments({"q": {"a": 1, "b": 1}})
    parts = _attributed(
        _run({"q": control}), _run({"q": treatment}), judgments, ["q"], _options("ai4j", (2,))
    )
    row = _row(parts, "mrr@2")
    assert row["change"] == expected
    assert row["delta"] == pytest.approx(delta, abs=ATOL)
    for part in PARTS:
        assert row[part] == pytest.approx(delta if part == expected else 0.0, abs=ATOL)


F1_CASES = {  # control, treatment, class, delta; ai4j, relevant a and b (R = 2), k = 2
    # [a, x]: P 1/2, R 1/2, F1 1/2; [a, b]: P 1, R 1, F1 1
    "more relevant hits": ([("a", 0), ("x", 0)], [("a", 0), ("b", 0)], "new", 0.5),
    "fewer": ([("a", 0), ("b", 0)], [("a", 0), ("x", 0)], "lost", -0.5),
    # [a]: depth 1, P 1, R 1/2, F1 2·(1/2)/(3/2) = 2/3; against 1/2: +1/6
    "as many over another depth": ([("a", 0), ("x", 0)], [("a", 0)], "ideal", 1 / 6),
    "as many over the same depth": ([("a", 0), ("x", 0)], [("x", 0), ("b", 0)], UNCHANGED, 0.0),
}


@pytest.mark.parametrize("case", sorted(F1_CASES))
def test_each_f1_class_by_hand(case):
    control, treatment, expected, delta = F1_CASES[case]
    judgments = _judgments({"q": {"a": 1, "b": 1}})
    parts = _attributed(
        _run({"q": control}), _run({"q": treatment}), judgments, ["q"], _options("ai4j", (2,))
    )
    row = _row(parts, "f1@2")
    assert row["change"] == expected
    assert row["delta"] == pytest.approx(delta, abs=ATOL)
    assert row[expected if expected != UNCHANGED else "new"] == pytest.approx(delta, abs=ATOL)


def test_unjudged_newcomers_are_counted_beside_the_parts():
    """Treatment top 3 [a, y, z]: y was in the control's top 3, z is new to it; nobody judged either. One
    unjudged newcomer (z); y is not new. They score 0: the parts hold only a (reordered 2 -> 1)."""
    judgments = _judgments({"q": {"a": 1}})
    control = _run({"q": [("y", 0), ("a", 0), ("x", 0)]})
    treatment = _run({"q": [("a", 0), ("y", 0), ("z", 0)]})
    row = _row(_attributed(control, treatment, judgments, ["q"], _options()), "ndcg@3")
    assert row["unjudged_newcomers"] == 1
    assert row["reorder"] == pytest.approx(1 - D2, abs=ATOL)  # ideal 1 (one relevant id)


def test_the_span_level_recall_denominator_is_a_part_of_its_own():
    """Judgments that differ by variant (span level: each run's own): recall's relevant count moves from 2
    to 1 with the same hit a found, so the whole delta 1/2 -> 1/1 is the ideal part."""
    control_judgments = _judgments({"q": {"a": 1, "doc@0-5": 1}})  # a missed span counts against recall
    treatment_judgments = _judgments({"q": {"a": 1}})
    run = _run({"q": [("a", 0)]})
    parts = _attributed(run, run, control_judgments, ["q"], _options(), treatment_judgments)
    row = _row(parts, "recall@3")
    assert row["delta"] == pytest.approx(0.5, abs=ATOL)
    assert row["ideal"] == pytest.approx(0.5, abs=ATOL)
    assert (row["new"], row["lost"], row["reorder"]) == (0, 0, 0)


def test_the_summary_sums_every_treatment_over_queries():
    """Two queries: the summary's parts are the per-query means (the comparison's delta is a mean over the
    query set), its counts the sums; one row per treatment and metric, with its unit."""
    judgments = _judgments({"q1": {"a": 1}, "q2": {"b": 1}})
    control = _run({"q1": [("x", 0)], "q2": [("b", 0)]})
    treatment = _run({"q1": [("a", 0)], "q2": [("y", 0)]})
    options = _options("ai4j", (1,))
    lists = {name: scored_lists(run, judgments, ["q1", "q2"], **options)
             for name, run in (("control", control), ("t", treatment), ("u", control))}  # fmt: skip
    tables = [attribution(lists["control"], lists[name], ["ndcg@1", "mrr@1"], name=name) for name in "tu"]
    summary = attribution_summary(pd.concat(tables)).set_index(["treatment", "metric"])
    ndcg = summary.loc[("t", "ndcg@1")]  # q1: +1 new, q2: -1 lost; mean 0
    assert (ndcg["new"], ndcg["lost"], ndcg["delta"]) == (0.5, -0.5, 0.0)
    assert (ndcg["new_count"], ndcg["lost_count"], ndcg["unit"], ndcg["n_queries"]) == (1, 1, "hits", 2)
    mrr = summary.loc[("t", "mrr@1")]
    assert (mrr["new_count"], mrr["lost_count"], mrr["unit"]) == (1, 1, "queries")
    assert (summary.loc[("u", "ndcg@1"), list(PARTS)] == 0).all()


def _chunk_run(lists: dict[str, list[tuple[str, int, int]]]) -> pd.DataFrame:
    """Hits as chunks ``doc#i`` with their document and character offsets, best first."""
    rows = [
        (q, r, f"{doc}#{start}", doc, start, end, float(-r))
        for q, hits_of in lists.items()
        for r, (doc, start, end) in enumerate(hits_of, start=1)
    ]
    return pd.DataFrame(rows, columns=["query_id", "rank", "key", "document_id", "start", "end", "score"])


@pytest.mark.parametrize("level", ["chunk", "document", "span"])
@pytest.mark.parametrize("convention", ["ai4j", "trec"])
def test_the_parts_add_up_at_every_annotation_level(level, convention):
    """The run and judgments as each level hands them to the evaluator (document: chunks collapse to their
    document; span: each variant judged by its own hits' overlaps, missed spans counted), attributed."""
    from abcompare.data.levels import apply_level

    control = _chunk_run({"q1": [("d1", 0, 10), ("d2", 0, 10), ("d1", 10, 20)], "q2": [("d3", 0, 10)]})
    treatment = _chunk_run({"q1": [("d1", 10, 20), ("d1", 0, 10), ("d4", 0, 10)], "q2": [("d2", 5, 9)]})
    qrels = _judgments({"q1": {"d1#10": 2, "d1": 1, "d4#0": 1}, "q2": {"d3": 1, "d2": 0, "d2#5": 1}})
    spans = pd.DataFrame({"query_id": ["q1", "q1", "q2"], "document_id": ["d1", "d4", "d3"],
                          "start": [12, 0, 0], "end": [15, 3, 4], "grade": [2, 1, 1]})  # fmt: skip
    options = _options(convention, (1, 2, 3))
    leveled = [apply_level(run, qrels, level, spans) for run in (control, treatment)]
    (run_c, judged_c), (run_t, judged_t) = leveled
    before = _evaluated(run_c, judged_c, ["q1", "q2"], options)
    after = _evaluated(run_t, judged_t, ["q1", "q2"], options)
    parts = _attributed(run_c, run_t, judged_c, ["q1", "q2"], options, judged_t)
    moved = 0
    for metric in _metrics(options):
        rows = parts[parts["metric"] == metric].set_index("query_id")
        delta = (after[metric] - before[metric]).reindex(rows.index)
        np.testing.assert_allclose(rows[list(PARTS)].sum(axis=1), delta, rtol=0, atol=ATOL)
        moved += int((delta != 0).sum())
    assert moved  # the case changes something at every level
