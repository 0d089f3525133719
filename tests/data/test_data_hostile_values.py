"""Values a careful or unlucky user writes: grades and offsets out of range, extra query fields whose type
varies, JSON nested without end, inputs that can be read only once (a named pipe). Each is read exactly or
is a located DataError, never a silent wrap-around, a raw Arrow error or a hang."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from abcompare.core.errors import DataError
from abcompare.data import read_annotations, read_corpus, read_queries, read_run, read_spans, write_run

FIXTURE = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
# docs/data.md's bounds, written out: "a whole number from -2**31 to 2**31-1" (grades), "within ±2**53"
# (ranks, chunk indexes, offsets), "a JSON line nested deeper than 64 levels"
MIN_GRADE, MAX_GRADE = -(2**31), 2**31 - 1
MAX_INDEX = 2**53
MAX_JSON_DEPTH = 64
IN_RANGE = st.integers(MIN_GRADE, MAX_GRADE)
OUT_OF_RANGE = st.one_of(st.integers(max_value=MIN_GRADE - 1), st.integers(min_value=MAX_GRADE + 1))


def qrels_file(tmp_path: Path, fmt: str, grade: str) -> Path:
    if fmt == "trec":
        path = tmp_path / "qrels.txt"
        path.write_text(f"q1 0 d1 1\nq1 0 d2 {grade}\n")
    elif fmt == "beir":
        path = tmp_path / "qrels.tsv"
        path.write_text(f"query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\t{grade}\n")
    else:
        path = tmp_path / "qrels.jsonl"
        path.write_text(
            '{"query_id": "q1", "relevant": {"d1": 1}}\n'
            + '{"query_id": "q1", "relevant": {"d2": '
            + grade
            + "}}\n"
        )
    return path


@pytest.mark.parametrize("fmt", ["trec", "beir", "jsonl"])
@FIXTURE
@given(grade=IN_RANGE)
def test_every_grade_in_range_reads_exactly(tmp_path: Path, fmt: str, grade: int) -> None:
    frame = read_annotations(qrels_file(tmp_path, fmt, str(grade)))
    assert frame["grade"].tolist() == [1, grade]


@pytest.mark.parametrize("fmt", ["trec", "beir", "jsonl"])
@FIXTURE
@given(grade=st.one_of(OUT_OF_RANGE.map(str), st.sampled_from(["1e30", "-1e30", "1.5", "2.000001", "1e400"])))
def test_a_grade_out_of_range_or_not_whole_is_a_located_error(tmp_path: Path, fmt: str, grade: str) -> None:
    with pytest.raises(DataError, match="is not an integer in range") as info:
        read_annotations(qrels_file(tmp_path, fmt, grade))
    assert info.value.line == (3 if fmt == "beir" else 2)  # BEIR has a header line
    assert str(MAX_GRADE) in str(info.value)


def test_a_huge_grade_never_becomes_a_negative_one(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="'1e30' is not an integer in range"):
        read_annotations(qrels_file(tmp_path, "trec", "1e30"))


@pytest.mark.parametrize("value", [-1, 2**60, 1.5, "7", True])
def test_span_offsets_out_of_range_or_of_the_wrong_type_are_located(tmp_path: Path, value) -> None:
    path = tmp_path / "spans.jsonl"
    path.write_text(
        '{"query_id": "q1", "document_id": "d1", "start": 0, "end": 5}\n'
        + json.dumps({"query_id": "q1", "document_id": "d1", "start": value, "end": 2**61}) + "\n"
    )  # fmt: skip
    with pytest.raises(DataError) as info:
        read_spans(path)
    assert info.value.line == 2


@pytest.mark.parametrize(
    ("hit", "field"),
    [
        ({"id": "d1", "rank": 10**30}, "rank"),
        ({"id": "d1", "chunk_index": -(10**20)}, "chunk_index"),
        ({"id": "d1", "metadata": {"start": "abc"}}, "metadata.start"),
        ({"id": "d1", "metadata": {"end": 1.5}}, "metadata.end"),
        ({"id": "d1", "metadata": {"start": 2**60}}, "metadata.start"),
    ],
)
def test_whole_number_hit_fields_out_of_range_are_located(tmp_path: Path, hit: dict, field: str) -> None:
    path = tmp_path / "run.jsonl"
    path.write_text(
        '{"query_id": "q0", "hits": [{"id": "a"}]}\n' + json.dumps({"query_id": "q1", "hits": [hit]}) + "\n"
    )
    with pytest.raises(DataError, match="not a whole number") as info:
        read_run(path)
    assert info.value.line == 2
    assert info.value.field == f"hits[0].{field}"


@pytest.mark.parametrize("value", ["1e30", "1.5", str(MAX_INDEX * 4)])
def test_whole_number_columns_of_tabular_runs_out_of_range_are_located(tmp_path: Path, value: str) -> None:
    path = tmp_path / "run.csv"
    path.write_text(f"query_id,id,rank,chunk_index\nq1,d1,1,0\nq1,d2,2,{value}\n")
    with pytest.raises(DataError, match="is not an integer") as info:
        read_run(path)
    assert info.value.line == 3


# ------------------------------------------------------------------------------------ extra query fields
JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**6), 10**6)
    | st.floats(allow_nan=False)
    | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=5,
)


@FIXTURE
@given(values=st.lists(JSON_VALUES, min_size=1, max_size=6))
def test_an_extra_query_field_of_any_types_reads_and_stores_in_parquet(tmp_path: Path, values: list) -> None:
    path = tmp_path / "queries.jsonl"
    path.write_text(
        "".join(json.dumps({"_id": f"q{i}", "text": "t", "group": v}) + "\n" for i, v in enumerate(values))
    )
    frame = read_queries(path)
    frame.to_parquet(tmp_path / "queries.parquet")  # what the MLflow logging does with it
    kinds = {type(v) for v in values if v is not None} - {int, float} | (
        {float} if any(type(v) in (int, float) for v in values) else set()
    )
    if len(kinds) > 1 or kinds & {list, dict}:
        assert all(isinstance(v, str) or pd.isna(v) for v in frame["group"])


def test_an_extra_field_that_is_an_int_here_and_a_list_there_becomes_text(tmp_path: Path) -> None:
    path = tmp_path / "queries.jsonl"
    path.write_text(
        '{"_id": "q1", "text": "a", "group": 1}\n{"_id": "q2", "text": "b", "group": ["x", 2]}\n'
        '{"_id": "q3", "text": "c", "group": "kw"}\n{"_id": "q4", "text": "d"}\n'
    )
    group = read_queries(path)["group"]
    assert group[:3].tolist() == ["1", '["x", 2]', "kw"]
    assert pd.isna(group[3])


def test_an_extra_field_named_like_our_columns_never_replaces_the_query_id(tmp_path: Path) -> None:
    path = tmp_path / "queries.jsonl"
    path.write_text('{"_id": "q1", "query_id": "other", "text": "a"}\n')
    assert read_queries(path)["query_id"].tolist() == ["q1"]


# --------------------------------------------------------------------------------------- deep JSON
def deep(depth: int) -> str:
    return "[" * depth + "]" * depth


@pytest.mark.parametrize("depth", [MAX_JSON_DEPTH + 1, 100_000])
@pytest.mark.parametrize(
    ("name", "read", "line"),
    [
        ("queries.jsonl", read_queries, '{"_id": "q2", "text": "t", "group": %s}'),
        ("corpus.jsonl", read_corpus, '{"_id": "d2", "text": "t", "extra": %s}'),
        ("run.jsonl", read_run, '{"query_id": "q2", "hits": [{"id": "a", "metadata": {"x": %s}}]}'),
        ("spans.jsonl", read_spans, '{"query_id": "q2", "document_id": "d", "start": 0, "end": 1, "x": %s}'),
        ("qrels.jsonl", read_annotations, '{"query_id": "q2", "relevant_ids": ["a"], "x": %s}'),
    ],
)
def test_json_nested_without_end_is_a_located_error(
    tmp_path: Path, depth: int, name: str, read, line: str
) -> None:
    first = {
        "queries.jsonl": '{"_id": "q1", "text": "t"}',
        "corpus.jsonl": '{"_id": "d1", "text": "t"}',
        "run.jsonl": '{"query_id": "q1", "hits": [{"id": "a"}]}',
        "spans.jsonl": '{"query_id": "q1", "document_id": "d", "start": 0, "end": 1}',
        "qrels.jsonl": '{"query_id": "q1", "relevant_ids": ["a"]}',
    }[name]
    path = tmp_path / name
    path.write_text(first + "\n" + line % deep(depth) + "\n")
    with pytest.raises(DataError, match="nested deeper than") as info:
        read(path)
    assert info.value.line == 2


# ------------------------------------------------------------------------------------------- named pipes
def through_a_pipe(tmp_path: Path, content: bytes, name: str, read):
    """``read`` the content through a named pipe (written once, by another thread), with a timeout."""
    fifo = tmp_path / name
    os.mkfifo(fifo)

    def write() -> None:
        with open(fifo, "wb") as handle:
            handle.write(content)

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    outcome: dict = {}

    def consume() -> None:
        try:
            outcome["value"] = read(fifo)
        except Exception as exc:  # noqa: BLE001 - handed to the test
            outcome["error"] = exc

    reader = threading.Thread(target=consume, daemon=True)
    reader.start()
    reader.join(timeout=30)
    if reader.is_alive():  # unblock the reader before failing, so the test run ends
        with open(fifo, "wb"):
            pass
        pytest.fail("reading a named pipe hung (the file was opened twice)")
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


RUN = pd.DataFrame(
    {"query_id": ["q1", "q1", "q2"], "rank": [1, 2, 1], "key": ["a", "b", "c"], "score": [3.0, 2.0, 1.0]}
)


@pytest.mark.parametrize("fmt", ["trec", "jsonl", "csv", "parquet"])
def test_a_run_from_a_named_pipe_is_read_once_with_format_auto(tmp_path: Path, fmt: str) -> None:
    regular = write_run(RUN.assign(id=RUN["key"]), tmp_path / f"run.{fmt}", fmt=fmt)
    expected = read_run(regular)
    # no suffix: auto must sniff the content, from the bytes it keeps
    got = through_a_pipe(tmp_path, regular.read_bytes(), "pipe", lambda p: read_run(p, "auto"))
    pd.testing.assert_frame_equal(got, expected)


def test_an_irregular_trec_run_from_a_pipe_takes_the_general_path_without_reopening(tmp_path: Path) -> None:
    content = b"q1 Q0 a 1 3 t\nq1\tQ0 b 2 2 t\nq2 Q0 c 1 1 t\n"
    got = through_a_pipe(tmp_path, content, "pipe", lambda p: read_run(p))
    assert got["key"].tolist() == ["a", "b", "c"]


def test_a_malformed_run_from_a_pipe_is_located_not_hung(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="expected 6 fields") as info:
        through_a_pipe(tmp_path, b"q1 Q0 a 1 3 t\nq1 Q0 b\n", "pipe", lambda p: read_run(p))
    assert info.value.line == 2
    assert info.value.file == str(tmp_path / "pipe")


@pytest.mark.parametrize(
    ("content", "read"),
    [
        (b"q1 0 a 1\nq2 0 b 2\n", read_annotations),
        (b"query-id\tcorpus-id\tscore\nq1\ta\t1\n", read_annotations),
        (b'{"query_id": "q1", "relevant_ids": ["a"]}\n', read_annotations),
        (b'{"_id": "q1", "text": "hello"}\n', read_queries),
        (b"q1\thello\n", read_queries),
        (b'{"_id": "d1", "text": "hello"}\n', read_corpus),
        (b'{"query_id": "q1", "document_id": "d1", "start": 0, "end": 3}\n', read_spans),
    ],
)
def test_every_reader_reads_a_named_pipe_once(tmp_path: Path, content: bytes, read) -> None:
    regular = tmp_path / "regular"
    regular.write_bytes(content)
    pd.testing.assert_frame_equal(through_a_pipe(tmp_path, content, "pipe", read), read(regular))


@pytest.mark.parametrize("fmt", ["trec", "beir", "jsonl"])
def test_grades_stop_exactly_at_the_documented_bounds(tmp_path: Path, fmt: str) -> None:
    for grade in (MIN_GRADE, MAX_GRADE):
        assert read_annotations(qrels_file(tmp_path, fmt, str(grade)))["grade"].tolist() == [1, grade]
    for grade in (MIN_GRADE - 1, MAX_GRADE + 1):
        with pytest.raises(DataError, match="is not an integer in range"):
            read_annotations(qrels_file(tmp_path, fmt, str(grade)))


def test_json_nesting_stops_exactly_at_64_levels(tmp_path: Path) -> None:
    path = tmp_path / "queries.jsonl"
    line = '{"_id": "q2", "text": "t", "group": %s}\n'  # the line's object is level 1
    path.write_text('{"_id": "q1", "text": "t"}\n' + line % deep(MAX_JSON_DEPTH - 1))
    assert read_queries(path)["query_id"].tolist() == ["q1", "q2"]
    path.write_text('{"_id": "q1", "text": "t"}\n' + line % deep(MAX_JSON_DEPTH))
    with pytest.raises(DataError, match="nested deeper than 64 levels") as info:
        read_queries(path)
    assert info.value.line == 2
