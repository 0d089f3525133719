"""The single-pass TREC qrels reader: a regular file gives the table the general (line-splitting) path
gives, anything irregular (comments, tabs, repeated or conflicting judgments, bad grades) falls back to that
path, and every problem is still reported at its line."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import abcompare.data.annotations as annotations
from abcompare.core.errors import DataError
from abcompare.data import read_annotations


def _write(tmp_path: Path, text: str | bytes, name: str = "qrels.txt") -> Path:
    path = tmp_path / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    return path


def _general(path: Path) -> pd.DataFrame:
    """The line-splitting path alone (what read_annotations did before the single pass)."""
    source = annotations.as_input(path, "annotation")
    hint = annotations._TREC_HINT
    frame = annotations._read_columns(source, fields=4, hint=hint, tab_only=False, header=False)
    return annotations._deduplicate(frame, source)


def _outcome(read, path: Path):
    try:
        frame = read(path)
    except DataError as err:
        return ("error", str(err), err.file, err.line)
    return ("table", frame.reset_index(drop=True))


def _assert_same(path: Path) -> None:
    fast, general = _outcome(lambda p: read_annotations(p, fmt="trec"), path), _outcome(_general, path)
    assert fast[0] == general[0], (fast, general)
    if fast[0] == "error":
        assert fast == general
    else:
        pd.testing.assert_frame_equal(fast[1], general[1])


@pytest.fixture
def general_path_forbidden(monkeypatch):
    """Make the general path fail loudly, to prove that a file was read by the single pass."""

    def refuse(*args, **kwargs):
        raise AssertionError("the general path was taken")

    monkeypatch.setattr(annotations, "_read_columns", refuse)


def test_regular_qrels_are_read_in_one_pass(tmp_path, general_path_forbidden):
    path = _write(tmp_path, "q2 0 d1 1\nq1 0 d10 2\nq1 Q0 d9 0\n\nq2 0 é -1\r\n")
    qrels = read_annotations(path)
    assert qrels.values.tolist() == [["q2", "d1", 1], ["q1", "d10", 2], ["q1", "d9", 0], ["q2", "é", -1]]
    assert list(qrels.columns) == ["query_id", "key", "grade"]
    assert [str(t) for t in qrels.dtypes] == ["str", "str", "int64"]


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("q1 0 d1 1\nq1 0 d2\n", 2, "expected 4 fields"),
        ("q1 0 d1 1\nq1 0 d2 x\n", 2, "grade"),
        ("q1 0 d1 1\nq1 0 d2 1.5\n", 2, "grade"),
        ("q1 0 d1 1\nq1 0 d2 1e30\n", 2, "grade"),
        ("q1 0 d1 1\nq1 0 d2 nan\n", 2, "grade"),
    ],
)
def test_problem_in_an_otherwise_regular_file_is_reported_at_its_line(tmp_path, text, line, message):
    path = _write(tmp_path, text)
    with pytest.raises(DataError, match=message) as err:
        read_annotations(path, fmt="trec")
    assert err.value.line == line
    assert err.value.file == str(path)


def test_conflicting_repeated_judgments_are_reported_with_their_lines(tmp_path):
    path = _write(tmp_path, "q1 0 d1 1\nq2 0 d1 0\nq1 0 d1 2\n")
    with pytest.raises(DataError, match="lines 1, 3"):
        read_annotations(path, fmt="trec")


def test_identical_repeated_judgments_are_kept_once(tmp_path):
    qrels = read_annotations(_write(tmp_path, "q1 0 d1 1\nq2 0 d1 0\nq1 0 d1 1\n"), fmt="trec")
    assert qrels.values.tolist() == [["q1", "d1", 1], ["q2", "d1", 0]]


@pytest.mark.parametrize(
    "text",
    [
        "# a comment\nq1 0 d1 1\n",
        "#q 0 d1 1\nq1 0 d1 1\n",
        "q1\t0\td1\t1\n",
        "  q1 0 d1 1\n",
        "q1 0 d1 1   \n",
        "\u00a0q1 0 d1 1\n",
        "q1 0 d1\u00a0 1\n",
        "q1 0 d1 1\rq1 0 d2 0\n",
        "q1 0 d1 1\n   \n\u3000\nq2 0 d1 1\n",
    ],
)
def test_irregular_file_reads_as_the_general_path_reads_it(tmp_path, text):
    _assert_same(_write(tmp_path, text))


_QUERIES = st.sampled_from(["q1", "q2", "10", "#q", "q\u00a0", "é"])
_DOCS = st.sampled_from(["d1", "d2", "d10", "D1", "é", "d\u00a0"])
_GRADES = st.sampled_from(["0", "1", "2", "-1", "3", "1.0", "1.5", "1e30", "2147483648", "nan", "x", "+1"])
_GAPS = st.sampled_from([" ", " ", " ", "  ", "\t"])
_ENDS = st.sampled_from(["\n", "\n", "\n", "\r\n", "  \n", " junk\n", "\n\n", "\n# c\n", "\r"])


@st.composite
def _qrels_text(draw) -> str:
    lines = []
    for _ in range(draw(st.integers(1, 12))):
        fields = [draw(_QUERIES), draw(st.sampled_from(["0", "Q0"])), draw(_DOCS), draw(_GRADES)]
        if draw(st.integers(0, 9)) == 0:
            fields.pop(draw(st.integers(0, 3)))
        text = fields[0]
        for field in fields[1:]:
            text += draw(_GAPS) + field
        lines.append(text + draw(_ENDS))
    return "".join(lines)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=_qrels_text())
def test_any_file_reads_as_the_general_path_reads_it(tmp_path, text):
    _assert_same(_write(tmp_path, text))
