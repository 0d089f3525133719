"""Run files (precomputed hit lists): read TREC / JSONL / Parquet / CSV into the run table, and write them.

The run table is the contract of docs/architecture.md: one row per (query, hit) with ``query_id, rank, key,
score`` plus hit fields, sorted by query (first appearance) then rank. TREC files follow trec_eval: the
rank column is ignored and hits are ordered by score (descending), ties by docno (descending).
"""

from __future__ import annotations

import csv
import io
import json
import warnings
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from abcompare.data._jsonl import jsonl_records
from abcompare.data._lines import (
    InputFile,
    as_input,
    check_trec_ids,
    content_lines,
    file_bytes,
    first_true,
    parse_floats,
    peek_bytes,
    read_bytes,
    regular_columns,
    unix_newlines,
)
from abcompare.data.run_hits import (
    FLOAT_FIELDS,
    INT_FIELDS,
    RUN_COLUMNS,
    clean_id,
    hits_from_run_frame,
    run_frame_from_hits,
    stable_keys,
)
from abcompare.errors import AbcompareWarning, DataError
from abcompare.hits import RagHit
from abcompare.limits import MAX_INDEX
from abcompare.row_blocks import block_aligned_bounds

__all__ = [
    "RUN_COLUMNS",
    "hits_from_run_frame",
    "read_run",
    "run_frame_from_hits",
    "stable_keys",
    "write_run",
]

_TREC_HINT = "each line is 'query_id Q0 doc_id rank score run_tag' separated by whitespace"
FORMATS = ("trec", "jsonl", "parquet", "csv")


# ----------------------------------------------------------------------------------------------- reading
def read_run(path: str | Path, format: str = "auto") -> pd.DataFrame:
    """Read a run file into the run table; ``format`` is trec, jsonl, parquet, csv or auto (by content).

    The file is read once when it cannot be read twice (a named pipe such as ``<(zcat run.gz)``)."""
    path = as_input(path, "run")
    fmt = _detect_format(path) if format == "auto" else format
    if fmt == "trec":
        return _read_trec(path)
    if fmt == "jsonl":
        return _read_jsonl(path)
    if fmt == "parquet":
        return _read_parquet(path)
    if fmt == "csv":
        return _read_csv(path)
    raise DataError(
        f"unknown run format {format!r}", file=path, hint=f"use one of auto, {', '.join(FORMATS)}"
    )


def _detect_format(path: InputFile) -> str:
    name = path.path.name.lower().removesuffix(".gz")
    if name.endswith((".parquet", ".pq")):
        return "parquet"
    if name.endswith(".csv"):
        return "csv"
    if name.endswith((".jsonl", ".json", ".ndjson")):
        return "jsonl"
    head = peek_bytes(path, "run").lstrip()
    if head.startswith(b"PAR1"):
        return "parquet"
    if head.startswith(b"{"):
        return "jsonl"
    header = unix_newlines(head).split(b"\n", 1)[0]
    if b"," in header and b"query_id" in {field.strip(b' "') for field in header.split(b",")}:
        return "csv"  # a CSV header names the query_id column; a TREC line has no commas in its fields
    return "trec"


