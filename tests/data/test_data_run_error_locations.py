"""Every problem in a run names where the user wrote it: ``<run file>:<line>: <key>: ...`` for TREC, CSV
and JSONL runs (``row N: <key>`` for Parquet, which has no lines), and the retriever's query and hit for
a Python retriever. Expected lines and keys are read off the files written here, by hand."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest

from abcompare.core.errors import DataError
from abcompare.data.runs import check_scored_in_full, read_run, returned_run

GOOD_TREC = ["q1 Q0 d1 1 3.0 t", "q1 Q0 d2 2 2.0 t", "q2 Q0 d1 1 3.0 t", "q2 Q0 d3 2 2.0 t"]


def located(path: Path, **read) -> tuple[str | None, int | None, str | None]:
    with pytest.raises(DataError) as info:
        read_run(path, **read)
    return info.value.file, info.value.line, info.value.field


@pytest.mark.parametrize(
    "bad, field",
    [
        ("q2 Q0 d9 3 nan t", "score"),
        ("q2 Q0 d9 3 -inf t", "score"),
        ("q2 Q0 d9 3 high t", "score"),
        ("q2 Q0 d9 3", "score"),  # four fields: the score is the first one missing
        ("q2 Q0 d9", "rank"),
        ("q2 Q0 d3 3 1.0 t", "docno"),  # d3 is listed for q2 on line 5 already
    ],
)
def test_a_trec_run_names_the_line_and_field(tmp_path: Path, bad: str, field: str) -> None:
    path = tmp_path / "run.trec"
    path.write_text("# a comment\n" + "\n".join(GOOD_TREC) + "\n" + bad + "\n")  # the bad line is line 6
    assert located(path) == (str(path), 6, field)
    assert str(path) + f":6: {field}: " in str(pytest.raises(DataError, read_run, path).value)


@pytest.mark.parametrize(
    "cell, column, field",
    [
        ("", "query_id", "query_id"),
        ("", "key", "key"),  # a blank key and no hit field to compute one from
        ("x", "rank", "rank"),
        ("3", "rank", "rank"),  # a rank gap: 1, 3
        ("high", "score", "score"),
        ("inf", "score", "score"),
    ],
)
def test_a_csv_run_names_the_line_and_column(tmp_path: Path, cell: str, column: str, field: str) -> None:
    rows = [["q1", "d1", "1", "3.0"], ["q1", "d2", "2", "2.0"], ["q2", "d1", "1", "3.0"]]
    rows[2][["query_id", "key", "rank", "score"].index(column)] = cell
    path = tmp_path / "run.csv"
    path.write_text("query_id,key,rank,score\n" + "".join(",".join(r) + "\n" for r in rows))
    assert located(path) == (str(path), 4, field)  # the header is line 1: the third row is line 4


def test_a_blank_key_with_a_document_id_is_keyed_by_the_document_not_refused(tmp_path: Path) -> None:
    path = tmp_path / "run.csv"
    path.write_text("query_id,key,document_id,rank\nq,,d,1\n")
    assert read_run(path)["key"].tolist() == ["d#-"]


def test_a_jsonl_hit_with_a_blank_id_is_refused_at_its_line_and_hit(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    lines = [
        {"query_id": "q1", "hits": [{"id": "d1"}]},
        {"query_id": "q2", "hits": [{"id": "d1"}, {"id": " "}]},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert located(path) == (str(path), 2, "hits[1].id")


@pytest.mark.parametrize(
    "hits, field",
    [
        ([{"id": "a", "score": 1.0}, {"id": "", "score": 0.5}], "query 'q': hits[1].id"),
        ([{"id": "a", "score": 1.0}, {"id": "b", "score": math.nan}], "query 'q': hits[1].score"),
        ([{"id": "a", "rank": 1}, {"id": "b", "rank": 3}], "query 'q': rank"),
    ],
)
def test_a_python_retriever_s_hits_name_the_query_and_hit(hits: list, field: str) -> None:
    with pytest.raises(DataError) as info:
        returned_run({"q": hits})
    assert (info.value.file, info.value.field) == (None, field)


def test_a_python_retriever_s_frame_names_its_row() -> None:
    frame = pd.DataFrame({"query_id": ["q", "q"], "key": ["a", " "], "rank": [1, 2]})
    with pytest.raises(DataError) as info:
        returned_run(frame)
    assert (info.value.file, info.value.field) == (None, "row 2: key")


# ------------------------------------------------------------------ a query scored in part (trec convention)
def partial_files(folder: Path) -> dict[str, tuple[Path, int | None, str]]:
    """The same run, whose query q2 has one unscored hit (its 2nd), in each format: the file, the line
    the hit is on and the key naming the score."""
    csv = folder / "run.csv"
    csv.write_text("query_id,key,rank,score\nq1,d1,1,3.0\nq2,d1,1,3.0\nq2,d3,2,\nq2,d4,3,1.0\n")
    parquet = folder / "run.parquet"
    pd.read_csv(csv).to_parquet(parquet)
    jsonl = folder / "run.jsonl"
    hits = [{"id": "d1", "score": 3.0}, {"id": "d3"}, {"id": "d4", "score": 1.0}]
    jsonl.write_text(
        json.dumps({"query_id": "q1", "hits": [{"id": "d1", "score": 3.0}]}) + "\n\n"
        + json.dumps({"query_id": "q2", "hits": hits}) + "\n"
    )  # fmt: skip
    return {
        "csv": (csv, 4, "score"),
        "parquet": (parquet, None, "row 3: score"),
        "jsonl": (jsonl, 3, "hits[1].score"),
    }


@pytest.mark.parametrize("fmt", ["csv", "parquet", "jsonl"])
def test_a_hit_without_a_score_among_scored_ones_is_located_in_its_file(tmp_path: Path, fmt: str) -> None:
    path, line, field = partial_files(tmp_path)[fmt]
    run = read_run(path)  # ranks (or list order) order the hits: reading is fine
    check_scored_in_full(run, "ai4j", path=path)  # the ai4j convention orders by rank: nothing to refuse
    with pytest.raises(DataError, match=r"query 'q2': the hit at rank 2 \('d3'\) has no score") as info:
        check_scored_in_full(run, "trec", path=path)
    assert (info.value.file, info.value.line, info.value.field) == (str(path), line, field)
    with pytest.raises(DataError) as unlocated:  # a run handed over in Python: the query and hit only
        check_scored_in_full(run, "trec")
    assert (unlocated.value.file, unlocated.value.line, unlocated.value.field) == (None, None, "score")


def test_an_unknown_run_format_is_refused_at_its_config_key(tmp_path: Path) -> None:
    """Before: accepted by the config, then refused naming the run file, as if the file were wrong."""
    from abcompare.config import load_config
    from abcompare.core.errors import ConfigError

    run = tmp_path / "run.trec"
    run.write_text("\n".join(GOOD_TREC) + "\n")
    path = tmp_path / "c.yaml"
    path.write_text(
        "name: c\ndataset: {name: hr-docs, level: document}\n"
        f"control:\n  run: {{path: {run}, format: xml}}\ntreatments:\n  t:\n    run: {{path: {run}}}\n"
    )
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert (info.value.file, info.value.line, info.value.field) == (str(path), 4, "control.run.format")
