"""Annotation levels: chunk (as is), document (collapse, first occurrence wins), span (overlap rule)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from abcompare.data import apply_level, read_corpus, read_spans
from abcompare.errors import AbcompareWarning, DataError

FIXTURES = Path(__file__).parent / "fixtures"


def _run(rows, columns=("query_id", "rank", "key", "score")):
    return pd.DataFrame(rows, columns=list(columns))


def test_chunk_level_returns_inputs_unchanged():
    run = _run([["q", 1, "a#0", 1.0]])
    ann = pd.DataFrame({"query_id": ["q"], "key": ["a#0"], "grade": [1]})
    out_run, out_ann = apply_level(run, ann, "chunk")
    assert out_run is run and out_ann is ann


def test_document_level_collapses_by_key_prefix_first_occurrence_wins_and_renumbers():
    run = _run(
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
    run = _run(
        [["q", 1, "custom-a", 1.0, "D1"], ["q", 2, "custom-b", 0.5, "D1"], ["q", 3, "x#1", 0.2, None]],
        columns=("query_id", "rank", "key", "score", "document_id"),
    )
    out, _ = apply_level(run, pd.DataFrame(columns=["query_id", "key", "grade"]), "document")
    assert out["key"].tolist() == ["D1", "x"]
    assert out["rank"].tolist() == [1, 2]


def test_document_level_follows_rank_not_row_order():
    run = _run([["q", 2, "d1#1", 0.1], ["q", 1, "d1#0", 0.9]])
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
    assert ann.values.tolist() == [["q1", "d1#0", 1], ["q1", "d1#1", 3], ["q2", "d2@10-15", 2]]


def test_span_level_ignores_spans_of_other_documents_or_queries():
    spans = pd.DataFrame({"query_id": ["q2"], "document_id": ["d1"], "start": [0], "end": [30]})
    _, ann = apply_level(_span_run(), None, "span", spans=spans)
    assert ann.values.tolist() == [["q2", "d1@0-30", 1]]


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
    assert ann.values.tolist() == [["q1", "d1#0", 1]]


def test_span_level_without_offsets_is_an_error_and_partial_offsets_warn():
    run = _run([["q", 1, "d#0", 1.0]])
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
