"""TREC run files (``qid Q0 docno rank score tag``), read as trec_eval reads them and written so that
trec_eval evaluates them in our order.

A regular file (single spaces, six fields a line) is parsed in one multithreaded pass; anything else, and
every file with a problem to report, takes the general line-by-line path (the same table, the same
errors). The rank column is ignored: hits are ordered by score (descending), ties by docno (descending).
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from abcompare.core.errors import AbcompareWarning, DataError
from abcompare.core.ranking import key_identity, reordering, repeated_keys, repeated_within_queries, run_order
from abcompare.data._lines import (
    check_trec_ids,
    content_lines,
    file_bytes,
    first_true,
    parse_floats,
    regular_columns,
)
from abcompare.data.hit_lists import (
    RUN_COLUMNS,
)
from abcompare.data.run_rules import order_by_score, ranks_within

_TREC_HINT = "each line is 'query_id Q0 doc_id rank score run_tag' separated by whitespace"
#: A short line's first missing field, named in its error (a line of 3 fields lacks the rank).
_FIELD_NAMES = ("query_id", "Q0", "docno", "rank", "score", "run_tag")


def read_trec_run(path: str | Path) -> pd.DataFrame:
    """A regular file (single spaces, six fields a line) is parsed in one multithreaded pass; anything
    else, and every file with a problem to report, takes the general path (same table, same errors)."""
    with file_bytes(path, "run") as data:
        table = regular_columns(data, _TREC_FIELDS, _TREC_TYPES)
    if table is not None:
        frame = _regular_trec_frame(table)
        if frame is not None:
            return frame
    return _read_trec_lines(path)


_TREC_FIELDS = ("query_id", "iter", "doc", "rank", "score", "tag")
_SMALL = pa.dictionary(pa.int32(), pa.large_string())  # few distinct values: cheap to check
_TREC_TYPES = {
    "query_id": pa.large_string(),
    "iter": _SMALL,
    "doc": pa.large_string(),
    "rank": _SMALL,  # ignored (trec_eval orders by score): only checked for an empty field
    "score": pa.float64(),
    "tag": _SMALL,
}


def _regular_trec_frame(table: pa.Table) -> pd.DataFrame | None:
    """The run table from a regularly parsed TREC file, or None when a line is not what the general path
    would read the same way (an empty field, a comment, edge whitespace) or has a problem to locate
    (a non-finite score, a repeated docno)."""
    n = table.num_rows
    if n == 0:
        return None
    qid = table.column("query_id").combine_chunks()
    if n > 1:
        change = pc.not_equal(qid.slice(1), qid.slice(0, n - 1)).to_numpy(zero_copy_only=False)
        starts = np.flatnonzero(np.r_[True, change])
    else:
        starts = np.zeros(1, dtype=np.int64)
    labels = qid.take(pa.array(starts))
    if len(pc.unique(labels)) == len(labels):  # each query's lines are contiguous: codes by block
        qcodes = np.repeat(np.arange(len(starts), dtype=np.int64), np.diff(np.r_[starts, n]))
    else:
        encoded = pc.dictionary_encode(qid)
        qcodes, labels = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64), encoded.dictionary
    if not _regular_edges(table, labels):
        return None
    score = table.column("score").to_numpy()
    if not score.flags.writeable:  # a zero-copy view of Arrow's buffer (one chunk): the table owns a copy
        score = score.copy()
    if not np.isfinite(score).all():
        return None
    run_tag = pc.utf8_rtrim_whitespace(pa.array([table.column("tag")[n - 1].as_py()]))[0].as_py()
    doc = table.column("doc").combine_chunks()
    del table
    order = reordering(qcodes, score, None, doc)
    if order is not None:  # the file is not in trec_eval's order: sort it
        moved = qcodes[order]
        if not np.array_equal(moved, qcodes):  # queries were scattered: their ids move too
            qid = labels.take(pa.array(moved))
        qcodes, score, doc = moved, score[order], doc.take(pa.array(order))
    del order
    if repeated_keys(qcodes, doc).any():
        return None
    sorted_doc = doc.to_pandas().astype("str")
    del doc
    frame = pd.DataFrame(
        {
            "query_id": qid.to_pandas().astype("str"),
            "rank": ranks_within(qcodes),
            "key": sorted_doc,
            "score": score,
            "id": sorted_doc,
        },
        copy=False,  # every column is built here for this table alone
    )
    frame.attrs["run_tag"] = run_tag
    return frame


def _regular_edges(table: pa.Table, labels: pa.Array) -> bool:
    """Whether every field is non-empty, no query id starts with '#' (a comment) or with whitespace, and
    no run tag is blank: then splitting each line on whitespace gives exactly the parsed fields."""
    if (
        pc.any(pc.starts_with(labels, "#")).as_py()
        or not pc.all(pc.equal(pc.utf8_ltrim_whitespace(labels), labels)).as_py()
        or pc.any(pc.equal(labels, "")).as_py()  # every query id equals its block's label
    ):
        return False
    if pc.any(pc.equal(table.column("doc"), "")).as_py():
        return False
    for name in ("iter", "rank"):
        for chunk in table.column(name).chunks:
            if len(chunk.dictionary) and pc.min(pc.binary_length(chunk.dictionary)).as_py() == 0:
                return False
    for chunk in table.column("tag").chunks:
        trimmed = pc.utf8_rtrim_whitespace(chunk.dictionary)
        if len(trimmed) and pc.min(pc.binary_length(trimmed)).as_py() == 0:
            return False
    return True


def _read_trec_lines(path: str | Path) -> pd.DataFrame:
    """The general TREC path: every line split on whitespace, each problem located at its line."""
    lines, numbers = content_lines(path, "run")
    if len(lines) == 0:
        raise DataError("run file has no hits", file=path, hint=_TREC_HINT)
    parts = pc.ascii_split_whitespace(lines)
    counts = pc.list_value_length(parts).to_numpy(zero_copy_only=False)
    bad = first_true(counts < 6)
    if bad is not None:
        raise DataError(
            f"malformed line: expected 6 fields, found {counts[bad]}",
            file=path,
            line=int(numbers[bad]),
            field=_FIELD_NAMES[min(int(counts[bad]), 5)],
            hint=_TREC_HINT,
        )
    score = parse_floats(
        pc.list_element(parts, 4),
        path=path,
        numbers=numbers,
        what="score",
        hint="the 5th field is the score; trec_eval orders hits by it",
        field="score",
    )
    bad = first_true(~np.isfinite(score))
    if bad is not None:
        raise DataError(
            f"score is {score[bad]} (NaN/inf)",
            file=path,
            line=int(numbers[bad]),
            field="score",
            hint="write a finite score for every hit",
        )
    qid = pc.list_element(parts, 0)
    doc = pc.list_element(parts, 2)
    qcodes = pc.dictionary_encode(qid).indices.to_numpy(zero_copy_only=False)
    _check_unique_docs(qid, doc, qcodes, numbers, path)
    order = run_order(qcodes, score, None, doc)
    sorted_doc = doc.take(order).to_pandas().astype("str")
    frame = pd.DataFrame(
        {
            "query_id": qid.take(order).to_pandas().astype("str"),
            "rank": ranks_within(qcodes[order]),
            "key": sorted_doc,
            "score": score[order],
            "id": sorted_doc,
        }
    )
    frame.attrs["run_tag"] = str(pc.list_element(parts.slice(len(parts) - 1), 5)[0].as_py())
    return frame


def _check_unique_docs(qid: pa.Array, doc: pa.Array, qcodes: np.ndarray, numbers: np.ndarray, path) -> None:
    """trec_eval rejects a docno listed twice for one query; so do we, naming both lines."""
    by_query = np.argsort(qcodes, kind="stable")  # file order within each query
    grouped, keys = qcodes[by_query], doc.take(pa.array(by_query))
    identity = key_identity(grouped, keys)
    repeated = repeated_within_queries(grouped, identity)
    if not repeated.any():
        return
    bad = int(by_query[repeated].min())  # the first repeat in the file
    position = int(np.flatnonzero(by_query == bad)[0])
    same = (grouped == grouped[position]) & (identity == identity[position])
    first = int(by_query[same].min())
    raise DataError(
        f"duplicate document {doc[bad].as_py()!r} for query {qid[bad].as_py()!r} "
        f"(first at line {numbers[first]})",
        file=path,
        line=int(numbers[bad]),
        field="docno",
        hint="trec_eval rejects repeated docnos; keep one line each",
    )


def run_tag(run_name: str) -> str:
    """The run name as the one-word tag of a TREC run's 6th column (whitespace becomes '_')."""
    tag = "_".join(str(run_name).split())
    return tag or "abcompare"


