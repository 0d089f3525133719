"""Relevance annotations (TREC qrels, BEIR qrels TSV, JSONL) and evidence spans, read into the tables
of docs/architecture.md: annotations ``query_id, key, grade`` and spans ``query_id, document_id, start, end``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from abcompare.core.errors import DataError
from abcompare.core.limits import MAX_GRADE, MAX_INDEX, MIN_GRADE
from abcompare.core.ranking import repeated_keys
from abcompare.data._jsonl import jsonl_records, text_field
from abcompare.data._lines import (
    InputFile,
    as_input,
    check_trec_ids,
    content_lines,
    file_bytes,
    first_true,
    parse_floats,
    peek_bytes,
    regular_columns,
    unix_newlines,
)
from abcompare.data.grades import grade_problem
from abcompare.data.pooling import is_pool_file, read_pool

__all__ = [
    "ANNOTATION_FORMATS",
    "read_annotation_files",
    "read_annotations",
    "read_spans",
    "write_trec_qrels",
]

ANNOTATION_FORMATS = ("trec", "beir", "jsonl", "pool")
_TREC_HINT = "each line is 'query_id 0 doc_id grade' separated by whitespace"
_BEIR_HINT = "a header 'query-id<TAB>corpus-id<TAB>score', then one tab-separated row per judgment"
_JSONL_HINT = (
    'each line is {"query_id": ..., "relevant_ids": [...]} or {"query_id": ..., "relevant": {"id": grade}}'
)
_GRADE_HINT = f"a grade is a whole number from {MIN_GRADE} to {MAX_GRADE} (0 = not relevant)"


def read_annotations(path: str | Path, fmt: str = "auto") -> pd.DataFrame:
    """Read relevance judgments into the annotations table ``query_id, key, grade``.

    Parameters
    ----------
    path : str or Path
        TREC qrels (``qid 0 docid grade``), BEIR ``qrels/<split>.tsv``, JSONL (``relevant_ids`` or
        ``relevant``), or a pool file written by ``abcompare pool`` and filled by annotators (rows left
        without a grade are skipped).
    fmt : {"auto", "trec", "beir", "jsonl", "pool"}
        The format; ``auto`` looks at the first line.

    Returns
    -------
    pandas.DataFrame
        One row per judgment. Identical repeated judgments are kept once; the same (query, id) with two
        grades, or a grade that is not a 32-bit integer, is a ``DataError`` naming the file and line.

    Examples
    --------
    >>> from abcompare.examples import example_path
    >>> qrels = read_annotations(example_path("hr-docs") / "qrels" / "test.tsv")
    >>> list(qrels.columns), qrels["query_id"].nunique()
    (['query_id', 'key', 'grade'], 124)
    """
    path = as_input(path, "annotation")
    fmt = _detect(path) if fmt == "auto" else fmt
    if fmt == "pool":
        frame = read_pool(path)
    elif fmt == "trec":
        regular = _read_regular_trec(path)
        if regular is not None:
            return regular  # checked already: no judgment repeats
        frame = _read_columns(path, fields=4, hint=_TREC_HINT, tab_only=False, header=False)
    elif fmt == "beir":
        frame = _read_columns(path, fields=3, hint=_BEIR_HINT, tab_only=True, header=True)
    elif fmt == "jsonl":
        frame = _read_jsonl(path)
    else:
        raise DataError(
            f"unknown annotation format {fmt!r}",
            file=path,
            hint=f"use one of auto, {', '.join(ANNOTATION_FORMATS)}",
        )
    return _deduplicate(frame, path)


def _first_line(path: InputFile) -> str | None:
    """The first content line (not blank, not a comment), stripped, from the file's first bytes; None when
    it does not end within them (then the whole file is read)."""
    head = unix_newlines(peek_bytes(path, "annotation", 1 << 16))
    complete, _, _ = head.rpartition(b"\n")
    try:
        text = complete.decode("utf-8")
    except UnicodeDecodeError:
        return None
    for line in text.split("\n"):
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            return stripped
    return None


def _detect(path: InputFile) -> str:
    first = _first_line(path)
    if first is None:
        lines, _ = content_lines(path, "annotation")
        if len(lines) == 0:
            raise DataError("annotation file is empty", file=path, hint=_TREC_HINT)
        first = lines[0].as_py()
    if is_pool_file(path, first):
        return "pool"
    if first.startswith("{"):
        return "pool" if _is_pool_record(first) else "jsonl"
    fields = first.split()
    if "\t" in first and (len(fields) == 3 or not _is_number(fields[-1])):
        return "beir"
    return "trec"


def _is_pool_record(line: str) -> bool:
    """A JSONL line of a pool file: one (query, key) with a grade, not a query's list of relevant ids."""
    import json

    try:
        record = json.loads(line)
    except json.JSONDecodeError:
        return False
    return isinstance(record, dict) and "key" in record and "grade" in record


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _read_columns(path: InputFile, *, fields: int, hint: str, tab_only: bool, header: bool) -> pd.DataFrame:
    """TREC qrels (4 whitespace fields) or BEIR TSV (3 tab fields, optional header) → annotation rows."""
    lines, numbers = content_lines(path, "annotation")
    if header and len(lines) and not _is_number(lines[0].as_py().split("\t")[-1].strip()):
        lines, numbers = lines.slice(1), numbers[1:]
    if len(lines) == 0:
        raise DataError("annotation file has no judgments", file=path, hint=hint)
    parts = pc.split_pattern(lines, "\t") if tab_only else pc.ascii_split_whitespace(lines)
    counts = pc.list_value_length(parts).to_numpy(zero_copy_only=False)
    bad = first_true(counts != fields)
    if bad is not None:
        message = f"wrong column count: expected {fields} fields, found {counts[bad]}"
        raise DataError(message, file=path, line=int(numbers[bad]), hint=hint)
    query = pc.utf8_trim_whitespace(pc.list_element(parts, 0))
    key = pc.utf8_trim_whitespace(pc.list_element(parts, fields - 2))
    grade_text = pc.utf8_trim_whitespace(pc.list_element(parts, fields - 1))
    for values, name in ((query, "query id"), (key, "document id")):
        empty = first_true(pc.equal(values, "").to_numpy(zero_copy_only=False))
        if empty is not None:
            field = name.replace(" ", "_")
            raise DataError(f"empty {name}", file=path, line=int(numbers[empty]), field=field, hint=hint)
    grade = parse_floats(
        grade_text,
        path=path,
        numbers=numbers,
        what="grade",
        hint="the grade is an integer (0 = not relevant, higher = more relevant)",
        field="grade",
    )
    bad = first_true(grade_problem(grade))
    if bad is not None:
        message = f"grade {grade_text[bad].as_py()!r} is not an integer in range"
        raise DataError(message, file=path, line=int(numbers[bad]), field="grade", hint=_GRADE_HINT)
    frame = pd.DataFrame(
        {
            "query_id": query.to_pandas().astype("str"),
            "key": key.to_pandas().astype("str"),
            "grade": grade.astype(np.int64),
        }
    )
    frame.attrs["line_numbers"] = numbers
    return frame


