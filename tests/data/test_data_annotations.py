"""Annotations (TREC qrels, BEIR TSV, JSONL) and evidence spans: formats, located errors, round trips."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from abcompare.core.errors import DataError
from abcompare.data import read_annotations, read_spans, write_trec_qrels

FIXTURES = Path(__file__).parent / "fixtures"


def _write(tmp_path: Path, text: str, name: str = "qrels.txt") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_trec_qrels_keep_grades_including_zero():
    ann = read_annotations(FIXTURES / "qrels_small.txt")
    assert ann.values.tolist() == [["q1", "d1", 2], ["q1", "d2", 0], ["q1", "d3", 1], ["q2", "d4", 1]]
    assert list(ann.columns) == ["query_id", "key", "grade"]


def test_trec_conformance_qrels_grade_counts(trec_conformance_dir):
    ann = read_annotations(trec_conformance_dir / "qrels.test")
    lines = (trec_conformance_dir / "qrels.test").read_text().split("\n")
    grades = pd.Series([int(line.split()[3]) for line in lines if line.strip()])
    assert len(ann) == len(grades) == 3681
    assert ann["grade"].value_counts().sort_index().to_dict() == grades.value_counts().sort_index().to_dict()
    assert ann["query_id"].unique().tolist() == ["301", "302", "303"]


def test_trec_qrels_negative_grades_are_kept(trec_conformance_dir):
    ann = read_annotations(trec_conformance_dir / "qrels.rel_level")
    assert (ann["grade"] == -1).sum() == sum(
        1
        for line in (trec_conformance_dir / "qrels.rel_level").read_text().splitlines()
        if line.split()[3] == "-1"
    )


def test_beir_tsv_with_header_is_detected(datasets_dir):
    ann = read_annotations(datasets_dir / "cisi" / "qrels" / "test.tsv")
    assert len(ann) == 3114
    assert ann["query_id"].nunique() == 76
    assert set(ann["grade"]) == {1}


def test_jsonl_relevant_ids_and_graded_forms(tmp_path):
    path = _write(
        tmp_path,
        '{"query_id": "q1", "relevant_ids": ["a", "b"]}\n{"query_id": 2, "relevant": {"c": 3, "d": 0}}\n',
        "ann.jsonl",
    )
    assert read_annotations(path).values.tolist() == [
        ["q1", "a", 1],
        ["q1", "b", 1],
        ["2", "c", 3],
        ["2", "d", 0],
    ]


def test_identical_repeated_judgments_are_kept_once(tmp_path):
    ann = read_annotations(_write(tmp_path, "q 0 a 1\nq 0 a 1\nq 0 b 0\n"))
    assert ann.values.tolist() == [["q", "a", 1], ["q", "b", 0]]


def test_conflicting_grades_for_a_pair_name_both_lines(tmp_path):
    path = _write(tmp_path, "q 0 a 1\nq 0 b 1\nq 0 a 2\n")
    with pytest.raises(
        DataError, match=r"conflicting grades \[1, 2\] for query 'q', id 'a' \(lines 1, 3\)"
    ) as err:
        read_annotations(path)
    assert err.value.line == 3


def test_qrels_wrong_column_count_is_located(tmp_path):
    path = _write(tmp_path, "q 0 a 1\n\nq 0 b\n")
    with pytest.raises(DataError, match="wrong column count: expected 4 fields, found 3") as err:
        read_annotations(path, fmt="trec")
    assert err.value.line == 3
    path = _write(tmp_path, "q 0 a 1 extra\n")
    with pytest.raises(DataError, match="found 5"):
        read_annotations(path, fmt="trec")


@pytest.mark.parametrize(
    ("grade", "message"), [("high", "non-numeric grade 'high'"), ("1.5", "grade '1.5' is not an integer")]
)
def test_qrels_bad_grade_is_located(tmp_path, grade, message):
    path = _write(tmp_path, f"q 0 a 1\nq 0 b {grade}\n")
    with pytest.raises(DataError, match=message) as err:
        read_annotations(path)
    assert err.value.line == 2


def test_beir_tsv_wrong_column_count_and_bad_grade(tmp_path):
    path = _write(tmp_path, "query-id\tcorpus-id\tscore\nq\ta\t1\nq\tb\n", "qrels.tsv")
    with pytest.raises(DataError, match="expected 3 fields, found 2") as err:
        read_annotations(path)
    assert err.value.line == 3
    path = _write(tmp_path, "query-id\tcorpus-id\tscore\nq\ta\tyes\n", "qrels.tsv")
    with pytest.raises(DataError, match="non-numeric grade 'yes'") as err:
        read_annotations(path, fmt="beir")
    assert err.value.line == 2


def test_jsonl_annotation_errors_are_located(tmp_path):
    with pytest.raises(DataError, match="needs 'relevant_ids' or 'relevant'") as err:
        read_annotations(_write(tmp_path, '{"query_id": "q"}\n', "a.jsonl"))
    assert err.value.line == 1
    with pytest.raises(DataError, match="non-numeric grade 'x'") as err:
        read_annotations(
            _write(
                tmp_path,
                '{"query_id": "q", "relevant": {"a": 1}}\n{"query_id": "r", "relevant": {"b": "x"}}\n',
                "b.jsonl",
            )
        )
    assert err.value.line == 2
    assert err.value.field == "relevant.b"
    with pytest.raises(DataError, match="missing field 'query_id'"):
        read_annotations(_write(tmp_path, '{"relevant_ids": ["a"]}\n', "c.jsonl"))


def test_missing_and_empty_annotation_files(tmp_path):
    with pytest.raises(DataError, match="annotation file not found"):
        read_annotations(tmp_path / "none.txt")
    with pytest.raises(DataError, match="annotation file is empty"):
        read_annotations(_write(tmp_path, "\n\n"))


def test_unreadable_annotation_encoding_is_located(tmp_path):
    path = tmp_path / "q.txt"
    path.write_bytes("q 0 a 1\nq 0 caf\u00e9 1\n".encode("latin-1"))
    with pytest.raises(DataError, match="invalid UTF-8") as err:
        read_annotations(path)
    assert err.value.line == 2


_ids = st.text(alphabet="abcXYZ019-_.:/#", min_size=1, max_size=6)


@given(
    st.lists(
        st.tuples(st.from_regex(r"[a-z0-9][a-z0-9#._-]{0,5}", fullmatch=True), _ids, st.integers(-1, 4)),
        min_size=1,
        max_size=20,
        unique_by=lambda t: (t[0], t[1]),
    )
)
@settings(max_examples=60, deadline=None)
def test_trec_qrels_round_trip(tmp_path_factory, rows):
    frame = pd.DataFrame(rows, columns=["query_id", "key", "grade"])
    path = write_trec_qrels(frame, tmp_path_factory.mktemp("qrels") / "qrels.txt")
    back = read_annotations(path, fmt="trec")
    assert back.values.tolist() == frame.values.tolist()


# ------------------------------------------------------------------------------------------------ spans
def test_spans_read_with_default_grade():
    spans = read_spans(FIXTURES / "spans.jsonl")
    assert spans.values.tolist() == [["q1", "d1", 0, 24, 1], ["q2", "d2", 0, 31, 2]]


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ('{"query_id": "q", "document_id": "d", "start": 5, "end": 5}', r"empty or negative span \[5, 5\)"),
        ('{"query_id": "q", "document_id": "d", "start": "0", "end": 5}', "start must be an integer"),
        ('{"query_id": "q", "start": 0, "end": 5}', "missing field 'document_id'"),
        ('{"query_id": "q", "document_id": "d", "start": 0, "end": 5, "grade": "x"}', "non-numeric grade"),
    ],
)
def test_bad_spans_are_located(tmp_path, record, message):
    path = _write(
        tmp_path, '{"query_id": "q", "document_id": "d", "start": 0, "end": 1}\n' + record + "\n", "s.jsonl"
    )
    with pytest.raises(DataError, match=message) as err:
        read_spans(path)
    assert err.value.line == 2
