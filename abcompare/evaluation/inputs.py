"""Turn the run and annotation inputs ``evaluate_run`` accepts into flat columns (one row per hit/judgment).

Runs: a mapping ``query id -> ranked hits`` (``RagHit``, dicts of hit fields, plain key strings), a mapping
``query id -> {key: score}``, or a run DataFrame. Annotations: a mapping ``query id -> ids`` or
``-> {id: grade}``, or an annotations DataFrame. The only per-item Python work is computing stable keys
of hit objects; DataFrames stay columnar.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from itertools import chain
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from abcompare.core.errors import DataError
from abcompare.evaluation import codes
from abcompare.evaluation.keys import hit_keys


@dataclass(frozen=True)
class FlatRun:
    """A run as columns. Rows of a query are ordered by ``score`` (descending, then key descending) when
    ``score`` is set, else by ``rank`` (ties and a missing ``rank`` keep row order)."""

    query_id: Any  # array-like of query ids (not yet strings); one per block when block_lengths is set
    key: Any  # array-like of keys
    rank: np.ndarray | None
    score: np.ndarray | None
    keys_are_clean: bool  # True when keys came from hit_key (stripped, never blank)
    block_lengths: np.ndarray | None = None  # hits per query id, for mappings (query ids come in blocks)
    distinct_keys: bool = False  # True when no key repeats within a query ({key: score} mappings)


@dataclass(frozen=True)
class FlatAnnotations:
    """Annotations as columns: raw query id and key (the evaluator strips keys, drops blank ones), grade."""

    query_id: Any
    key: Any
    grade: np.ndarray


#: A run as the evaluator takes it: a run table, ``{query: [hits]}`` (``RagHit``, dicts of hit fields or key
#: strings, best first) or ``{query: {key: score}}``.
RunInput = pd.DataFrame | Mapping[str, Iterable[object] | Mapping[str, float]]
#: Judgments as the evaluator takes them: an annotations table, ``{query: [ids]}`` or
#: ``{query: {id: grade}}``.
AnnotationsInput = pd.DataFrame | Mapping[str, Iterable[object] | Mapping[str, float]]

RUN_COLUMNS_HINT = "a run DataFrame has the columns query_id, rank, key, score (docs/architecture.md)"
ANNOTATION_COLUMNS_HINT = "an annotations DataFrame has the columns query_id, key, grade"


def flatten_run(run: RunInput, convention: str) -> FlatRun:
    """The run as columns; a DataFrame with scores is ordered by score only in the trec convention."""
    if isinstance(run, pd.DataFrame):
        return _flatten_run_frame(run, convention)
    if isinstance(run, Mapping):
        return _flatten_run_mapping(run)
    raise DataError(
        f"a run must be a mapping or a DataFrame, not {type(run).__name__}",
        field="run",
        hint="pass {query_id: [hits]}, {query_id: {key: score}} or a run DataFrame",
    )


def _flatten_run_frame(frame: pd.DataFrame, convention: str) -> FlatRun:
    for column in ("query_id", "key"):
        if column not in frame.columns:
            raise DataError(f"run has no {column!r} column", field=column, hint=RUN_COLUMNS_HINT)
    score = None
    if convention == "trec" and "score" in frame.columns:
        score = _numbers(frame["score"], "score", RUN_COLUMNS_HINT)
    rank = None
    if "rank" in frame.columns:
        column = frame["rank"]
        if score is None or np.isnan(score).any() or not _is_numeric(column):
            rank = _numbers(column, "rank", RUN_COLUMNS_HINT)  # (scores rule otherwise: not converted)
        if (np.isnan(rank) if rank is not None else column.isna().to_numpy()).any():
            raise DataError("run has a missing rank", field="rank", hint="number every hit from 1")
    return FlatRun(
        query_id=frame["query_id"],
        key=frame["key"],
        rank=rank,
        score=score,
        keys_are_clean=False,
    )


def _flatten_run_mapping(run: Mapping[Any, Any]) -> FlatRun:
    values = [hits for hits in run.values() if hits is not None]
    scored = [isinstance(hits, Mapping) for hits in values]
    if any(scored) and not all(scored):
        raise DataError(
            "a run mixes {key: score} mappings and hit lists",
            field="run",
            hint="give every query the same form",
        )
    for qid, hits in run.items():
        if isinstance(hits, str | bytes):
            raise DataError(
                f"query {qid!r}: hits are a string, not a list",
                field="run",
                hint="wrap a single hit in a list",
            )
    if values and all(scored):
        return _flatten_scores(run)
    keys: list[str] = []
    lengths: list[int] = []
    for hits in run.values():
        query_keys = hit_keys(hits)
        keys.extend(query_keys)
        lengths.append(len(query_keys))
    query_ids = np.array([str(q) for q in run], dtype=object)
    keys_array = np.array(keys, dtype=object)
    return FlatRun(query_ids, keys_array, None, None, True, np.array(lengths, dtype=np.int64))


def _flatten_scores(run: Mapping[Any, Any]) -> FlatRun:
    """``{query: {key: score}}`` as columns, touching each item once from C: keys joined into one string
    buffer, scores through ``np.fromiter`` (pytrec_eval's input shape, often millions of items)."""
    scores_by_query = [scores or {} for scores in run.values()]
    lengths = [len(scores) for scores in scores_by_query]
    n = sum(lengths)
    query_ids = np.array([str(q) for q in run], dtype=object)
    keys = codes.joined_strings(lambda: chain.from_iterable(scores_by_query), n)
    if keys is None:
        keys = np.fromiter(chain.from_iterable(scores_by_query), dtype=object, count=n)
    try:
        score = np.fromiter(
            chain.from_iterable(map(dict.values, scores_by_query))
            if all(type(s) is dict for s in scores_by_query)
            else chain.from_iterable(s.values() for s in scores_by_query),
            dtype=np.float64,
            count=n,
        )
    except (TypeError, ValueError) as err:
        raise DataError(f"a score is not a number ({err})", field="score", hint="scores are numbers") from err
    if np.isnan(score).any():
        raise DataError("a hit has a NaN score", field="score", hint="give every hit a number")
    return FlatRun(query_ids, keys, None, score, False, np.array(lengths, dtype=np.int64), distinct_keys=True)


def _is_numeric(column: pd.Series) -> bool:
    """Whether a column holds numbers already (numpy dtype: int, float, unsigned, bool)."""
    return isinstance(column.dtype, np.dtype) and column.dtype.kind in "fiub"


def _numbers(column: pd.Series, name: str, hint: str) -> np.ndarray:
    """A column as float64; anything non-numeric is a ``DataError`` naming the first bad row."""
    if _is_numeric(column):  # already numbers (NaN stays NaN)
        return column.to_numpy(dtype=np.float64)
    values = pd.to_numeric(column, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
    bad = np.isnan(values) & column.notna().to_numpy()
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise DataError(f"row {row}: {name} {column.iloc[row]!r} is not a number", field=name, hint=hint)
    return values


def flatten_annotations(annotations: AnnotationsInput) -> FlatAnnotations:
    """Annotations as columns; None and blank ids are dropped, ids are stripped, a bare id list is grade 1."""
    if isinstance(annotations, pd.DataFrame):
        return _flatten_annotation_frame(annotations)
    if not isinstance(annotations, Mapping):
        raise DataError(
            f"annotations must be a mapping or a DataFrame, not {type(annotations).__name__}",
            field="annotations",
            hint="pass {query_id: [relevant ids]}, {query_id: {id: grade}} or a DataFrame",
        )
    graded = _flatten_graded_mapping(annotations)
    if graded is not None:
        return graded
    queries: list[str] = []
    keys: list[Any] = []
    grades: list[Any] = []
    for qid, judged in annotations.items():
        if judged is None:
            continue
        if isinstance(judged, Mapping):
            items: Iterable[tuple[Any, Any]] = judged.items()
        elif isinstance(judged, str):
            items = ((judged, 1),)
        else:
            items = ((key, 1) for key in judged)
        for key, grade in items:
            queries.append(str(qid))
            keys.append(key)
            grades.append(grade)
    frame = pd.DataFrame(
        {"query_id": pd.Series(queries, dtype=object), "key": pd.Series(keys, dtype=object), "grade": grades}
    )
    return _flatten_annotation_frame(frame)


def _flatten_graded_mapping(annotations: Mapping[Any, Any]) -> FlatAnnotations | None:
    """``{query: {id: grade}}`` (pytrec_eval's qrels shape) as columns without a Python loop per item;
    None when the mapping has another shape or a grade that is not a plain number (general path)."""
    judged = [(str(qid), grades) for qid, grades in annotations.items() if grades is not None]
    if not all(type(grades) is dict for _, grades in judged):
        return None
    lengths = np.fromiter((len(grades) for _, grades in judged), dtype=np.int64, count=len(judged))
    n = int(lengths.sum())
    keys = codes.joined_strings(lambda: chain.from_iterable(grades for _, grades in judged), n)
    if keys is None:
        return None
    try:
        grade = np.fromiter(
            chain.from_iterable(grades.values() for _, grades in judged), dtype=np.float64, count=n
        )
    except (TypeError, ValueError):
        return None
    if np.isnan(grade).any():
        return None  # the general path names the row
    queries = pa.array([qid for qid, _ in judged], type=pa.large_string())
    query_id = queries.take(pa.array(np.repeat(np.arange(len(judged), dtype=np.int64), lengths)))
    return FlatAnnotations(query_id, keys, grade)


def _flatten_annotation_frame(frame: pd.DataFrame) -> FlatAnnotations:
    for column in ("query_id", "key"):
        if column not in frame.columns:
            raise DataError(
                f"annotations have no {column!r} column", field=column, hint=ANNOTATION_COLUMNS_HINT
            )
    if "grade" in frame.columns:
        grade = _numbers(frame["grade"], "grade", ANNOTATION_COLUMNS_HINT)
        missing = np.isnan(grade)
        if missing.any():
            row = int(np.flatnonzero(missing)[0])
            raise DataError(f"row {row}: missing grade", field="grade", hint="give every judgment a grade")
    else:
        grade = np.ones(len(frame), dtype=np.float64)
    return FlatAnnotations(frame["query_id"], frame["key"], grade)
