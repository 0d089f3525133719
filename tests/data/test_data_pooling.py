"""Pooling: every unjudged hit of every variant's top k, once, in a stable order; the filled file reads back
as annotations; and judging the pool leaves nothing unjudged in any top k."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import frames

from abcompare.core.errors import DataError
from abcompare.data.annotations import read_annotation_files, read_annotations
from abcompare.data.pooling import pool_unjudged, read_pool, write_pool
from abcompare.evaluation.batch import evaluate_run, in_evaluation_order

QUERIES = pd.DataFrame({"query_id": ["q2", "q1"], "text": ["second question", "first question"]})


def run_frame(rows):
    """A run with each hit's document and text, the pool's reading columns."""
    return frames.run_frame(rows, [*frames.RUN_COLUMNS, "document_id", "content"])


def test_the_pool_holds_each_unjudged_top_hit_once_with_who_retrieved_it_where():
    control = run_frame(
        [
            ("q1", 1, "a", 3.0, "A", "text a"),
            ("q1", 2, "x", 2.0, "X", "text x"),
            ("q1", 3, "y", 1.0, "Y", "text y"),
            ("q2", 1, "z", 1.0, "Z", "text z"),
        ]
    )
    treatment = run_frame(
        [("q1", 1, "y", 9.0, "Y", "text y"), ("q1", 2, "w", 8.0, "W", "text w"), ("q9", 1, "v", 1.0, "V", "")]
    )
    annotations = pd.DataFrame({"query_id": ["q1", "q1"], "key": ["a", "w"], "grade": [2, 0]})
    pool = pool_unjudged({"control": control, "new": treatment}, annotations, QUERIES, depth=2)
    # docs/data.md: "query_id, key, grade (empty), query, document_id, retrieved_by, best_rank, text"
    assert list(pool.columns) == [
        "query_id", "key", "grade", "query", "document_id", "retrieved_by", "best_rank", "text"
    ]  # fmt: skip
    # q2 comes first (the query set's order); y is at depth 3 for the control but depth 1 for "new"
    assert pool[["query_id", "key", "retrieved_by", "best_rank"]].values.tolist() == [
        ["q2", "z", "control@1", 1],
        ["q1", "y", "new@1", 1],
        ["q1", "x", "control@2", 2],
    ]
    assert pool["query"].tolist() == ["second question", "first question", "first question"]
    assert pool["text"].tolist() == ["text z", "text y", "text x"]
    assert pool["grade"].isna().all()


def test_document_keys_take_their_text_from_the_corpus():
    run = run_frame([("q1", 1, "D1", 1.0, "D1", None)])
    documents = pd.DataFrame({"doc_id": ["D1"], "title": ["Leave"], "text": ["Annual leave is 25 days."]})
    empty = pd.DataFrame({"query_id": [], "key": [], "grade": []})
    pool = pool_unjudged({"control": run}, empty, QUERIES, documents=documents)
    assert pool["text"].tolist() == ["Leave\nAnnual leave is 25 days."]


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_a_filled_pool_reads_back_as_annotations_skipping_rows_left_empty(tmp_path, fmt):
    run = run_frame(
        [("q1", 1, "a", 2.0, "A", 'with "quotes", commas\nand a newline'), ("q1", 2, "b", 1.0, "B", "")]
    )
    pool = pool_unjudged({"control": run}, pd.DataFrame(columns=["query_id", "key", "grade"]), QUERIES)
    pool.loc[0, "grade"] = 2
    path = write_pool(pool, tmp_path / f"pool.{fmt}", fmt)
    read = read_annotations(path)
    assert read.values.tolist() == [["q1", "a", 2]]
    assert read_pool(path)["grade"].dtype == np.int64


def test_a_bad_grade_in_a_pool_file_names_the_file_and_line(tmp_path):
    path = tmp_path / "pool.csv"
    path.write_text('query_id,key,grade,text\nq1,a,1,"two\nlines"\nq1,b,maybe,x\n')
    with pytest.raises(DataError, match=r"pool\.csv:4: grade: grade 'maybe' is not a number"):
        read_annotations(path)
    path.write_text("query_id,key,grade\nq1,a,1.5\n")
    with pytest.raises(
        DataError, match=r"pool\.csv:2: grade: grade '1.5' is not a whole number in the grade range"
    ):
        read_annotations(path)


@pytest.mark.parametrize(
    ("grade", "accepted"), [(2**31 - 1, True), (-(2**31), True), (2**31, False), (10**7, True)]
)
def test_a_pool_file_bounds_grades_as_every_annotation_format_does(tmp_path, grade, accepted):
    """One bound per quantity: the 32-bit range the documentation states, in a pool file as in qrels."""
    pool, qrels = tmp_path / "pool.csv", tmp_path / "qrels.txt"
    pool.write_text(f"query_id,key,grade\nq1,a,{grade}\n")
    qrels.write_text(f"q1 0 a {grade}\n")
    for path in (pool, qrels):
        if accepted:
            assert read_annotations(path)["grade"].tolist() == [grade]
        else:
            with pytest.raises(DataError, match="grade"):
                read_annotations(path)


def test_merging_the_pool_with_the_qrels_keeps_one_row_per_judgment(tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 a 1\n")
    pool = tmp_path / "pool.csv"
    pool.write_text("query_id,key,grade\nq1,a,1\nq1,b,0\n")
    merged = read_annotation_files([qrels, pool])
    assert merged.values.tolist() == [["q1", "a", 1], ["q1", "b", 0]]


keys = st.sampled_from(["a", "b", "c", "d", "e", "f"])
lists = st.lists(st.tuples(keys, st.sampled_from([0.0, 1.0, 2.0])), max_size=8)
runs = st.dictionaries(st.sampled_from(["q1", "q2", "q3"]), lists, max_size=3)


def _frame(run):
    rows = [(q, r, k, s, None, None) for q, hits in run.items() for r, (k, s) in enumerate(hits, 1)]
    return run_frame(rows)


@settings(max_examples=120, deadline=None)
@given(runs, runs, st.dictionaries(st.tuples(st.sampled_from(["q1", "q2", "q3"]), keys), st.integers(0, 2)),
       st.integers(1, 6), st.sampled_from(["ai4j", "trec"]))  # fmt: skip
def test_judging_the_pool_leaves_no_unjudged_hit_in_any_top_k(control, treatment, judged, depth, convention):
    """The property pooling exists for: after the pool is judged, judged@depth is 1 for every query with hits
    (for the lists as the evaluator orders them: score order and first occurrences in trec)."""
    annotations = pd.DataFrame(
        [(q, k, g) for (q, k), g in judged.items()] + [(q, "never-retrieved", 1) for q in ("q1", "q2", "q3")],
        columns=["query_id", "key", "grade"],
    )
    queries = pd.DataFrame({"query_id": ["q1", "q2", "q3"], "text": ["1", "2", "3"]})
    variants = {"c": _frame(control), "t": _frame(treatment)}
    ordered = {name: in_evaluation_order(run, convention) for name, run in variants.items()}
    pool = pool_unjudged(ordered, annotations, queries, depth=depth)
    assert not pool.duplicated(["query_id", "key"]).any()
    filled = pd.concat([annotations, pool[["query_id", "key"]].assign(grade=0)], ignore_index=True)
    for run in variants.values():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            frame = evaluate_run(run, filled, k=depth, convention=convention)
        with_hits = frame["retrieved_count"] > 0
        assert (frame.loc[with_hits, f"judged@{depth}"] == 1.0).all()


@settings(max_examples=100, deadline=None)
@given(runs, st.sampled_from(["ai4j", "trec"]))
def test_the_evaluation_order_scores_the_same_as_the_run_it_came_from(run, convention):
    frame = _frame(run)
    annotations = {q: {"a": 1, "c": 2} for q in ("q1", "q2", "q3")}
    ordered = in_evaluation_order(frame, convention).drop(columns="score")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = evaluate_run(frame, annotations, k=(1, 3), convention=convention)
        got = evaluate_run(ordered, annotations, k=(1, 3), convention=convention)
    columns = [c for c in want.columns if c != "retrieved_count"]  # trec drops repeated keys up front
    pd.testing.assert_frame_equal(got[columns], want[columns])
