"""The single-pass TREC reader: a regular file gives the table the general (line-splitting) path gives,
anything irregular falls back to that path, and every problem is still reported at its line."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import abcompare.data.run_trec as run_trec
from abcompare.core.errors import DataError
from abcompare.data import read_run


def _write(tmp_path: Path, text: str | bytes, name: str = "run.trec") -> Path:
    path = tmp_path / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    return path


def _outcome(read, path: Path):
    """The run table (with its attrs) or the DataError's message, file and line."""
    try:
        frame = read(path)
    except DataError as err:
        return ("error", str(err), err.file, err.line)
    return ("table", frame, dict(frame.attrs))


def _assert_same(path: Path) -> None:
    fast, general = _outcome(read_run, path), _outcome(run_trec._read_trec_lines, path)
    assert fast[0] == general[0], (fast, general)
    if fast[0] == "error":
        assert fast == general
    else:
        pd.testing.assert_frame_equal(fast[1], general[1])
        assert fast[2] == general[2]


@pytest.fixture
def general_path_forbidden(monkeypatch):
    """Make the general path fail loudly, to prove that a file was read by the single pass."""

    def refuse(path):
        raise AssertionError("the general path was taken")

    monkeypatch.setattr(run_trec, "_read_trec_lines", refuse)


# --------------------------------------------------------------------------------------- regular files
def test_regular_file_is_read_in_one_pass_in_trec_eval_order(tmp_path, general_path_forbidden):
    # q2 comes first in the file, so it is the first query; within a query trec_eval orders by score
    # descending, ties by docno descending (byte order: "d10" < "d9"); the rank column is ignored.
    path = _write(
        tmp_path,
        "q2 Q0 d1 1 0.5 tagA\n"
        "q2 Q0 d2 2 0.75 tagA\n"
        "q1 Q0 d10 1 3 tagA\n"
        "q1 Q0 d9 7 3 tagA\n"
        "q1 Q0 d5 2 4e0 tagB\n",
    )
    run = read_run(path)
    assert run[["query_id", "rank", "key", "score"]].values.tolist() == [
        ["q2", 1, "d2", 0.75],
        ["q2", 2, "d1", 0.5],
        ["q1", 1, "d5", 4.0],
        ["q1", 2, "d9", 3.0],
        ["q1", 3, "d10", 3.0],
    ]
    assert run["id"].tolist() == run["key"].tolist()
    assert run.attrs["run_tag"] == "tagB"  # the last line's tag
    assert list(run.columns) == ["query_id", "rank", "key", "score", "id"]
    assert [str(t) for t in run.dtypes] == ["str", "int64", "str", "float64", "str"]


def test_file_already_in_trec_order_with_crlf_and_blank_lines_takes_the_single_pass(
    tmp_path, general_path_forbidden
):
    path = _write(tmp_path, "\r\nq1 Q0 b 1 2 t\r\n\r\nq1 Q0 a 2 2 t\r\nq3 Q0 a 1 -1.5 t\r\n")
    run = read_run(path)
    expected = [["q1", 1, "b"], ["q1", 2, "a"], ["q3", 1, "a"]]
    assert run[["query_id", "rank", "key"]].values.tolist() == expected
    assert run.attrs["run_tag"] == "t"


def test_scattered_query_lines_are_grouped_by_first_appearance(tmp_path, general_path_forbidden):
    path = _write(tmp_path, "qb Q0 x 1 1 t\nqa Q0 y 1 5 t\nqb Q0 z 2 9 t\n")
    run = read_run(path)
    expected = [["qb", 1, "z"], ["qb", 2, "x"], ["qa", 1, "y"]]
    assert run[["query_id", "rank", "key"]].values.tolist() == expected


# ------------------------------------------------------------------------- irregular files still located
@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("q1 Q0 d1 1 1 t\nq1 Q0 d2 2 t\n", 2, "expected 6 fields, found 5"),
        ("q1 Q0 d1 1 1 t\nq1 Q0 d2  2 t\n", 2, "expected 6 fields, found 5"),  # empty field
        ("q1 Q0 d1 1 1 t\nq1 Q0 d2 2 abc t\n", 2, "non-numeric score 'abc'"),
        ("q1 Q0 d1 1 1 t\nq1 Q0 d2 2 nan t\n", 2, "score is nan"),
        ("q1 Q0 d1 1 1 t\nq1 Q0 d2 2 inf t\n", 2, "score is inf"),
        ("q1 Q0 d1 1 1 t\nq2 Q0 d1 1 1 t\nq1 Q0 d1 3 0 t\n", 3, "duplicate document 'd1' for query 'q1'"),
    ],
)
def test_problem_in_an_otherwise_regular_file_is_reported_at_its_line(tmp_path, text, line, message):
    path = _write(tmp_path, text)
    with pytest.raises(DataError, match=message) as err:
        read_run(path)
    assert err.value.line == line
    assert err.value.file == str(path)
    if "duplicate" in message:
        assert "(first at line 1)" in str(err.value)


