"""Run files: TREC quirks as trec_eval reads them, every bad input located, round trips for every format."""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from abcompare.core.errors import AbcompareWarning, DataError
from abcompare.core.hits import RagHit, stable_key
from abcompare.data import hits_from_run_frame, read_run, run_frame_from_hits, stable_keys, write_run

FIXTURES = Path(__file__).parent / "fixtures"


def _write(tmp_path: Path, text: str | bytes, name: str = "run.trec") -> Path:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


# ------------------------------------------------------------------------------------------- TREC read
def test_trec_run_orders_by_score_then_docno_descending_ignoring_rank_column_and_junk():
    run = read_run(FIXTURES / "run_quirks.trec")
    # q1: d3 (2.5) first; d1 and d2 tie at 1.25 and trec_eval breaks ties by docno descending -> d2, d1
    assert run[["query_id", "rank", "key"]].values.tolist() == [
        ["q1", 1, "d3"],
        ["q1", 2, "d2"],
        ["q1", 3, "d1"],
        ["q2", 1, "d1"],
    ]
    assert run["score"].tolist() == [2.5, 1.25, 1.25, -0.5]
    assert (run["id"] == run["key"]).all()
    assert run.attrs["run_tag"] == "tiny"


def test_trec_conformance_run_loads_all_hits(trec_conformance_dir):
    run = read_run(trec_conformance_dir / "results.test")
    assert len(run) == 1500
    assert run.groupby("query_id").size().to_dict() == {"301": 500, "302": 500, "303": 500}
    assert run.groupby("query_id")["rank"].agg(["min", "max"]).values.tolist() == [[1, 500]] * 3
    # the file's own rank column agrees with score order here, so rank 1 is the line with rank 1
    first = [line.split() for line in (trec_conformance_dir / "results.test").read_text().splitlines()]
    rank_one = {f[0]: f[2] for f in first if f[3] == "1"}
    assert run[run["rank"] == 1].set_index("query_id")["key"].to_dict() == rank_one


def test_missing_run_file_is_a_data_error(tmp_path):
    with pytest.raises(DataError, match="run file not found") as err:
        read_run(tmp_path / "nope.trec")
    assert err.value.file == str(tmp_path / "nope.trec")


def test_invalid_utf8_names_its_line(tmp_path):
    path = _write(tmp_path, b"q1 Q0 d1 1 1.0 t\nq1 Q0 d2 2 0.5 t\nq1 Q0 d\xe93 3 0.2 t\n")
    with pytest.raises(DataError, match="invalid UTF-8") as err:
        read_run(path, fmt="trec")
    assert err.value.line == 3
    assert f"{path}:3" in str(err.value)


def test_trec_line_with_five_fields_is_malformed_at_its_editor_line(tmp_path):
    path = _write(tmp_path, "# header comment\nq1 Q0 d1 1 1.0 t\n\nq1 Q0 d2 2 0.5\n")
    with pytest.raises(DataError, match="malformed line: expected 6 fields, found 5") as err:
        read_run(path)
    assert err.value.line == 4


@pytest.mark.parametrize("score", ["high", "1.0.0", "0x"])
def test_trec_non_numeric_score_names_value_and_line(tmp_path, score):
    path = _write(tmp_path, f"q1 Q0 d1 1 1.0 t\nq1 Q0 d2 2 {score} t\n")
    with pytest.raises(DataError, match=f"non-numeric score '{score}'") as err:
        read_run(path)
    assert err.value.line == 2


@pytest.mark.parametrize("score", ["nan", "inf", "-Infinity"])
def test_trec_nan_or_inf_score_is_rejected(tmp_path, score):
    path = _write(tmp_path, f"q1 Q0 d1 1 {score} t\n")
    with pytest.raises(DataError, match=r"NaN/inf") as err:
        read_run(path)
    assert err.value.line == 1


