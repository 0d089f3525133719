"""Annotation levels: chunk (as is), document (collapse, first occurrence wins), span (overlap rule)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from support.frames import run_frame

from abcompare.core.errors import AbcompareWarning, DataError
from abcompare.data import apply_level, read_corpus, read_spans
from abcompare.data.levels import with_grades

FIXTURES = Path(__file__).parent / "fixtures"


def test_chunk_level_returns_inputs_unchanged():
    run = run_frame([["q", 1, "a#0", 1.0]])
    ann = pd.DataFrame({"query_id": ["q"], "key": ["a#0"], "grade": [1]})
    out_run, out_ann = apply_level(run, ann, "chunk")
    assert out_run is run and out_ann is ann


def test_document_level_collapses_by_key_prefix_first_occurrence_wins_and_renumbers():
    run = run_frame(
        [
            ["q", 1, "doc-1#chunk-0", 0.9],
            ["q", 2, "doc-2#0", 0.8],
            ["q", 3, "doc-1#chunk-5", 0.7],
            ["q", 4, "doc-3", 0.6],
            ["r", 1, "doc-2#1", 0.5],
        ]
    )
    out, _ = apply_level(run, pd.DataFrame(columns=["query_id", "key", "grade"]), "document")
    assert out[["query_id", "rank", "key", "score"]].values.tolist() == [
        ["q", 1, "doc-1", 0.9],
        ["q", 2, "doc-2", 0.8],
        ["q", 3, "doc-3", 0.6],
        ["r", 1, "doc-2", 0.5],
    ]


def test_document_level_prefers_the_document_id_column_over_the_key():
    run = run_frame(
        [["q", 1, "custom-a", 1.0, "D1"], ["q", 2, "custom-b", 0.5, "D1"], ["q", 3, "x#1", 0.2, None]],
        columns=("query_id", "rank", "key", "score", "document_id"),
    )
    out, _ = apply_level(run, pd.DataFrame(columns=["query_id", "key", "grade"]), "document")
    assert out["key"].tolist() == ["D1", "x"]
    assert out["rank"].tolist() == [1, 2]


def test_document_level_follows_rank_not_row_order():
    run = run_frame([["q", 2, "d1#1", 0.1], ["q", 1, "d1#0", 0.9]])
    out, _ = apply_level(run, pd.DataFrame(columns=["query_id", "key", "grade"]), "document")
    assert out[["rank", "key", "score"]].values.tolist() == [[1, "d1", 0.9]]


def _span_run():
    return pd.DataFrame(
        {
            "query_id": ["q1"] * 4 + ["q2"],
            "rank": [1, 2, 3, 4, 1],
            "key": ["d1#0", "d1#1", "d1#2", "d2#0", "d2#0"],
            "score": [4.0, 3.0, 2.0, 1.0, 1.0],
            "document_id": ["d1", "d1", "d1", "d2", "d2"],
            "start": [0, 10, 20, 0, 0],
            "end": [10, 20, 30, 10, 10],
        }
    )


def test_span_level_overlap_is_half_open_and_grade_is_the_best_overlapped_span():
    spans = pd.DataFrame(
        {
            "query_id": ["q1", "q1", "q2"],
            "document_id": ["d1", "d1", "d2"],
            "start": [5, 19, 10],  # q1: [5, 12) touches chunks 0 and 1; [19, 20) touches chunk 1 only
            "end": [12, 20, 15],  # q2: [10, 15) starts where chunk d2#0 [0, 10) ends: no overlap
            "grade": [1, 3, 2],
        }
    )
    _, ann = apply_level(_span_run(), None, "span", spans=spans)
    assert ann[["query_id", "key", "grade"]].values.tolist() == [
        ["q1", "d1#0", 1],
        ["q1", "d1#1", 3],
        ["q1", "d1#2", 0],  # a located hit of a query with evidence that overlaps none: judged, grade 0
        ["q1", "d2#0", 0],
        ["q2", "d2#0", 0],
        ["q2", "d2@10-15", 2],
    ]
    assert ann["span_document"].isna().tolist() == [True, True, True, True, True, False]
    assert ann["span_document"].iloc[5] == "d2"


def test_span_level_ignores_spans_of_other_documents_or_queries():
    spans = pd.DataFrame({"query_id": ["q2"], "document_id": ["d1"], "start": [0], "end": [30]})
    _, ann = apply_level(_span_run(), None, "span", spans=spans)
    assert ann[["query_id", "key", "grade"]].values.tolist() == [["q2", "d2#0", 0], ["q2", "d1@0-30", 1]]


def test_span_level_finds_offsets_of_hit_content_in_the_corpus():
    corpus = read_corpus(FIXTURES / "beir_tiny" / "corpus.jsonl")
    spans = read_spans(FIXTURES / "spans.jsonl")  # q1: d1 [0, 24) = "Annual leave is 25 days."
    run = pd.DataFrame(
        {
            "query_id": ["q1", "q1"],
            "rank": [1, 2],
            "key": ["d1#1", "d1#0"],
            "score": [1.0, 0.5],
            "document_id": ["d1", "d1"],
            "content": ["Carry over up to 5 days.", "Annual leave"],
        }
    )
    _, ann = apply_level(run, None, "span", spans=spans[spans["query_id"] == "q1"], corpus=corpus)
    assert ann[["query_id", "key", "grade"]].values.tolist() == [["q1", "d1#0", 1], ["q1", "d1#1", 0]]


def test_span_level_without_offsets_is_an_error_and_partial_offsets_warn():
    run = run_frame([["q", 1, "d#0", 1.0]])
    spans = pd.DataFrame({"query_id": ["q"], "document_id": ["d"], "start": [0], "end": [5]})
    with pytest.raises(DataError, match="needs each hit's character offsets"):
        apply_level(run, None, "span", spans=spans)
    partial = _span_run()
    partial.loc[1, "start"] = None
    with pytest.warns(AbcompareWarning, match="1 of 5 hits have no character offsets"):
        apply_level(partial, None, "span", spans=spans)


def test_span_level_needs_spans_and_unknown_level_is_an_error():
    with pytest.raises(DataError, match="needs evidence spans"):
        apply_level(_span_run(), None, "span")
    with pytest.raises(DataError, match="unknown annotation level 'passage'"):
        apply_level(_span_run(), None, "passage")


# ------------------------------------------------------------------------------ properties vs brute force


@st.composite
def chunked_runs(draw):
    rows = []
    for q in ("q1", "q2"):
        n = draw(st.integers(0, 6))
        for r in range(n):
            doc = draw(st.sampled_from(["a", "b"]))
            start = draw(st.integers(0, 40))
            rows.append(
                (q, r + 1, f"{doc}#{start}", float(n - r), doc, start, start + draw(st.integers(1, 15)))
            )
    run = pd.DataFrame(rows, columns=["query_id", "rank", "key", "score", "document_id", "start", "end"])
    spans = pd.DataFrame(
        draw(
            st.lists(
                st.tuples(
                    st.sampled_from(["q1", "q2"]),
                    st.sampled_from(["a", "b"]),
                    st.integers(0, 50),
                    st.integers(1, 10),
                    st.integers(1, 3),
                ),
                min_size=1,
                max_size=5,
            )
        ),
        columns=["query_id", "document_id", "start", "length", "grade"],
    )
    spans["end"] = spans["start"] + spans.pop("length")
    return run, spans


@given(chunked_runs())
@settings(max_examples=120, deadline=None)
def test_span_annotations_match_a_brute_force_reading_of_the_rule(case):
    run, spans = case
    assume(not run.empty)
    expected: dict[tuple[str, str], int] = {}
    for hit in run.itertuples():
        for span in spans.itertuples():
            same = (hit.query_id, hit.document_id) == (span.query_id, span.document_id)
            if same and hit.start < span.end and span.start < hit.end:
                pair = (hit.query_id, hit.key)
                expected[pair] = max(expected.get(pair, 0), span.grade)
    with_evidence = set(spans["query_id"])
    for hit in run.itertuples():
        if hit.query_id in with_evidence:
            expected.setdefault((hit.query_id, hit.key), 0)  # evidence is complete: the rest is judged 0
    for span in spans.itertuples():
        touched = any(
            (h.query_id, h.document_id) == (span.query_id, span.document_id)
            and h.start < span.end
            and span.start < h.end
            for h in run.itertuples()
        )
        if not touched:
            pair = (span.query_id, f"{span.document_id}@{span.start}-{span.end}")
            expected[pair] = max(expected.get(pair, 0), span.grade)
    _, ann = apply_level(run, None, "span", spans=spans)
    assert {(q, k): g for q, k, g in ann[["query_id", "key", "grade"]].itertuples(index=False)} == expected
    assert not ann.duplicated(["query_id", "key"]).any()


@given(chunked_runs())
@settings(max_examples=80, deadline=None)
def test_document_level_matches_a_brute_force_collapse(case):
    run, _ = case
    out, _ = apply_level(run, pd.DataFrame(columns=["query_id", "key", "grade"]), "document")
    expected = []
    for q in pd.unique(run["query_id"]):
        seen: list[str] = []
        for hit in run[run["query_id"] == q].sort_values("rank").itertuples():
            if hit.document_id not in seen:
                seen.append(hit.document_id)
                expected.append((q, len(seen), hit.document_id, hit.score))
    assert [tuple(r) for r in out[["query_id", "rank", "key", "score"]].itertuples(index=False)] == expected


def test_with_grades_gives_each_hit_its_highest_grade_of_its_own_query():
    run = pd.DataFrame(
        {"query_id": ["q1", "q1", "q1", "q2"], "rank": [1, 2, 3, 1], "key": ["a", "b", "c", "a"]}
    )
    judged = pd.DataFrame(
        {"query_id": ["q1", "q1", "q1", "q2"], "key": ["a", "a", "c", "b"], "grade": [1, 3, 0, 2]}
    )
    graded = with_grades(run, judged)
    # q1/a judged twice: its best grade 3; q1/b unjudged (b is judged for q2 only); q1/c 0; q2/a unjudged
    assert graded["grade"].tolist()[:3] == [3.0, pytest.approx(float("nan"), nan_ok=True), 0.0]
    assert pd.isna(graded["grade"].iloc[3]) and graded["grade"].dtype == float
    assert list(graded.columns) == ["query_id", "rank", "key", "grade"]
    assert with_grades(run, judged.iloc[:0])["grade"].isna().all()
