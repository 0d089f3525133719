"""Pooling: the unjudged hits of every variant's top ``depth``, as a file for annotators, and the filled
file read back as annotations.

This is how TREC closes the holes in its judgments: pool the top of every system, judge what nobody
judged yet, merge. ``pool_unjudged`` takes the variants' run tables *at the annotation level* (chunk keys,
or document ids at document level) and the annotations at that level; ``write_pool`` writes the pool as
CSV or JSONL with an empty ``grade`` column; ``read_pool`` reads a (partly) filled pool back into the
annotation table ``query_id, key, grade`` (rows with an empty grade are not judged yet and are skipped).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from abcompare.core.errors import DataError
from abcompare.core.limits import MAX_GRADE, MIN_GRADE
from abcompare.data.grades import grade_problem  # the one grade rule of every annotation format

__all__ = [
    "JUDGE_COLUMNS",
    "POOL_COLUMNS",
    "POOL_FORMATS",
    "POOL_ORDERS",
    "pool_unjudged",
    "read_pool",
    "write_pool",
]

POOL_FORMATS: tuple[str, ...] = ("csv", "jsonl")
POOL_ORDERS: tuple[str, ...] = ("decisive", "stable")
"""The pool's row orders: ``decisive``, the hits whose judgment can move the primary delta most first (ties
in the stable order); ``stable``, query by query, then by the best rank any variant gave the key, then key."""
POOL_COLUMNS: tuple[str, ...] = (
    "query_id",
    "key",
    "grade",
    "query",
    "document_id",
    "retrieved_by",
    "best_rank",
    "text",
)
"""The pool file's columns, in order: what to judge first, then what an annotator reads to judge it."""
JUDGE_COLUMNS: tuple[str, ...] = ("judge_grade", "judged_by")
"""With a ``judge:`` section, after those: the judge's grade of the hits it graded and who graded them (the
judge and its prompt version); never read back as people's grades (only ``grade`` is)."""

_GRADE_HINT = (
    f"fill 'grade' with a whole number from {MIN_GRADE} to {MAX_GRADE} (0 = not relevant, higher = more "
    "relevant) or leave it empty"
)


def pool_unjudged(
    runs: Mapping[str, pd.DataFrame],
    annotations: pd.DataFrame,
    queries: pd.DataFrame,
    *,
    depth: int = 10,
    documents: pd.DataFrame | None = None,
    decisiveness: pd.DataFrame | None = None,
    order: str = "decisive",
) -> pd.DataFrame:
    """Every (query, key) in some variant's top ``depth`` that has no judgment of any grade, once.

    ``runs`` maps variant names to run tables ordered by rank within each query; ``annotations`` has
    ``query_id, key, grade``; ``queries`` ``query_id, text`` (its order is the pool's query order).
    ``documents`` (``doc_id, title, text``) supplies the text of keys that are document ids (document
    level); otherwise a hit's ``content`` is its text. The stable order: query order, then the best rank
    any variant gave the key, then key; ``retrieved_by`` lists ``variant@rank`` in variant order.
    ``decisiveness`` (``query_id, key, decisiveness``: how far the hit's judgment can move the primary
    delta) with ``order="decisive"`` puts the most decisive hits first, the stable order breaking ties
    (a hit it does not list counts 0).
    """
    if depth < 1:
        raise DataError(f"depth must be at least 1, got {depth}", field="depth", hint="e.g. --depth 10")
    if order not in POOL_ORDERS:
        raise DataError(f"unknown pool order {order!r}", field="order", hint=f"use one of {POOL_ORDERS}")
    judged = pd.MultiIndex.from_arrays(
        [annotations["query_id"].astype("str"), annotations["key"].astype("str").str.strip()]
    )
    pieces = []
    for place, (name, run) in enumerate(runs.items()):
        top = _top(run, depth)
        top = top[~pd.MultiIndex.from_arrays([top["query_id"], top["key"]]).isin(judged)]
        top = top.assign(variant=name, variant_order=place)
        pieces.append(top)
    columns = ["query_id", "key", "rank", "document_id", "content", "variant", "variant_order"]
    hits = pd.concat(pieces, ignore_index=True) if pieces else pd.DataFrame(columns=columns)
    query_order = {qid: i for i, qid in enumerate(queries["query_id"].astype("str"))}
    hits = hits[hits["query_id"].isin(query_order)]
    hits = hits.assign(query_order=hits["query_id"].map(query_order))
    hits = hits.sort_values(["query_order", "variant_order", "rank"], kind="stable")
    hits["label"] = hits["variant"] + "@" + hits["rank"].astype("int64").astype("str")
    pool = (
        hits.groupby(["query_order", "query_id", "key"], sort=False)
        .agg(
            best_rank=("rank", "min"),
            document_id=("document_id", "first"),
            content=("content", "first"),
            retrieved_by=("label", " ".join),
        )
        .reset_index()
    )
    pool = pool.sort_values(["query_order", "best_rank", "key"], kind="stable").reset_index(drop=True)
    texts = dict(zip(queries["query_id"].astype("str"), queries["text"].astype("str"), strict=True))
    pool["query"] = pool["query_id"].map(texts)
    pool["text"] = _texts(pool, documents)
    pool["grade"] = pd.array([pd.NA] * len(pool), dtype="Int64")
    pool["best_rank"] = pool["best_rank"].astype("int64")
    if order == "decisive" and decisiveness is not None and len(pool):
        pool = _most_decisive_first(pool, decisiveness)
    return pool[list(POOL_COLUMNS)]