def test_trec_duplicate_document_for_a_query_names_both_lines(tmp_path):
    path = _write(tmp_path, "q1 Q0 d1 1 1.0 t\nq2 Q0 d1 1 1.0 t\nq1 Q0 d1 2 0.5 t\n")
    with pytest.raises(DataError, match=r"duplicate document 'd1' for query 'q1' \(first at line 1\)") as err:
        read_run(path)
    assert err.value.line == 3


def test_empty_trec_run_is_an_error(tmp_path):
    with pytest.raises(DataError, match="no hits"):
        read_run(_write(tmp_path, "\n# nothing\n"), fmt="trec")


def test_unknown_format_is_an_error(tmp_path):
    with pytest.raises(DataError, match="unknown run format 'xml'"):
        read_run(_write(tmp_path, "x"), fmt="xml")


# --------------------------------------------------------------------------------------- CSV / Parquet
def test_csv_run_with_rank_and_hit_fields_computes_stable_keys(tmp_path):
    path = _write(
        tmp_path,
        "query_id,rank,score,document_id,chunk_index,id\n"
        "7,2,0.5,doc-b,3,\n"
        "7,1,0.9,doc-a,0,\n"
        "8,1,,doc-c,,custom\n",
        "run.csv",
    )
    run = read_run(path)
    assert run[["query_id", "rank", "key"]].values.tolist() == [
        ["7", 1, "doc-a#0"],
        ["7", 2, "doc-b#3"],
        ["8", 1, "custom"],
    ]
    assert math.isnan(run["score"].iloc[2])


def test_csv_with_only_scores_is_ordered_like_trec(tmp_path):
    path = _write(tmp_path, "query_id,key,score\nq,a,1\nq,b,3\nq,c,1\n", "run.csv")
    assert read_run(path)["key"].tolist() == ["b", "c", "a"]


@pytest.mark.parametrize(
    ("ranks", "message", "line"),
    [
        ([1, 3], "rank gap: expected rank 2, found 3 for query 'q'", 3),
        ([1, 1], "duplicate rank 1 for query 'q'", 3),
        ([2, 3], "rank gap: expected rank 1, found 2 for query 'q'", 2),
    ],
)
def test_csv_rank_gaps_and_duplicates_are_located(tmp_path, ranks, message, line):
    body = "".join(f"q,d{i},{r}\n" for i, r in enumerate(ranks))
    path = _write(tmp_path, "query_id,key,rank\n" + body, "run.csv")
    with pytest.raises(DataError, match=message) as err:
        read_run(path)
    assert err.value.line == line


def test_csv_non_numeric_score_is_located(tmp_path):
    path = _write(tmp_path, "query_id,key,score\nq,a,1\nq,b,high\n", "run.csv")
    with pytest.raises(DataError, match="non-numeric score 'high'") as err:
        read_run(path)
    assert err.value.line == 3


def test_csv_inf_score_is_rejected(tmp_path):
    path = _write(tmp_path, "query_id,key,rank,score\nq,a,1,inf\n", "run.csv")
    with pytest.raises(DataError, match="NaN/inf"):
        read_run(path)


def test_csv_without_rank_or_score_is_an_error(tmp_path):
    with pytest.raises(DataError, match="needs a 'rank' or a 'score' column"):
        read_run(_write(tmp_path, "query_id,key\nq,a\n", "run.csv"))


def test_parquet_rank_gap_is_located_by_row(tmp_path):
    path = tmp_path / "run.parquet"
    pd.DataFrame({"query_id": ["q", "q"], "key": ["a", "b"], "rank": [1, 5]}).to_parquet(path)
    with pytest.raises(DataError, match="rank gap: expected rank 2, found 5") as err:
        read_run(path)
    assert err.value.field == "row 2: rank"


def test_corrupt_parquet_is_a_data_error(tmp_path):
    with pytest.raises(DataError, match="cannot read Parquet run"):
        read_run(_write(tmp_path, b"PAR1 not really", "run.parquet"))