def write_trec_run(run_df: pd.DataFrame, path: Path, *, tag: str, scores: str) -> None:
    frame = run_df[list(RUN_COLUMNS)].copy()
    frame["query_id"] = frame["query_id"].astype("str")
    frame["key"] = frame["key"].astype("str")
    check_trec_ids(frame, "a TREC run", hint="set hit ids without spaces, or write jsonl")
    qcodes, _ = pd.factorize(frame["query_id"], sort=False)
    order = np.lexsort((frame["rank"].to_numpy(), qcodes))
    frame = frame.iloc[order].reset_index(drop=True)
    if scores == "auto":
        frame = _scores_that_keep_ranks(frame)
    elif scores != "keep":
        raise DataError(f"unknown scores option {scores!r}", field="scores", hint="use auto or keep")
    elif frame["score"].isna().any():
        raise DataError(
            "a TREC run needs a score for every hit; some are NaN",
            field="score",
            hint="use scores='auto' to write rank-derived scores",
        )
    import pyarrow.csv as pacsv

    n = len(frame)
    table = pa.table(
        {
            "query_id": pa.array(frame["query_id"], type=pa.large_string()),
            "iter": pc.fill_null(pa.nulls(n, pa.string()), "Q0"),
            "key": pa.array(frame["key"], type=pa.large_string()),
            "rank": pa.array(frame["rank"].to_numpy(dtype=np.int64)),
            "score": pa.array(frame["score"].to_numpy(dtype=float)),  # shortest round-trip text
            "tag": pc.fill_null(pa.nulls(n, pa.string()), tag),
        }
    )
    options = pacsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")
    pacsv.write_csv(table, str(path), write_options=options)


def _scores_that_keep_ranks(frame: pd.DataFrame) -> pd.DataFrame:
    """Replace the scores of queries where trec_eval's order (score desc, key desc) differs from rank."""
    trec = order_by_score(frame[["query_id", "key", "score"]].fillna({"score": -np.inf}))
    same = (trec["key"].to_numpy() == frame["key"].to_numpy()) & frame["score"].notna().to_numpy()
    broken = pd.Series(~same).groupby(frame["query_id"].to_numpy(), sort=False).transform("any").to_numpy()
    if broken.any():
        n_queries = frame.loc[broken, "query_id"].nunique()
        warnings.warn(
            f"{n_queries} queries have tied, missing or out-of-order scores; wrote rank-derived scores "
            "(n - rank + 1) so that trec_eval keeps the ranking",
            AbcompareWarning,
            stacklevel=3,
        )
        size = frame.groupby("query_id", sort=False)["rank"].transform("max").to_numpy()
        frame = frame.copy()
        frame.loc[broken, "score"] = (size - frame["rank"].to_numpy() + 1)[broken].astype(float)
    return frame