def _most_decisive_first(pool: pd.DataFrame, decisiveness: pd.DataFrame) -> pd.DataFrame:
    """The pool sorted by decisiveness, descending; the order it comes in breaks ties (a stable sort)."""
    weight = (
        decisiveness.assign(
            query_id=decisiveness["query_id"].astype("str"), key=decisiveness["key"].astype("str").str.strip()
        )
        .groupby(["query_id", "key"], sort=False)["decisiveness"]
        .max()
    )
    index = pd.MultiIndex.from_arrays([pool["query_id"], pool["key"]])
    values = weight.reindex(index).fillna(0.0).to_numpy(dtype=np.float64)
    return pool.iloc[np.argsort(-values, kind="stable")].reset_index(drop=True)


def _top(run: pd.DataFrame, depth: int) -> pd.DataFrame:
    """The first ``depth`` distinct keys of each query, by rank: query_id, key, rank, document_id, content."""
    frame = pd.DataFrame(
        {
            "query_id": run["query_id"].astype("str").to_numpy(),
            "key": run["key"].astype("str").str.strip().to_numpy(),
            "rank": pd.to_numeric(run["rank"]).to_numpy() if "rank" in run else np.arange(len(run)) + 1,
            "document_id": _column(run, "document_id"),
            "content": _column(run, "content"),
        }
    )
    codes = pd.factorize(frame["query_id"], sort=False)[0]
    frame = frame.iloc[np.lexsort((frame["rank"].to_numpy(), codes))]
    frame = frame[~frame.duplicated(["query_id", "key"], keep="first")]
    position = frame.groupby("query_id", sort=False).cumcount()
    return frame[position.to_numpy() < depth].reset_index(drop=True)


def _column(run: pd.DataFrame, name: str) -> np.ndarray:
    if name not in run:
        return np.full(len(run), None, dtype=object)
    values = run[name].astype("object")
    return values.where(values.notna(), None).to_numpy()


def _texts(pool: pd.DataFrame, documents: pd.DataFrame | None) -> pd.Series:
    """What an annotator reads: the hit's own content, else the document's title and text."""
    text = pool["content"].astype("object")
    if documents is not None and len(pool):
        titles = documents["title"] if "title" in documents else pd.Series("", index=documents.index)
        full = (
            titles.fillna("").astype("str") + "\n" + documents["text"].fillna("").astype("str")
        ).str.strip()
        by_id = dict(zip(documents["doc_id"].astype("str"), full, strict=True))
        document = pool["document_id"].where(pool["document_id"].notna(), pool["key"]).astype("str")
        text = text.where(text.notna(), document.map(by_id))
    return text.fillna("")