@pytest.mark.parametrize(
    "text",
    [
        "# a comment line\nq1 Q0 d1 1 1 t\n",
        "# a comment with six fields\nq1 Q0 d1 1 1 t\n",
        "#q0 Q0 d9 1 1 t\nq1 Q0 d1 1 1 t\n",  # a query id starting with '#' is a comment
        "q1\tQ0\td1\t1\t1\tt\n",
        "  q1 Q0 d1 1 1 t\n",
        "q1 Q0 d1 1 1 t   \n",
        "q1 Q0 d1 1 1 t extra junk\nq1 Q0 d2 2 0 t\n",
        "\u00a0q1 Q0 d1 1 1 t\n",
        "q1 Q0 d1 1 1 t\u00a0\n",
        "q1 Q0 d1 1 1 \u00a0\n",
        "q1 Q0 d1 1 1 t\rq1 Q0 d2 2 0 t\n",  # a bare carriage return is not a line break here
        "q1 Q0 d1 1 1 t\n   \n\u3000\nq2 Q0 d1 1 1 t\n",
    ],
)
def test_irregular_file_reads_as_the_general_path_reads_it(tmp_path, text):
    _assert_same(_write(tmp_path, text))


def test_invalid_utf8_is_located_as_before(tmp_path):
    path = _write(tmp_path, b"q1 Q0 d1 1 1 t\nq1 Q0 d\xff 2 0 t\n")
    with pytest.raises(DataError, match="invalid UTF-8") as err:
        read_run(path)
    assert err.value.line == 2


# ----------------------------------------------------------------------------------------------- property
_QUERIES = st.sampled_from(["q1", "q2", "10", "#q", "q\u00a0", "\u00a0q", "é"])
_DOCS = st.sampled_from(["d1", "d2", "d10", "D1", "a", "z", "é", "d\u00a0"])
_SCORES = st.sampled_from(
    ["1", "2", "0.5", "-0", "0", "1e1", "10", "+3", ".5", "2.", "nan", "inf", "-inf", "x", "1_0", "0x1"]
)
_GAPS = st.sampled_from([" ", " ", " ", " ", "  ", "\t", " \t "])
_ENDS = st.sampled_from(["\n", "\n", "\n", "\r\n", "  \n", " junk\n", "\n\n", "\n# c\n", "\u00a0\n", "\r"])


@st.composite
def _trec_text(draw) -> str:
    lines = []
    for _ in range(draw(st.integers(1, 12))):
        fields = [draw(_QUERIES), "Q0", draw(_DOCS), str(draw(st.integers(0, 3))), draw(_SCORES), "run"]
        if draw(st.integers(0, 9)) == 0:
            fields.pop(draw(st.integers(0, 5)))
        text = fields[0]
        for field in fields[1:]:
            text += draw(_GAPS) + field
        lines.append(text + draw(_ENDS))
    return "".join(lines)


@st.composite
def _regular_text(draw) -> str:
    """Single spaces, six fields a line, distinct docnos per query, finite scores (ties included)."""
    lines = []
    for query in draw(st.lists(st.sampled_from(["q1", "q2", "q3", "7"]), min_size=1, max_size=5)):
        docs = draw(st.lists(st.sampled_from(["d1", "d2", "d10", "a", "Z", "é"]), min_size=1, unique=True))
        for doc in docs:
            score = draw(st.sampled_from(["1", "2", "2.0", "-0", "0", "0.25", "1e3"]))
            lines.append(f"{query} Q0 {doc} 0 {score} r{draw(st.integers(0, 2))}\n")
    return "".join(lines)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=_trec_text())
def test_any_file_reads_as_the_general_path_reads_it(tmp_path, text):
    _assert_same(_write(tmp_path, text))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=_regular_text())
def test_regular_files_match_the_general_path(tmp_path, text):
    # repeated (query, doc) pairs across blocks make a located duplicate error: compare either way
    _assert_same(_write(tmp_path, text))


def test_run_table_from_the_single_pass_can_be_edited(tmp_path, general_path_forbidden):
    run = read_run(_write(tmp_path, "q1 Q0 d1 1 2 t\nq1 Q0 d2 2 1 t\n"))
    run.loc[0, "score"] = 5.0
    run.loc[1, "key"] = "other"
    assert run["score"].tolist() == [5.0, 1.0]
    assert run["id"].tolist() == ["d1", "d2"]  # key and id are separate columns


@pytest.mark.parametrize("name", ["run.trec", "run.trec.gz"])
def test_byte_order_mark_and_gzip_read_as_the_general_path(tmp_path, name):
    import gzip

    text = b"\xef\xbb\xbfq1 Q0 d1 1 2 t\nq1 Q0 d2 2 1 t\n"
    path = _write(tmp_path, gzip.compress(text) if name.endswith(".gz") else text, name)
    _assert_same(path)
    assert read_run(path)["query_id"].tolist() == ["q1", "q1"]  # the mark is not part of the id


def test_empty_run_file_is_reported_as_before(tmp_path):
    path = _write(tmp_path, "")
    with pytest.raises(DataError, match="run file has no hits"):
        read_run(path)
