"""The alignment report: the doc-1 vs doc-1#chunk-0 pitfall and its cousins are caught and explained."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from support.frames import run_of_keys

from abcompare.core.errors import AbcompareWarning, AlignmentError
from abcompare.data import alignment_report, check_alignment
from abcompare.data.alignment import fraction_in_run


def _ann(pairs, grade=1):
    return pd.DataFrame([(q, k, grade) for q, k in pairs], columns=["query_id", "key", "grade"])


@pytest.mark.parametrize("suffix", ["#chunk-0", "#0"])
def test_document_annotations_against_chunk_keys_are_diagnosed(suffix):
    run = run_of_keys({"q1": [f"doc-1{suffix}", f"doc-2{suffix}"], "q2": [f"doc-3{suffix}"]})
    report = alignment_report(run, _ann([("q1", "doc-1"), ("q2", "doc-3")]))
    assert (report.annotated_ids, report.annotated_ids_in_run, report.fraction_in_run) == (2, 0, 0.0)
    assert report.queries_without_annotated_hits == ("q1", "q2")
    assert "look like document ids" in report.diagnosis and "chunk keys" in report.diagnosis
    assert f"'doc-1{suffix}'" in report.diagnosis
    assert "use level: document" in report.fix and "set hit ids" in report.fix
    with pytest.raises(AlignmentError, match="only 0 of 2 annotated ids") as err:
        check_alignment(report)
    assert "use level: document" in str(err.value)


def test_chunk_annotations_against_document_keys_are_diagnosed():
    report = alignment_report(
        run_of_keys({"q": ["doc-1", "doc-2"]}), _ann([("q", "doc-1#0"), ("q", "doc-2#3")])
    )
    assert "look like chunk keys" in report.diagnosis
    assert "chunk_index" in report.fix


def test_case_and_whitespace_differences_are_diagnosed():
    case = alignment_report(run_of_keys({"q": ["DOC-1", "DOC-2"]}), _ann([("q", "doc-1"), ("q", "doc-2")]))
    assert "upper/lower case" in case.diagnosis
    space = alignment_report(run_of_keys({"q": ["doc 1", "doc 2"]}), _ann([("q", "doc1"), ("q", "doc2")]))
    assert "whitespace" in space.diagnosis


def test_positional_fallback_keys_are_diagnosed():
    report = alignment_report(run_of_keys({"q": ["0", "1", "2"]}), _ann([("q", "doc-1")]))
    assert "list positions" in report.diagnosis


def test_query_ids_that_never_meet_are_diagnosed():
    report = alignment_report(run_of_keys({"1": ["a"]}), _ann([("q1", "a")]))
    assert "no query id of the run appears in the annotations" in report.diagnosis
    assert report.queries_missing_from_run == ("q1",)


def test_aligned_run_has_no_diagnosis_and_passes():
    run = run_of_keys({"q1": ["a", "b", "a"], "q2": ["c"], "q3": ["x"]})
    ann = pd.concat(
        [_ann([("q1", "a"), ("q2", "z"), ("q3", "x"), ("q4", "y")]), _ann([("q1", "b")], grade=0)]
    )
    report = alignment_report(run, ann)
    # relevant ids of the run's queries: a, z, x (b is grade 0, q4 is not in the run) -> a and x appear
    assert (report.annotated_ids, report.annotated_ids_in_run) == (3, 2)
    assert math.isclose(report.fraction_in_run, 2 / 3)
    # q4 is missing from the run: it has no hits, so none with its annotated id (issue 37)
    assert report.queries_without_annotated_hits == ("q2", "q4")
    assert report.queries_missing_from_run == ("q4",)
    assert report.hit_lists_with_repeated_keys == 1
    assert report.diagnosis is None
    assert check_alignment(report) is report
    assert report.summary().startswith("alignment: 2/3 annotated ids appear among hit keys (67%)")


def test_to_dict_is_flat_scalars_for_mlflow():
    report = alignment_report(run_of_keys({"q": ["doc-1#0"]}), _ann([("q", "doc-1")]))
    flat = report.to_dict()
    assert all(isinstance(v, (int, float, str)) for v in flat.values())
    assert flat["queries_without_annotated_hits"] == 1
    assert flat["diagnosis"] == report.diagnosis


def test_allow_misaligned_warns_instead_of_failing():
    report = alignment_report(run_of_keys({"q": ["doc-1#0"]}), _ann([("q", "doc-1")]))
    with pytest.warns(AbcompareWarning, match="allow_misaligned"):
        check_alignment(report, allow_misaligned=True)


def test_min_fraction_is_the_threshold():
    report = alignment_report(run_of_keys({"q": ["a", "b"]}), _ann([("q", "a"), ("q", "c")]))  # 1 of 2 = 50%
    assert check_alignment(report, min_fraction=0.5) is report
    with pytest.raises(AlignmentError, match="only 1 of 2"):
        check_alignment(report, min_fraction=0.75)


def test_no_relevant_annotations_fails():
    report = alignment_report(run_of_keys({"q": ["a"]}), _ann([("q", "a")], grade=0))
    assert report.annotated_ids == 0 and math.isnan(report.fraction_in_run)
    with pytest.raises(AlignmentError, match="no relevant annotations"):
        check_alignment(report)


def test_span_level_missed_evidence_counts_as_matchable_when_its_document_was_retrieved():
    from abcompare.data import apply_level

    run = pd.DataFrame(
        {
            "query_id": ["q", "q"],
            "rank": [1, 2],
            "key": ["a#0", "b#0"],
            "score": [2.0, 1.0],
            "document_id": ["a", "b"],
            "start": [0, 0],
            "end": [10, 10],
        }
    )
    spans = pd.DataFrame(
        {
            "query_id": ["q", "q", "q"],
            "document_id": ["a", "b", "z"],
            "start": [50, 60, 0],
            "end": [60, 70, 5],
        }
    )
    _, ann = apply_level(run, None, "span", spans=spans)  # no hit overlaps any span
    report = alignment_report(run, ann)
    # spans in documents a and b could match (those documents were retrieved); z's could not
    assert (report.annotated_ids, report.annotated_ids_in_run) == (3, 2)


def test_queries_absent_from_the_run_count_as_without_an_annotated_hit():
    """The issue's two runs: one covering none of the annotated queries (it counted 0 without one), one
    covering some of them (it counted only the covered query that missed)."""
    ann = _ann([(f"q{i}", f"d{i}") for i in range(1, 7)])
    none = alignment_report(run_of_keys({"other": ["d1"]}), ann)
    assert len(none.queries_without_annotated_hits) == 6
    assert "6 queries without one among its hits" in none.summary()
    part = alignment_report(run_of_keys({"q1": ["d1"], "q2": ["d9"], "q3": ["d3"]}), ann)
    assert part.queries_without_annotated_hits == ("q2", "q4", "q5", "q6")
    assert part.queries_missing_from_run == ("q4", "q5", "q6")


def test_fraction_in_run_counts_what_the_report_counts_without_building_it():
    # q1 and q2 are run queries; q9 is not, so its relevant id d9 is out of scope. In scope: d1, d2, d3
    # (d4 has grade 0: not relevant). Among the hit keys: d1 and d3 (d3 under q1 still counts: the key
    # exists), so 2 of 3.
    run = run_of_keys({"q1": ["d1", "d3", "x"], "q2": ["y", "d1"]})
    annotations = pd.concat(
        [_ann([("q1", "d1"), ("q2", "d2"), ("q2", "d3"), ("q9", "d9")]), _ann([("q1", "d4")], grade=0)]
    )
    fraction = fraction_in_run(run["query_id"], run["key"], annotations, relevance_threshold=1)
    assert fraction == pytest.approx(2 / 3)
    assert alignment_report(run, annotations).fraction_in_run == pytest.approx(2 / 3)
    # no run query is annotated: every relevant annotation is measured, as the report does (d1 of d1, d9)
    other = _ann([("z1", "d1"), ("z2", "d9")])
    assert fraction_in_run(run["query_id"], run["key"], other) == pytest.approx(1 / 2)
    assert math.isnan(fraction_in_run(run["query_id"], run["key"], _ann([("q1", "d1")], grade=0)))