_QRELS_FIELDS = ("query_id", "iter", "key", "grade")
_QRELS_TYPES = {
    "query_id": pa.large_string(),
    "iter": pa.dictionary(pa.int32(), pa.large_string()),  # ignored; few distinct values: cheap to check
    "key": pa.large_string(),
    "grade": pa.float64(),
}


def _read_regular_trec(path: InputFile) -> pd.DataFrame | None:
    """TREC qrels in one multithreaded pass when the file is regular (single spaces, four fields a line)
    and holds nothing the general path would read otherwise or report: no empty field, comment, edge
    whitespace, bad grade or repeated (query, id). None sends the file to the general path, which builds
    the same table or raises the located error."""
    with file_bytes(path, "annotation") as data:
        table = regular_columns(data, _QRELS_FIELDS, _QRELS_TYPES)
        ascii_only = table is not None and int(np.frombuffer(data, dtype=np.uint8).max(initial=0)) < 0x80
    if table is None or table.num_rows == 0:
        return None
    query = table.column("query_id").combine_chunks()
    key = table.column("key").combine_chunks()
    if pc.any(pc.starts_with(query, "#")).as_py():
        return None  # a comment line
    for values in (query, key):
        if pc.any(pc.equal(values, "")).as_py():
            return None
        if not ascii_only and not pc.all(pc.equal(pc.utf8_trim_whitespace(values), values)).as_py():
            return None  # Unicode whitespace at an edge: the general path trims it
    for chunk in table.column("iter").chunks:
        if len(chunk.dictionary) and pc.min(pc.binary_length(chunk.dictionary)).as_py() == 0:
            return None
    grade = table.column("grade").to_numpy()
    if grade_problem(grade).any():
        return None
    query_code = pc.dictionary_encode(query).indices.to_numpy(zero_copy_only=False).astype(np.int64)
    by_query = np.argsort(query_code, kind="stable")
    if repeated_keys(query_code[by_query], key.take(pa.array(by_query))).any():
        return None  # repeated judgments: the general path keeps identical ones once, reports others
    return pd.DataFrame(
        {
            "query_id": query.to_pandas().astype("str"),
            "key": key.to_pandas().astype("str"),
            "grade": grade.astype(np.int64),
        }
    )