def write_pool(pool: pd.DataFrame, path: str | Path, fmt: str = "csv") -> Path:
    """Write the pool as CSV (a spreadsheet opens it) or JSONL, one row per (query, key) to judge."""
    if fmt not in POOL_FORMATS:
        raise DataError(f"unknown pool format {fmt!r}", field="format", hint=f"use one of {POOL_FORMATS}")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    frame = pool[[*POOL_COLUMNS, *(c for c in JUDGE_COLUMNS if c in pool.columns)]]
    if fmt == "csv":
        frame.to_csv(path, index=False, lineterminator="\n", quoting=csv.QUOTE_MINIMAL)
        return path
    with path.open("w", encoding="utf-8", newline="\n") as handle:
        for record in frame.to_dict(orient="records"):
            record = {k: (None if _missing(v) else v) for k, v in record.items()}
            handle.write(json.dumps(record, ensure_ascii=False, default=_plain) + "\n")
    return path


def _missing(value: object) -> bool:
    return value is None or value is pd.NA or (isinstance(value, float) and np.isnan(value))


def _plain(value: object) -> object:
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    return str(value)


def is_pool_file(path: str | Path, head: str) -> bool:
    """Whether a file whose first line is ``head`` is a pool file (CSV with query_id, key, grade)."""
    if Path(path).suffix.lower() not in (".csv", ".gz") and not head.startswith("query_id,"):
        return False
    header = [h.strip() for h in head.split(",")]
    return {"query_id", "key", "grade"} <= set(header)


def read_pool(path: str | Path) -> pd.DataFrame:
    """A filled pool file (CSV or JSONL) as annotations ``query_id, key, grade``; empty grades are skipped.

    A grade that is not an integer is a ``DataError`` naming the file and line.
    """
    path = Path(path)
    rows: list[tuple[str, str, int]] = []
    numbers: list[int] = []
    for line, query_id, key, grade in _pool_records(path):
        if grade is None or (isinstance(grade, str) and not grade.strip()):
            continue
        rows.append((query_id, key, _integer_grade(grade, path, line)))
        numbers.append(line)
    frame = pd.DataFrame(rows, columns=["query_id", "key", "grade"])
    frame = frame.astype({"query_id": "str", "key": "str", "grade": np.int64})
    frame.attrs["line_numbers"] = np.asarray(numbers, dtype=np.int64)
    return frame


def _pool_records(path: Path):
    """(line, query_id, key, raw grade) for every row of a pool file."""
    try:
        handle = path.open(encoding="utf-8-sig", newline="")
    except OSError as exc:
        raise DataError(f"cannot read pool file: {exc}", file=path) from None
    with handle:
        if path.suffix.lower() in (".jsonl", ".json", ".ndjson"):
            for number, text in enumerate(handle, start=1):
                if not text.strip():
                    continue
                try:
                    record = json.loads(text)
                except json.JSONDecodeError as exc:
                    raise DataError(f"malformed line: not JSON ({exc.msg})", file=path, line=number) from None
                if not isinstance(record, dict):
                    raise DataError("malformed line: expected a JSON object", file=path, line=number)
                yield number, *_ids(record, path, number), record.get("grade")
            return
        reader = csv.DictReader(handle)
        missing = {"query_id", "key", "grade"} - set(reader.fieldnames or ())
        if missing:
            raise DataError(
                f"pool file lacks column(s) {', '.join(sorted(missing))}",
                file=path,
                line=1,
                hint="a pool file has the header written by `abcompare pool`",
            )
        start = reader.line_num
        for record in reader:
            yield start + 1, *_ids(record, path, start + 1), record.get("grade")
            start = reader.line_num


def _ids(record: Mapping[str, object], path: Path, line: int) -> tuple[str, str]:
    values = []
    for name in ("query_id", "key"):
        value = record.get(name)
        text = str(value).strip() if value is not None and not isinstance(value, bool) else ""
        if not text:
            raise DataError(f"empty {name}", file=path, line=line, field=name, hint=_GRADE_HINT)
        values.append(text)
    return values[0], values[1]


def _integer_grade(value: object, path: Path, line: int) -> int:
    try:
        if isinstance(value, bool):
            raise ValueError
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise DataError(f"grade {value!r} is not a number", file=path, line=line, field="grade",
                        hint=_GRADE_HINT) from None  # fmt: skip
    if grade_problem(np.array([number]))[0]:
        raise DataError(f"grade {value!r} is not a whole number in the grade range", file=path, line=line,
                        field="grade", hint=_GRADE_HINT)  # fmt: skip
    return int(number)