# ----------------------------------------------------------------------------------------------- JSONL
def test_jsonl_hits_become_run_rows_with_seed_keys_and_score_fallbacks():
    run = read_run(FIXTURES / "hits.jsonl")
    assert run[["query_id", "rank", "key"]].values.tolist() == [
        ["q1", 1, "d1#0"],
        ["q1", 2, "custom-7"],
        ["q2", 1, "docs/expenses.md#-"],
        ["q2", 2, "Submit receipts"],
    ]
    assert run["score"].tolist()[:3] == [0.9, 0.4, 3.5]
    assert math.isnan(run["score"].iloc[3])
    assert run.loc[0, ["start", "end", "title"]].tolist() == [0, 24, "Leave"]


def test_jsonl_duplicate_query_is_located(tmp_path):
    line = '{"query_id": "q1", "hits": [{"id": "a"}]}\n'
    with pytest.raises(DataError, match=r"duplicate query id 'q1' \(first at line 1\)") as err:
        read_run(_write(tmp_path, line + "\n" + line, "run.jsonl"))
    assert err.value.line == 3


def test_jsonl_malformed_line_and_bad_hit_are_located(tmp_path):
    with pytest.raises(DataError, match="malformed line: not JSON") as err:
        read_run(_write(tmp_path, '{"query_id": "q1", "hits": []}\n{"query_id": \n', "a.jsonl"))
    assert err.value.line == 2
    with pytest.raises(DataError, match="invalid hit") as err:
        read_run(_write(tmp_path, '{"query_id": "q1", "hits": [{"id": "a", "score": "high"}]}\n', "b.jsonl"))
    assert err.value.line == 1
    assert err.value.field == "hits[0].score"


def test_jsonl_hit_ranks_with_a_gap_are_rejected(tmp_path):
    path = _write(
        tmp_path, '{"query_id": "q", "hits": [{"id": "a", "rank": 1}, {"id": "b", "rank": 3}]}\n', "r.jsonl"
    )
    with pytest.raises(DataError, match="rank gap: expected rank 2, found 3 for query 'q'"):
        read_run(path)


# ------------------------------------------------------------------------------------- hits <-> frames
def test_run_frame_from_hits_prefers_score_then_most_specific_component():
    hits = {
        "q": [
            RagHit(id="a", score=1.0, rerank_score=9.0),
            RagHit(id="b", retrieval_score=2.0, fusion_score=3.0),
            RagHit(id="c", retrieval_score=2.0, fusion_score=3.0, rerank_score=4.0),
            RagHit(id="d", retrieval_score=5.0),
            RagHit(id="e", score=0.0, rerank_score=7.0),
        ]
    }
    frame = run_frame_from_hits(hits)
    assert frame["score"].tolist() == [1.0, 3.0, 4.0, 5.0, 0.0]
    assert frame["rank"].tolist() == [1, 2, 3, 4, 5]


def test_positional_key_uses_the_zero_based_list_position():
    frame = run_frame_from_hits({"q": [RagHit(id="x"), RagHit(), RagHit(score=1)]})
    assert frame["key"].tolist() == ["x", "1", "2"]


def test_hits_from_run_frame_inverts_run_frame_from_hits():
    hits = {
        "q1": [
            RagHit(
                document_id="d1", chunk_index=0, score=0.5, metadata={"start": 0, "end": 10, "title": "T"}
            ),
            RagHit(source_name="wiki", section_title="Intro", content="text", retrieval_score=0.2),
        ],
        "q2": [RagHit(id="z", page_number=3, retriever_source="bm25")],
    }
    back = hits_from_run_frame(run_frame_from_hits(hits))
    assert list(back) == ["q1", "q2"]
    assert back["q1"][0].metadata == {"start": 0, "end": 10, "title": "T"}
    assert back["q1"][1].source_name == "wiki"
    assert back["q2"][0].page_number == 3
    assert [stable_key(h, i) for i, h in enumerate(back["q1"])] == ["d1#0", "wiki#Intro#-"]