def _grade(value: object, *, path: str | Path, line: int, field: str) -> int:
    non_numeric = DataError(
        f"non-numeric grade {value!r}", file=path, line=line, field=field,
        hint="grades are integers (0 = not relevant)",
    )  # fmt: skip
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise non_numeric
    try:
        number = float(value)
    except ValueError:
        raise non_numeric from None
    if grade_problem(np.array([number]))[0] or (
        isinstance(value, int) and not MIN_GRADE <= value <= MAX_GRADE
    ):
        raise DataError(
            f"grade {value!r} is not an integer in range",
            file=path,
            line=line,
            field=field,
            hint=_GRADE_HINT,
        )
    return int(number)


def _read_jsonl(path: InputFile) -> pd.DataFrame:
    rows: list[tuple[str, str, int]] = []
    line_numbers: list[int] = []
    for number, record in jsonl_records(path, "annotation", _JSONL_HINT):
        qid = text_field(record, ("query_id", "qid", "_id"), path=path, line=number, hint=_JSONL_HINT)
        if "relevant" in record:
            graded = record["relevant"]
            if not isinstance(graded, dict):
                raise DataError("'relevant' must map ids to grades", file=path, line=number, field="relevant",
                                hint=_JSONL_HINT)  # fmt: skip
            items = [(k, _grade(v, path=path, line=number, field=f"relevant.{k}")) for k, v in graded.items()]
        elif "relevant_ids" in record:
            ids = record["relevant_ids"]
            if not isinstance(ids, list):
                raise DataError("'relevant_ids' must be a list", file=path, line=number, field="relevant_ids",
                                hint=_JSONL_HINT)  # fmt: skip
            items = [(k, 1) for k in ids]
        else:
            raise DataError("needs 'relevant_ids' or 'relevant'", file=path, line=number, hint=_JSONL_HINT)
        for key, grade in items:
            text = str(key).strip() if isinstance(key, (str, int)) and not isinstance(key, bool) else ""
            if not text:
                raise DataError(
                    f"empty or invalid relevant id {key!r}",
                    file=path,
                    line=number,
                    hint="ids are non-empty strings",
                )
            rows.append((qid, text, grade))
            line_numbers.append(number)
    frame = pd.DataFrame(rows, columns=["query_id", "key", "grade"])
    frame = frame.astype({"query_id": "str", "key": "str", "grade": np.int64})
    frame.attrs["line_numbers"] = np.asarray(line_numbers, dtype=np.int64)
    return frame


def first_conflict(frame: pd.DataFrame, among: np.ndarray | None = None) -> int | None:
    """The row of the first (query, id) judged with two different grades, or None: the one conflict rule,
    within a file and across files. ``among`` limits the answer to some rows (a file's repeats)."""
    grades = frame.groupby(["query_id", "key"], sort=False)["grade"].transform("nunique").to_numpy()
    conflicting = grades > 1
    return first_true(conflicting if among is None else among & conflicting)


