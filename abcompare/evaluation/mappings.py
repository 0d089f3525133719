"""The fast path for pytrec_eval's input shape: ``{query: {key: score}}`` runs and ``{query: {id: grade}}``
judgments, often millions of items.

Python dicts are hash tables already, so no hit is hashed again: every run value is read once from C
(``np.fromiter``), every judged id is looked up in its query's run dict once (``map(dict.get, ...)``),
and a judged hit's position is the number of hits of its query that rank above it (a higher score, or
the same score and a key later in byte order, as trec_eval breaks ties). The run's keys are only joined
once, to confirm none needs the stripping every other path applies; tied judged hits compare their keys
with those of the hits they tie with, pair by pair. Anything out of the ordinary (other types, keys with
whitespace or control characters, NaN, non-ASCII keys) returns None and the general path takes over, so
both paths give the same numbers.
"""

from __future__ import annotations

import operator
from itertools import chain, compress, repeat
from typing import Any

import numpy as np

from abcompare.core.ranking import padded_lists, place_in_lists
from abcompare.evaluation.inputs import AnnotationsInput, RunInput
from abcompare.evaluation.judged_hits import JudgedHits


def judged_hits_of_mappings(run: RunInput, annotations: AnnotationsInput) -> JudgedHits | None:
    """The judged hits of a ``{query: {key: score}}`` run under ``{query: {id: grade}}`` judgments, or None
    when the inputs are not plainly of that shape (the general path then handles them)."""
    if not isinstance(run, dict) or not isinstance(annotations, dict):  # dict subclasses too (defaultdict)
        return None
    judged = _judgments(annotations)
    if judged is None:
        return None
    query_ids, ann_keys, lengths, grades = judged
    lists = _run_lists(run, query_ids)
    if lists is None:
        return None
    dicts, scores, run_lengths = lists
    n_queries, n_judged = len(query_ids), int(lengths.sum())
    ann_query = np.repeat(np.arange(n_queries, dtype=np.int64), lengths)
    # the run score of every judged id (NaN: the query's list does not hold it)
    lookups = map(map, map(operator.attrgetter("get"), dicts), ann_keys, repeat(repeat(np.nan)))
    judged_score = np.fromiter(chain.from_iterable(lookups), dtype=np.float64, count=n_judged)
    hit = ~np.isnan(judged_score)
    rows = np.flatnonzero(hit)
    judged_keys = list(chain.from_iterable(ann_keys))
    position = _positions(scores, run_lengths, ann_query[rows], judged_score[rows], dicts, judged_keys, rows)
    if position is None:
        return None
    order = np.lexsort((position, ann_query[rows]))
    n_ids = max(n_judged, 1)
    best_pair = ann_query * n_ids + np.arange(n_judged, dtype=np.int64)  # ids are unique within a query
    return JudgedHits(
        query_ids=np.array(query_ids, dtype=object),
        n_ids=n_ids,
        best_pair=best_pair,
        best_grade=grades,
        retrieved=run_lengths,
        query=ann_query[rows][order],
        position=position[order],
        grade=grades[rows][order],
        repeated_queries=0,
    )


def _judgments(annotations: dict[Any, Any]) -> tuple[list[str], list[Any], np.ndarray, np.ndarray] | None:
    """Judged query ids (non-empty dicts, in order), their ``{id: grade}`` dicts, counts and grades; None
    unless every id is a clean ASCII string and every grade a number. No object is built per query that
    outlives a step (a list of 100k fresh tuples or views wakes the garbage collector, which then walks
    every dict of the run)."""
    judged = list(annotations.values())
    if not set(map(type, judged)) <= {dict, type(None)}:
        return None
    kept = list(map(bool, judged))  # None and {} are dropped
    groups = list(compress(judged, kept))
    query_ids = [q if type(q) is str else str(q) for q in compress(annotations, kept)]
    if len(set(query_ids)) != len(query_ids):
        return None
    if not _clean_keys(groups):
        return None
    lengths = np.fromiter(map(len, groups), dtype=np.int64, count=len(groups))
    try:
        grades = np.fromiter(
            chain.from_iterable(map(dict.values, groups)), dtype=np.float64, count=int(lengths.sum())
        )
    except (TypeError, ValueError):
        return None
    if np.isnan(grades).any():
        return None
    return query_ids, groups, lengths, grades


def _run_lists(
    run: dict[Any, Any], query_ids: list[str]
) -> tuple[list[dict[str, float]], np.ndarray, np.ndarray] | None:
    """The judged queries' lists (in query order), their scores (concatenated) and lengths; None unless the
    run's keys are clean ASCII strings and its scores finite numbers."""
    if not set(map(type, run)) <= {str}:
        return None
    empty: dict[str, float] = {}
    dicts = list(map(run.get, query_ids, repeat(empty)))
    if not set(map(type, dicts)) <= {dict}:
        return None  # None or another mapping type: the general path
    if not _clean_keys(dicts):
        return None
    lengths = np.fromiter(map(len, dicts), dtype=np.int64, count=len(dicts))
    try:
        scores = np.fromiter(
            chain.from_iterable(map(dict.values, dicts)), dtype=np.float64, count=int(lengths.sum())
        )
    except (TypeError, ValueError):
        return None
    if not np.isfinite(scores).all():
        return None
    return dicts, scores, lengths


def _clean_keys(groups: list[Any]) -> bool:
    """Whether every key of every group is a non-empty ASCII string without whitespace or any other control
    character (so stripping it would change nothing): one join, one scan of its bytes, and one hashed
    look-up of the empty string per group, all from C."""
    try:
        joined = "".join(map("".join, groups))
    except TypeError:
        return False  # a key that is not a string
    if not joined.isascii():
        return False
    if any(map(operator.contains, groups, repeat(""))):
        return False  # an empty key
    data = np.frombuffer(joined.encode("ascii"), dtype=np.uint8)
    return data.size == 0 or int(data.min()) > 0x20  # 0x00-0x20: control characters and the space


def _positions(
    scores: np.ndarray,
    lengths: np.ndarray,
    query: np.ndarray,
    score: np.ndarray,
    dicts: list[dict[str, float]],
    judged_keys: list[str],
    rows: np.ndarray,
) -> np.ndarray | None:
    """Each judged hit's 0-based position in its query's list: hits with a higher score, plus hits with
    the same score and a greater key (trec_eval's tie order). ``rows`` index the hits' ids in
    ``judged_keys``."""
    width = int(lengths.max()) if lengths.size else 0
    if width == 0 or lengths.size * width > 2 * scores.size + 1024:
        return None if scores.size else np.zeros(0, dtype=np.int64)
    placement = place_in_lists(padded_lists(scores, lengths), query, score)
    position = placement.higher
    hit, column = placement.tie_pairs
    if hit.size:  # tied hits: add the hits of the same score with a greater key (trec_eval's tie order)
        tie_query = query[hit]
        lists = np.unique(tie_query)  # only the lists holding a tied judged hit are listed
        list_start = np.zeros(lengths.size, dtype=np.int64)
        list_start[lists] = np.cumsum(lengths[lists]) - lengths[lists]
        listed = list(chain.from_iterable(map(dicts.__getitem__, lists.tolist())))
        others = (list_start[tie_query] + column).tolist()
        greater = np.fromiter(
            map(
                operator.gt, map(listed.__getitem__, others), map(judged_keys.__getitem__, rows[hit].tolist())
            ),
            dtype=bool,
            count=len(others),
        )
        position += np.bincount(hit[greater], minlength=position.size)
    return position
