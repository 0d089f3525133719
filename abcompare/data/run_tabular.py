"""Tabular run files (Parquet, CSV): ``query_id``, ``rank`` and/or ``score``, and ``key`` or hit fields."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from abcompare.core.errors import DataError
from abcompare.core.limits import MAX_INDEX
from abcompare.data._lines import (
    InputFile,
    as_input,
    first_true,
    read_bytes,
    unix_newlines,
)
from abcompare.data.hit_lists import (
    FLOAT_FIELDS,
    INT_FIELDS,
    stable_keys,
)
from abcompare.data.run_rules import column_order, nameless_hits, order_by_score, ranks_within


def read_parquet_run(path: InputFile) -> pd.DataFrame:
    frame, where = _parquet_frame(path)
    return _finish_table(frame, path, where)


def _parquet_frame(path: InputFile) -> tuple[pd.DataFrame, Any]:
    """The Parquet file's table as it is, and where its rows are (``row N``: Parquet has no lines)."""
    path = as_input(path, "run")
    # a missing file gets our error from read_bytes; a pipe is read once into memory (Parquet needs seeks)
    source = path.path if path.rereadable else io.BytesIO(read_bytes(path, "run"))
    try:
        frame = pd.read_parquet(source)
    except Exception as exc:  # pyarrow raises several types for a corrupt file
        raise DataError(
            f"cannot read Parquet run: {exc}", file=path, hint="write it with pandas/pyarrow"
        ) from None
    return frame, lambda i: {"field": f"row {i + 1}"}


def read_csv_run(path: str | Path) -> pd.DataFrame:
    frame, where = _csv_frame(path)
    return _finish_table(frame, path, where)


def _csv_frame(path: str | Path) -> tuple[pd.DataFrame, Any]:
    """The CSV file's rows as strings (numbers converted, located), and where each row is: its line in
    the file (the header is line 1), or ``row N`` when a quoted value spans lines."""
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
    return frame, where


def tabular_hit_location(path: str | Path, fmt: str, query_id: str, key: str, name: str) -> dict[str, Any]:
    """Where a CSV or Parquet run file holds the column ``name`` of the hit ``(query_id, key)`` of its run
    table: ``{"line": n, "field": name}`` (CSV) or ``{"field": "row n: name"}``, found by reading the file
    again with its rows numbered (only an error's path does this); ``{}`` when the hit is not found."""
    frame, where = _csv_frame(path) if fmt == "csv" else _parquet_frame(as_input(path, "run"))
    numbered = _finish_table(frame.assign(**{_ROW: np.arange(len(frame))}), path, where)
    found = numbered[(numbered["query_id"] == query_id) & (numbered["key"] == key)]
    return _merge(where(int(found[_ROW].iloc[0])), name) if len(found) else {}


#: The column that numbers a file's rows while it is read for a location (never in a run table).
_ROW = "__abcompare_row__"


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


def table_run(frame: pd.DataFrame) -> pd.DataFrame:
    """A run DataFrame handed over in Python, checked and finished by the rules of a CSV or Parquet run
    file (``query_id``, ``rank`` and/or ``score``, ``key`` or hit fields); a problem names its row."""
    return _finish_table(frame, None, lambda i: {"field": f"row {i + 1}"})


def _finish_table(frame: pd.DataFrame, path: str | Path | None, where) -> pd.DataFrame:
    """Validate a tabular run (CSV/Parquet): ids, numbers, ranks; compute keys; sort into the run table."""
    _require_columns(frame, path)
    frame = frame.reset_index(drop=True).copy()
    frame["query_id"] = _query_ids(frame, path, where)
    frame = _checked_numbers(frame, path, where)
    blank = first_true(nameless_hits(frame))
    if blank is not None:
        name = "key" if "key" in frame else "id"
        raise DataError(
            f"empty {name} for query {frame.at[blank, 'query_id']!r}",
            file=path,
            **_merge(where(blank), name),
            hint=f"give every hit its {name} (or the hit fields a key is computed from)",
        )
    return column_order(_ordered_with_keys(frame, path, where))


def _require_columns(frame: pd.DataFrame, path: str | Path | None) -> None:
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


def _query_ids(frame: pd.DataFrame, path: str | Path | None, where) -> pd.Series:
    """The query ids as stripped strings (integral floats as integers); an empty one is an error."""
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
    return qids


def _checked_numbers(frame: pd.DataFrame, path: str | Path | None, where) -> pd.DataFrame:
    """The numeric columns as numbers: finite scores (NaN only when ranks order the hits), whole integers."""
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
    return frame


def _ordered_with_keys(frame: pd.DataFrame, path: str | Path | None, where) -> pd.DataFrame:
    """The hits in rank (or score) order, each with its key: a given one, else the hit fields' key."""
    if "rank" in frame:
        frame["rank"] = _integral(frame["rank"], "rank", path, where)
        frame = _order_by_rank(frame, path, where)
    else:
        frame["key"] = stable_keys(frame, index=None) if "key" not in frame else frame["key"]
        frame = order_by_score(frame)
    computed = stable_keys(frame)
    if "key" in frame:  # a given key wins; blank ones fall back to the key the hit fields compute
        given = frame["key"].astype("str").where(frame["key"].notna()).str.strip()
        computed = given.where(given.notna() & (given != ""), computed)
    frame["key"] = computed.astype("str")
    return frame


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
    expected = ranks_within(qcodes[order])
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