def _read_trec(path: str | Path) -> pd.DataFrame:
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
    "rank": pa.large_string(),
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
    order = None if _in_trec_order(qcodes, score, doc) else _trec_order(qcodes, score, doc)
    if order is not None:  # the file is not in trec_eval's order: sort it (the query ids too)
        qcodes, score, doc = qcodes[order], score[order], doc.take(pa.array(order))
        qid = labels.take(pa.array(qcodes))
        del order
    if _repeats_within_queries(qcodes, doc):
        return None
    sorted_doc = doc.to_pandas().astype("str")
    del doc
    frame = pd.DataFrame(
        {
            "query_id": qid.to_pandas().astype("str"),
            "rank": _ranks_within(qcodes),
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
    for name in ("doc", "rank"):
        if pc.any(pc.equal(table.column(name), "")).as_py():
            return False
    for chunk in table.column("iter").chunks:
        if len(chunk.dictionary) and pc.min(pc.binary_length(chunk.dictionary)).as_py() == 0:
            return False
    for chunk in table.column("tag").chunks:
        trimmed = pc.utf8_rtrim_whitespace(chunk.dictionary)
        if len(trimmed) and pc.min(pc.binary_length(trimmed)).as_py() == 0:
            return False
    return True


def _in_trec_order(qcodes: np.ndarray, score: np.ndarray, doc: pa.Array) -> bool:
    """Whether rows already follow ``_trec_order`` (query code ascending, score and docno descending)."""
    same = qcodes[1:] == qcodes[:-1]
    if not np.all(qcodes[1:] >= qcodes[:-1]) or not np.all((score[1:] <= score[:-1]) | ~same):
        return False
    tie = np.flatnonzero(same & (score[1:] == score[:-1]))
    if tie.size == 0:
        return True
    left, right = doc.take(pa.array(tie)), doc.take(pa.array(tie + 1))
    return bool(pc.all(pc.greater(left, right)).as_py())


_DUPLICATE_CHUNK = 50_000


def _repeats_within_queries(qcodes: np.ndarray, doc: pa.Array) -> bool:
    """Whether a docno occurs twice for one query; rows are grouped by query. Hashed in query-aligned
    chunks (small, in-cache hash tables, much faster than one table over millions of docnos), on
    Arrow's CPU count of threads (the hashing releases the GIL)."""
    bounds = block_aligned_bounds(qcodes, _DUPLICATE_CHUNK)

    def repeats(low: int, high: int) -> bool:
        codes = pc.dictionary_encode(doc.slice(low, high - low)).indices.to_numpy(zero_copy_only=False)
        pair = (qcodes[low:high] - qcodes[low]) * (high - low) + codes
        pair.sort()
        return bool((pair[1:] == pair[:-1]).any())

    with ThreadPoolExecutor(max_workers=max(1, pa.cpu_count())) as pool:
        return any(pool.map(repeats, bounds[:-1], bounds[1:]))


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
            hint=_TREC_HINT,
        )
    score = parse_floats(
        pc.list_element(parts, 4),
        path=path,
        numbers=numbers,
        what="score",
        hint="the 5th field is the score; trec_eval orders hits by it",
    )
    bad = first_true(~np.isfinite(score))
    if bad is not None:
        raise DataError(
            f"score is {score[bad]} (NaN/inf)",
            file=path,
            line=int(numbers[bad]),
            hint="write a finite score for every hit",
        )
    qid = pc.list_element(parts, 0)
    doc = pc.list_element(parts, 2)
    qcodes = pc.dictionary_encode(qid).indices.to_numpy(zero_copy_only=False)
    _check_unique_docs(qid, doc, qcodes, numbers, path)
    order = _trec_order(qcodes, score, doc)
    sorted_doc = doc.take(order).to_pandas().astype("str")
    frame = pd.DataFrame(
        {
            "query_id": qid.take(order).to_pandas().astype("str"),
            "rank": _ranks_within(qcodes[order]),
            "key": sorted_doc,
            "score": score[order],
            "id": sorted_doc,
        }
    )
    frame.attrs["run_tag"] = str(pc.list_element(parts.slice(len(parts) - 1), 5)[0].as_py())
    return frame


def _check_unique_docs(qid: pa.Array, doc: pa.Array, qcodes: np.ndarray, numbers: np.ndarray, path) -> None:
    """trec_eval rejects a docno listed twice for one query; so do we, naming both lines.

    Sorting by (query, docno) puts repeats side by side (cheaper than hashing millions of unique docnos).
    """
    n = len(doc)
    order = pc.sort_indices(
        pa.table({"q": qcodes, "k": doc}), sort_keys=[("q", "ascending"), ("k", "ascending")]
    )
    keys = doc.take(order)
    q_sorted = qcodes[order.to_numpy(zero_copy_only=False)]
    same = pc.equal(keys.slice(1), keys.slice(0, n - 1)).to_numpy(zero_copy_only=False)
    same &= q_sorted[1:] == q_sorted[:-1]
    if not same.any():
        return
    rows = np.sort(np.unique(np.r_[order.to_numpy()[1:][same], order.to_numpy()[:-1][same]]))
    frame = pd.DataFrame({"q": qcodes[rows], "k": doc.take(pa.array(rows)).to_pandas()})
    bad_local = first_true(frame.duplicated(["q", "k"]).to_numpy())
    first_local = first_true(
        ((frame["q"] == frame.at[bad_local, "q"]) & (frame["k"] == frame.at[bad_local, "k"])).to_numpy()
    )
    bad, first = int(rows[bad_local]), int(rows[first_local])
    raise DataError(
        f"duplicate document {doc[bad].as_py()!r} for query {qid[bad].as_py()!r} "
        f"(first at line {numbers[first]})",
        file=path,
        line=int(numbers[bad]),
        hint="trec_eval rejects repeated docnos; keep one line each",
    )


def _trec_order(qcodes: np.ndarray, score: np.ndarray, keys: pa.Array | pd.Series) -> np.ndarray:
    """Row order: query code ascending, score descending, key descending (byte order, as trec_eval)."""
    table = pa.table({"q": qcodes, "s": score, "k": pa.array(keys, type=pa.large_string())})
    keys_spec = [("q", "ascending"), ("s", "descending"), ("k", "descending")]
    return pc.sort_indices(table, sort_keys=keys_spec).to_numpy(zero_copy_only=False)


def _order_by_score(frame: pd.DataFrame) -> pd.DataFrame:
    """Sort by query (first appearance), score descending, key descending (trec_eval); number ranks from 1."""
    qcodes, _ = pd.factorize(frame["query_id"], sort=False)
    score = frame["score"].to_numpy(dtype=float, na_value=np.nan)
    order = _trec_order(qcodes, score, frame["key"].astype("str"))
    out = frame.iloc[order].reset_index(drop=True)
    out.insert(1, "rank", _ranks_within(qcodes[order]))
    return out


def _ranks_within(sorted_codes: np.ndarray) -> np.ndarray:
    """1-based position within each run of equal codes (the codes are already grouped)."""
    n = len(sorted_codes)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    starts = np.flatnonzero(np.r_[True, sorted_codes[1:] != sorted_codes[:-1]])
    ranks = np.ones(n, dtype=np.int64)  # +1 a row, and at each group start a step back to 1
    ranks[starts[1:]] = 1 - np.diff(starts)
    return np.cumsum(ranks, out=ranks)


def _read_jsonl(path: str | Path) -> pd.DataFrame:
    hits_by_query: dict[str, list[RagHit]] = {}
    line_of: dict[str, int] = {}
    hint = 'each line is {"query_id": "...", "hits": [{RagHit fields}, ...]}'
    for number, record in jsonl_records(path, "run", hint):
        if "query_id" not in record or "hits" not in record:
            raise DataError("malformed line: needs 'query_id' and 'hits'", file=path, line=number, hint=hint)
        qid = clean_id(record["query_id"])
        if qid is None:
            raise DataError("empty query_id", file=path, line=number, field="query_id", hint=hint)
        if qid in hits_by_query:
            raise DataError(
                f"duplicate query id {qid!r} (first at line {line_of[qid]})",
                file=path,
                line=number,
                hint="put all hits of a query on one line",
            )
        if not isinstance(record["hits"], list):
            raise DataError("'hits' must be a list", file=path, line=number, field="hits", hint=hint)
        hits = []
        for i, raw in enumerate(record["hits"]):
            hits.append(_validate_hit(raw, path=path, line=number, index=i))
        _check_hit_ranks(hits, qid, path=path, line=number)
        hits_by_query[qid] = hits
        line_of[qid] = number
    return _finite_scores(run_frame_from_hits(hits_by_query), path)


def _validate_hit(raw: Any, *, path: str | Path, line: int, index: int) -> RagHit:
    from pydantic import ValidationError

    if not isinstance(raw, dict):
        raise DataError(
            f"hit {index} is not an object",
            file=path,
            line=line,
            field=f"hits[{index}]",
            hint="each hit is a JSON object of RagHit fields",
        )
    try:
        hit = RagHit.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        raise DataError(
            f"invalid hit: {err['msg']}",
            file=path,
            line=line,
            field=f"hits[{index}].{where}",
            hint="fix the value's type (numbers for scores and ranks)",
        ) from None
    whole = [(name, getattr(hit, name)) for name in ("rank", "chunk_index", "page_number")]
    whole += [(f"metadata.{name}", (hit.metadata or {}).get(name)) for name in ("start", "end")]
    for name, value in whole:
        if value is None:
            continue
        whole_number = isinstance(value, int) or (isinstance(value, float) and value.is_integer())
        if isinstance(value, bool) or not whole_number or abs(value) > MAX_INDEX:
            raise DataError(
                f"invalid hit: {name} {value!r} is not a whole number between -2**53 and 2**53",
                file=path,
                line=line,
                field=f"hits[{index}].{name}",
                hint="ranks, chunk indexes, page numbers and character offsets are integers",
            )
    return hit


def _check_hit_ranks(hits: Sequence[RagHit], qid: str, *, path: str | Path, line: int) -> None:
    ranks = [h.rank for h in hits]
    if not hits or any(r is None for r in ranks):
        return
    expected = list(range(1, len(hits) + 1))
    if sorted(ranks) != expected:
        raise DataError(
            _rank_problem(sorted(ranks)) + f" for query {qid!r}",
            file=path,
            line=line,
            field="rank",
            hint="ranks of one query must be 1, 2, ..., n",
        )


def _rank_problem(sorted_ranks: Sequence[int]) -> str:
    for position, r in enumerate(sorted_ranks, start=1):
        if position > 1 and r == sorted_ranks[position - 2]:
            return f"duplicate rank {r}"
        if r != position:
            return f"rank gap: expected rank {position}, found {r}"
    return "bad ranks"  # pragma: no cover


def _read_parquet(path: InputFile) -> pd.DataFrame:
    # a missing file gets our error from read_bytes; a pipe is read once into memory (Parquet needs seeks)
    source = path.path if path.rereadable else io.BytesIO(read_bytes(path, "run"))
    try:
        frame = pd.read_parquet(source)
    except Exception as exc:  # pyarrow raises several types for a corrupt file
        raise DataError(
            f"cannot read Parquet run: {exc}", file=path, hint="write it with pandas/pyarrow"
        ) from None
    return _finish_table(frame, path, lambda i: {"field": f"row {i + 1}"})


def _read_csv(path: str | Path) -> pd.DataFrame:
    import pyarrow.csv as pacsv

    data = unix_newlines(read_bytes(path, "run"))
    header_line = data.split(b"\n", 1)[0].decode("utf-8", "replace").strip()
    names = next(csv.reader([header_line]))
    try:
        table = pacsv.read_csv(
            pa.BufferReader(data),
            parse_options=pacsv.ParseOptions(newlines_in_values=True),
            convert_options=pacsv.ConvertOptions(
                column_types={n: pa.string() for n in names}, strings_can_be_null=True
            ),
        )
    except pa.ArrowInvalid as exc:
        raise DataError(
            f"malformed CSV: {exc}", file=path, hint="one header line, then one row per hit"
        ) from None
    physical = data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
    exact_lines = physical == table.num_rows + 1

    def where(i: int) -> dict[str, Any]:
        return {"line": i + 2} if exact_lines else {"field": f"row {i + 1}"}

    frame = pd.DataFrame({name: table.column(name).to_pandas() for name in table.column_names})
    for name in ("rank", "score", *FLOAT_FIELDS, *INT_FIELDS):
        if name in frame:
            frame[name] = _numeric_column(frame[name], name, path, where)
    return _finish_table(frame, path, where)


def _numeric_column(values: pd.Series, name: str, path: str | Path, where) -> pd.Series:
    converted = pd.to_numeric(values, errors="coerce")
    bad = first_true((converted.isna() & values.notna()).to_numpy())
    if bad is not None and str(values.iloc[bad]).strip().lower() not in ("nan", "+nan", "-nan"):
        raise DataError(
            f"non-numeric {name} {values.iloc[bad]!r}",
            file=path,
            **_merge(where(bad), name),
            hint=f"{name} must be a number",
        )
    return converted.astype(float)


def _merge(location: dict[str, Any], name: str) -> dict[str, Any]:
    out = dict(location)
    out["field"] = f"{out['field']}: {name}" if "field" in out else name
    return out


def _finish_table(frame: pd.DataFrame, path: str | Path, where) -> pd.DataFrame:
    """Validate a tabular run (CSV/Parquet): ids, numbers, ranks; compute keys; sort into the run table."""
    if "query_id" not in frame:
        raise DataError(
            "missing column 'query_id'",
            file=path,
            field="query_id",
            hint="a tabular run needs query_id and rank or score, plus hit fields or key",
        )
    if "rank" not in frame and "score" not in frame:
        raise DataError(
            "needs a 'rank' or a 'score' column",
            file=path,
            field="rank",
            hint="give rank (1 = best) or score (higher = better)",
        )
    frame = frame.reset_index(drop=True).copy()
    qids = frame["query_id"]
    if pd.api.types.is_float_dtype(qids):
        qids = qids.astype("Int64")
    qids = qids.astype("str").str.strip()
    blank = first_true((frame["query_id"].isna() | (qids == "")).to_numpy())
    if blank is not None:
        raise DataError(
            "empty query_id",
            file=path,
            **_merge(where(blank), "query_id"),
            hint="every hit needs the id of its query",
        )
    frame["query_id"] = qids
    for name in ("rank", "score", *FLOAT_FIELDS, *INT_FIELDS):
        if name in frame and not pd.api.types.is_numeric_dtype(frame[name]):
            frame[name] = _numeric_column(frame[name], name, path, where)
    if "score" in frame:
        score = frame["score"].to_numpy(dtype=float)
        bad = first_true(np.isinf(score) | (np.isnan(score) & ("rank" not in frame)))
        if bad is not None:
            raise DataError(
                f"score is {score[bad]} (NaN/inf)",
                file=path,
                **_merge(where(bad), "score"),
                hint="scores must be finite (leave them empty only when a rank column orders hits)",
            )
        frame["score"] = score
    else:
        frame["score"] = np.nan
    for name in INT_FIELDS:
        if name in frame:
            frame[name] = _integral(frame[name], name, path, where)
    if "rank" in frame:
        frame["rank"] = _integral(frame["rank"], "rank", path, where)
        frame = _order_by_rank(frame, path, where)
    else:
        frame["key"] = stable_keys(frame, index=None) if "key" not in frame else frame["key"]
        frame = _order_by_score(frame)
    computed = stable_keys(frame)
    if "key" in frame:  # a given key wins; blank ones fall back to the key the hit fields compute
        given = frame["key"].astype("str").where(frame["key"].notna()).str.strip()
        computed = given.where(given.notna() & (given != ""), computed)
    frame["key"] = computed.astype("str")
    return _column_order(frame)


def _integral(values: pd.Series, name: str, path: str | Path, where) -> pd.Series:
    arr = values.to_numpy(dtype=float, na_value=np.nan)
    bad = first_true(~np.isnan(arr) & ((np.floor(arr) != arr) | (np.abs(arr) > MAX_INDEX)))
    if bad is None and name == "rank":
        bad = first_true(np.isnan(arr))
    if bad is not None:
        raise DataError(
            f"{name} {values.iloc[bad]!r} is not an integer between -2**53 and 2**53",
            file=path,
            **_merge(where(bad), name),
            hint=f"{name} must be a whole number",
        )
    return pd.Series(arr, index=values.index).astype("Int64")


def _order_by_rank(frame: pd.DataFrame, path: str | Path, where) -> pd.DataFrame:
    """Sort by query (first appearance) then rank; ranks of each query must be exactly 1..n."""
    qcodes, _ = pd.factorize(frame["query_id"], sort=False)
    rank = frame["rank"].to_numpy(dtype=np.int64)
    order = np.lexsort((rank, qcodes))
    expected = _ranks_within(qcodes[order])
    bad = first_true(rank[order] != expected)
    if bad is not None:
        row = int(order[bad])
        previous = rank[order[bad - 1]] if bad > 0 and qcodes[order[bad - 1]] == qcodes[row] else None
        problem = (
            f"duplicate rank {rank[row]}"
            if previous == rank[row]
            else f"rank gap: expected rank {expected[bad]}, found {rank[row]}"
        )
        raise DataError(
            f"{problem} for query {frame.at[row, 'query_id']!r}",
            file=path,
            **_merge(where(row), "rank"),
            hint="ranks of one query must be 1, 2, ..., n",
        )
    out = frame.iloc[order].reset_index(drop=True)
    out["rank"] = out["rank"].astype(np.int64)
    return out


def _finite_scores(frame: pd.DataFrame, path: str | Path) -> pd.DataFrame:
    bad = first_true(np.isinf(frame["score"].to_numpy(dtype=float)))
    if bad is not None:
        raise DataError(
            f"score is inf for query {frame.at[bad, 'query_id']!r}, rank {frame.at[bad, 'rank']}",
            file=path,
            field="score",
            hint="scores must be finite",
        )
    return frame


def _column_order(frame: pd.DataFrame) -> pd.DataFrame:
    extra = [c for c in frame.columns if c not in RUN_COLUMNS]
    return frame[[*RUN_COLUMNS, *extra]]


# ----------------------------------------------------------------------------------------------- writing
def write_run(
    run_df: pd.DataFrame,
    path: str | Path,
    format: str = "trec",
    *,
    run_name: str = "abcompare",
    scores: str = "auto",
) -> Path:
    """Write a run table as trec, jsonl, parquet or csv; returns the path.

    For TREC, trec_eval re-orders hits by score (ties by docno), so with ``scores="auto"`` a query whose
    scores do not reproduce its ranks (ties, inversions, NaN) gets rank-derived scores (n - rank + 1) and
    an ``AbcompareWarning``; ``scores="keep"`` writes them untouched.
    """
    path = Path(path)
    for column in RUN_COLUMNS:
        if column not in run_df:
            raise DataError(
                f"run table has no {column!r} column",
                field=column,
                hint="build runs with read_run or run_frame_from_hits",
            )
    path.parent.mkdir(parents=True, exist_ok=True)
    if format == "trec":
        _write_trec(run_df, path, tag=_run_tag(run_name), scores=scores)
    elif format == "jsonl":
        with path.open("w", encoding="utf-8") as out:
            for query_id, hits in hits_from_run_frame(run_df).items():
                payload = [h.model_dump(exclude_none=True) for h in hits]
                out.write(json.dumps({"query_id": query_id, "hits": payload}, ensure_ascii=False) + "\n")
    elif format == "parquet":
        run_df.to_parquet(path, index=False)
    elif format == "csv":
        run_df.to_csv(path, index=False)
    else:
        raise DataError(
            f"unknown run format {format!r}", field="format", hint=f"use one of {', '.join(FORMATS)}"
        )
    return path


def _run_tag(run_name: str) -> str:
    """The run name as the one-word tag of a TREC run's 6th column (whitespace becomes '_')."""
    tag = "_".join(str(run_name).split())
    return tag or "abcompare"


def _write_trec(run_df: pd.DataFrame, path: Path, *, tag: str, scores: str) -> None:
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
    trec = _order_by_score(frame[["query_id", "key", "score"]].fillna({"score": -np.inf}))
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
