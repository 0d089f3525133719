"""Query sets: BEIR queries.jsonl (``_id``, ``text``), JSONL with extra fields, or TSV ``qid<TAB>text``."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow.compute as pc

from abcompare.core.errors import DataError
from abcompare.data._jsonl import jsonl_records, text_field
from abcompare.data._lines import InputFile, as_input, content_lines, first_true

__all__ = ["read_queries"]

_JSONL_HINT = 'each line is {"_id": "...", "text": "..."} (query_id/qid and extra fields are accepted)'
_TSV_HINT = "each line is 'query_id<TAB>text'"
_ID_NAMES = ("_id", "query_id", "qid", "id")
_TEXT_NAMES = ("text", "query")
_TSV_HEADERS = {"_id", "id", "qid", "query_id", "query-id", "query"}


def read_queries(path: str | Path, fmt: str = "auto") -> pd.DataFrame:
    """Read a query set into the queries table ``query_id, text, ...extra``.

    Ids must be unique and texts non-empty. An extra field keeps its values when they all have one JSON
    type (text, number or true/false); otherwise, and for lists and objects, its values become text (JSON).

    Parameters
    ----------
    path : str or Path
        A BEIR ``queries.jsonl`` (``_id``, ``text``, extra fields), JSONL with ``query_id``, or a TSV
        ``qid<TAB>text``; ``.gz`` and named pipes are read too.
    fmt : {"auto", "jsonl", "tsv"}
        The format; ``auto`` looks at the first line.

    Returns
    -------
    pandas.DataFrame
        One row per query, in file order. A problem is a ``DataError`` naming the file and line.

    Examples
    --------
    >>> from abcompare.examples import example_path
    >>> queries = read_queries(example_path("hr-docs") / "queries.jsonl")
    >>> len(queries), list(queries.columns[:3])
    (124, ['query_id', 'text', 'group'])
    """
    path = as_input(path, "query")
    lines, numbers = content_lines(path, "query", comments=False, strip=False)
    if len(lines) == 0:
        raise DataError("query file is empty", file=path, hint=_JSONL_HINT)
    if fmt == "auto":
        fmt = "jsonl" if lines[0].as_py().lstrip().startswith("{") else "tsv"
    if fmt == "jsonl":
        frame, line_of = _read_jsonl(path)
    elif fmt == "tsv":
        frame, line_of = _read_tsv(path, lines, numbers)
    else:
        raise DataError(f"unknown query format {fmt!r}", file=path, hint="use auto, jsonl or tsv")
    _check(frame, line_of, path)
    return frame


def _read_jsonl(path: InputFile) -> tuple[pd.DataFrame, list[int]]:
    records: list[dict[str, Any]] = []
    line_of: list[int] = []
    for number, record in jsonl_records(path, "query", _JSONL_HINT):
        qid = text_field(record, _ID_NAMES, path=path, line=number, hint=_JSONL_HINT)
        text_name = next((n for n in _TEXT_NAMES if n in record), None)
        if text_name is None:
            raise DataError("missing field 'text'", file=path, line=number, field="text", hint=_JSONL_HINT)
        text = record[text_name]
        if not isinstance(text, str):
            raise DataError(
                f"text must be a string, got {text!r}", file=path, line=number, field="text", hint=_JSONL_HINT
            )
        id_name = next(n for n in _ID_NAMES if n in record)
        # the id and text fields, and other fields named like our own columns, are not extra columns
        extra = {k: v for k, v in record.items() if k not in (id_name, text_name, "query_id", "text")}
        records.append({"query_id": qid, "text": text, **extra})
        line_of.append(number)
    frame = pd.DataFrame.from_records(records)
    for column in frame.columns[2:]:
        frame[column] = _one_type(frame[column])
    return frame.astype({"query_id": "str", "text": "str"}), line_of


def _kind(value: object) -> str | None:
    """The JSON type of a value: 'null', 'text', 'number', 'boolean' or 'nested' (a list or an object)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "text"
    return "nested"


def _one_type(values: pd.Series) -> pd.Series:
    """An extra field as one column type: kept when every value is of one JSON type (missing ones aside),
    else every value as text (strings as they are, the rest as JSON), so the column can be stored in
    Parquet and grouped by; missing values stay missing."""
    kinds = {_kind(v) for v in values} - {"null"}
    if len(kinds) <= 1 and kinds != {"nested"}:
        return values

    def as_text(value: object) -> object:
        kind = _kind(value)
        if kind == "null":
            return None
        return value if kind == "text" else json.dumps(value, ensure_ascii=False, sort_keys=True)

    return values.map(as_text).astype("object")


def _read_tsv(path: str | Path, lines, numbers) -> tuple[pd.DataFrame, list[int]]:
    parts = pc.split_pattern(lines, "\t", max_splits=None)
    counts = pc.list_value_length(parts).to_numpy(zero_copy_only=False)
    first = lines[0].as_py().split("\t")
    names = ["query_id", "text"]
    if first[0].strip().lower() in _TSV_HEADERS:
        names = ["query_id", "text", *[n.strip() for n in first[2:]]]
        parts, counts, numbers = parts.slice(1), counts[1:], numbers[1:]
    bad = first_true(counts != len(names))
    if bad is not None:
        raise DataError(
            f"wrong column count: expected {len(names)} tab-separated fields, found {counts[bad]}",
            file=path,
            line=int(numbers[bad]),
            hint=_TSV_HINT,
        )
    columns = {
        name: pc.utf8_trim_whitespace(pc.list_element(parts, i)).to_pandas().astype("str")
        for i, name in enumerate(names)
    }
    return pd.DataFrame(columns), numbers.tolist()


def _check(frame: pd.DataFrame, line_of: list[int], path: str | Path) -> None:
    ids = frame["query_id"]
    bad = first_true((ids.str.strip() == "").to_numpy())
    if bad is not None:
        raise DataError(
            "empty query id", file=path, line=line_of[bad], field="query_id", hint="every query needs an id"
        )
    dup = first_true(ids.duplicated().to_numpy())
    if dup is not None:
        first = line_of[first_true((ids == ids.iloc[dup]).to_numpy())]
        raise DataError(
            f"duplicate query id {ids.iloc[dup]!r} (first at line {first})",
            file=path,
            line=line_of[dup],
            field="query_id",
            hint="query ids must be unique",
        )
    empty = first_true((frame["text"].str.strip() == "").to_numpy())
    if empty is not None:
        raise DataError(
            f"empty query text for query {ids.iloc[empty]!r}",
            file=path,
            line=line_of[empty],
            field="text",
            hint="write the query text, or remove the query",
        )