def _deduplicate(frame: pd.DataFrame, path: str | Path) -> pd.DataFrame:
    """Drop repeated identical judgments; a (query, id) judged with two different grades is an error."""
    numbers = frame.attrs.pop("line_numbers", None)
    repeated = frame.duplicated(["query_id", "key"], keep="first").to_numpy()
    if not repeated.any():
        return frame
    bad = first_conflict(frame, among=repeated)
    if bad is not None:
        q, k = frame.at[bad, "query_id"], frame.at[bad, "key"]
        same = np.flatnonzero(((frame["query_id"] == q) & (frame["key"] == k)).to_numpy())
        values = sorted(set(frame["grade"].to_numpy()[same].tolist()))
        where = f" (lines {', '.join(str(numbers[i]) for i in same)})" if numbers is not None else ""
        raise DataError(
            f"conflicting grades {values} for query {q!r}, id {k!r}{where}",
            file=path,
            line=int(numbers[bad]) if numbers is not None else None,
            field="grade",
            hint="keep one judgment per (query, id)",
        )
    return frame[~repeated].reset_index(drop=True)


def read_spans(path: str | Path) -> pd.DataFrame:
    """Evidence spans from JSONL ``{"query_id", "document_id", "start", "end"[, "grade"]}``.

    Offsets are characters into the corpus ``text``, end exclusive; grade defaults to 1.
    """
    hint = 'each line is {"query_id": ..., "document_id": ..., "start": int, "end": int}'
    path = as_input(path, "span")
    rows: list[tuple[str, str, int, int, int]] = []
    for number, record in jsonl_records(path, "span", hint):
        qid = text_field(record, ("query_id",), path=path, line=number, hint=hint)
        doc = text_field(record, ("document_id",), path=path, line=number, hint=hint)
        bounds = []
        for name in ("start", "end"):
            value = record.get(name)
            if isinstance(value, bool) or not isinstance(value, int) or abs(value) > MAX_INDEX:
                raise DataError(
                    f"{name} must be an integer character offset (at most 2**53), got {value!r}",
                    file=path,
                    line=number,
                    field=name,
                    hint=hint,
                )
            bounds.append(value)
        start, end = bounds
        if start < 0 or end <= start:
            raise DataError(
                f"empty or negative span [{start}, {end})",
                file=path,
                line=number,
                field="end",
                hint="0 <= start < end (end is exclusive)",
            )
        grade = _grade(record.get("grade", 1), path=path, line=number, field="grade")
        rows.append((qid, doc, start, end, grade))
    if not rows:
        raise DataError("span file has no spans", file=path, hint=hint)
    frame = pd.DataFrame(rows, columns=["query_id", "document_id", "start", "end", "grade"])
    return frame.astype(
        {"query_id": "str", "document_id": "str", "start": np.int64, "end": np.int64, "grade": np.int64}
    )


def write_trec_qrels(annotations: pd.DataFrame, path: str | Path) -> Path:
    """Write annotations as TREC qrels (``query_id 0 key grade``); ids must not contain whitespace."""
    path = Path(path)
    frame = annotations[["query_id", "key", "grade"]].astype({"query_id": "str", "key": "str"})
    check_trec_ids(frame, "TREC qrels", hint="use ids without spaces")
    path.parent.mkdir(parents=True, exist_ok=True)
    frame.insert(1, "iter", 0)
    frame.to_csv(path, sep=" ", header=False, index=False, lineterminator="\n")
    return path


def read_annotation_files(paths: str | Path | list[str | Path] | tuple[str | Path, ...]) -> pd.DataFrame:
    """Read one or more annotation files (any format) and merge them into one table.

    The same judgment in two files is kept once; the same (query, id) with different grades in two
    files is a ``DataError`` naming both files (a filled pool file is merged with the original qrels so).
    """
    if isinstance(paths, (str, Path)):
        return read_annotations(paths)
    frames = [read_annotations(path).assign(_file=str(path)) for path in paths]
    if not frames:
        raise DataError("no annotation file given", field="dataset.annotations")
    merged = pd.concat(frames, ignore_index=True)
    bad = first_conflict(merged)
    if bad is not None:
        q, k = merged.at[bad, "query_id"], merged.at[bad, "key"]
        same = merged[(merged["query_id"] == q) & (merged["key"] == k)]
        first = same.iloc[0]
        other = same[same["grade"] != first["grade"]].iloc[0]
        raise DataError(
            f"conflicting grades for query {q!r}, id {k!r}: {first['grade']} in {first['_file']}, "
            f"{other['grade']} in {other['_file']}",
            field="dataset.annotations",
            hint="judge each (query, id) once, or correct one of the files",
        )
    merged = merged[~merged.duplicated(["query_id", "key"], keep="first")]
    return merged.drop(columns="_file").reset_index(drop=True)