def test_hits_from_run_frame_keeps_a_key_the_fields_do_not_compute():
    frame = pd.DataFrame(
        {"query_id": ["q"], "rank": [1], "key": ["k-1"], "score": [1.0], "document_id": ["d"]}
    )
    (hit,) = hits_from_run_frame(frame)["q"]
    assert hit.id == "k-1"
    assert stable_key(hit, 0) == "k-1"


_text = st.one_of(
    st.none(),
    st.sampled_from(["", " ", "a", " b ", "doc 1", "x#y"]),
    st.sampled_from([float("nan"), 7.0, 1.5, 3]),  # NaN is missing, an integral float its integer
)


@given(
    st.lists(
        st.fixed_dictionaries(
            {
                "id": _text,
                "document_id": _text,
                "source_path": _text,
                "source_uri": _text,
                "source_name": _text,
                "section_title": _text,
                "content": _text,
                "chunk_index": st.one_of(st.none(), st.integers(0, 12), st.sampled_from([2.0, float("nan")])),
            }
        ),
        min_size=1,
        max_size=8,
    )
)
@settings(max_examples=150, deadline=None)
def test_vectorised_stable_keys_equal_stable_key(rows):
    frame = pd.DataFrame(rows)
    frame["rank"] = np.arange(1, len(rows) + 1)
    expected = [stable_key(row, i) for i, row in enumerate(rows)]  # hit mappings: any value type
    assert stable_keys(frame).tolist() == expected
    typed = [
        row
        for row in rows
        if all(v is None or isinstance(v, str) for k, v in row.items() if k != "chunk_index")
    ]
    typed = [row for row in typed if not isinstance(row["chunk_index"], float)]
    assert [stable_key(RagHit(**row), i) for i, row in enumerate(typed)] == [
        stable_key(row, i) for i, row in enumerate(typed)
    ]


# ------------------------------------------------------------------------------------------ round trips
_ids = st.text(alphabet="abcdefXYZ0123456789-_#.:/", min_size=1, max_size=8)
_query_ids = st.from_regex(r"[a-fXYZ0-9][a-fXYZ0-9#._:/-]{0,7}", fullmatch=True)  # '#' first = comment


@st.composite
def run_frames(draw):
    queries = draw(st.lists(_query_ids, min_size=1, max_size=4, unique=True))
    rows = []
    for q in queries:
        keys = draw(st.lists(_ids, min_size=1, max_size=6, unique=True))
        scores = draw(
            st.lists(
                st.floats(-1e6, 1e6, allow_nan=False), min_size=len(keys), max_size=len(keys), unique=True
            )
        )
        scores = sorted(scores, reverse=True)
        rows += [(q, r + 1, k, s) for r, (k, s) in enumerate(zip(keys, scores, strict=True))]
    return pd.DataFrame(rows, columns=["query_id", "rank", "key", "score"])


@pytest.mark.parametrize("fmt", ["trec", "jsonl", "parquet", "csv"])
@given(frame=run_frames())
@settings(max_examples=40, deadline=None)
def test_every_writable_format_round_trips(tmp_path_factory, fmt, frame):
    path = tmp_path_factory.mktemp("rt") / f"run.{fmt}"
    write_run(frame, path, fmt=fmt)
    back = read_run(path, fmt=fmt)
    pd.testing.assert_frame_equal(
        back[["query_id", "rank", "key", "score"]].astype({"query_id": object, "key": object}),
        frame.astype({"query_id": object, "key": object}),
        check_dtype=False,
    )


def test_trec_write_of_tied_scores_keeps_the_ranking_and_warns(tmp_path):
    frame = pd.DataFrame(
        {
            "query_id": ["q"] * 3 + ["r"] * 2,
            "rank": [1, 2, 3, 1, 2],
            "key": ["a", "b", "c", "x", "y"],
            "score": [1.0, 1.0, 0.5, 2.0, 1.0],
        }
    )
    with pytest.warns(AbcompareWarning, match="1 queries have tied, missing or out-of-order scores"):
        write_run(frame, tmp_path / "run.trec")
    back = read_run(tmp_path / "run.trec")
    assert back["key"].tolist() == ["a", "b", "c", "x", "y"]
    assert back["score"].tolist() == [3.0, 2.0, 1.0, 2.0, 1.0]  # q rewritten n - rank + 1; r untouched


def test_trec_write_rejects_keys_with_whitespace(tmp_path):
    frame = pd.DataFrame({"query_id": ["q"], "rank": [1], "key": ["doc 1"], "score": [1.0]})
    with pytest.raises(DataError, match="contains whitespace"):
        write_run(frame, tmp_path / "run.trec")


def test_trec_write_rejects_query_ids_that_trec_eval_reads_as_comments(tmp_path):
    frame = pd.DataFrame({"query_id": ["#1"], "rank": [1], "key": ["d"], "score": [1.0]})
    with pytest.raises(DataError, match="starts with '#'"):
        write_run(frame, tmp_path / "run.trec")


def test_trec_write_uses_run_name_as_one_word_tag(tmp_path):
    frame = pd.DataFrame({"query_id": ["q"], "rank": [1], "key": ["d"], "score": [0.25]})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        write_run(frame, tmp_path / "run.trec", run_name="my variant")
    assert (tmp_path / "run.trec").read_text() == "q Q0 d 1 0.25 my_variant\n"


def test_jsonl_round_trip_keeps_hit_fields(tmp_path):
    run = read_run(FIXTURES / "hits.jsonl")
    write_run(run, tmp_path / "run.jsonl", fmt="jsonl")
    back = read_run(tmp_path / "run.jsonl")
    pd.testing.assert_frame_equal(back, run)


def test_gzipped_trec_run_reads_like_the_plain_file(tmp_path):
    import gzip

    plain = (FIXTURES / "run_quirks.trec").read_bytes()
    (tmp_path / "run.trec.gz").write_bytes(gzip.compress(plain))
    pd.testing.assert_frame_equal(read_run(tmp_path / "run.trec.gz"), read_run(FIXTURES / "run_quirks.trec"))


def test_windows_line_endings_and_a_missing_final_newline_are_fine(tmp_path):
    path = _write(tmp_path, b"q1 Q0 d1 1 2.0 t\r\nq1 Q0 d2 2 1.0 t")
    assert read_run(path)["key"].tolist() == ["d1", "d2"]


def test_csv_blank_keys_fall_back_to_the_hit_fields(tmp_path):
    path = _write(tmp_path, "query_id,rank,key,document_id,chunk_index\nq,1,given,d,0\nq,2,,d,1\n", "run.csv")
    assert read_run(path)["key"].tolist() == ["given", "d#1"]


def test_hits_from_run_frame_keeps_query_order_of_first_appearance():
    frame = pd.DataFrame(
        {"query_id": ["b", "a", "b"], "rank": [2, 1, 1], "key": ["y", "z", "x"], "score": [1.0, 1.0, 2.0]}
    )
    hits = hits_from_run_frame(frame)
    assert list(hits) == ["b", "a"]
    assert [h.id for h in hits["b"]] == ["x", "y"]


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_tabular_round_trip_keeps_hit_fields(tmp_path, fmt):
    run = read_run(FIXTURES / "hits.jsonl")
    write_run(run, tmp_path / f"run.{fmt}", fmt=fmt)
    back = read_run(tmp_path / f"run.{fmt}")
    pd.testing.assert_frame_equal(back, run, check_dtype=False)


@given(st.lists(st.integers(1, 6), min_size=1, max_size=12), st.booleans())
def test_ranks_count_from_one_in_every_block(lengths: list[int], equal: bool) -> None:
    """Equal blocks (the common 100 hits a query) and uneven ones get the same numbering."""
    from abcompare.data.run_rules import ranks_within

    if equal:
        lengths = [lengths[0]] * len(lengths)
    codes = np.repeat(np.arange(len(lengths)), lengths)
    assert ranks_within(codes).tolist() == [rank for length in lengths for rank in range(1, length + 1)]
