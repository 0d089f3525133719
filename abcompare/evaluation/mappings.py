"""The fast path for pytrec_eval's input shape: ``{query: {key: score}}`` runs and ``{query: {id: grade}}``
judgments, often millions of items.

Python dicts are hash tables already, so no hit is hashed again: every run value is read once from C
(``np.fromiter``), every judged id is looked up in its query's run dict once (``map(dict.get, ...)``),
and a judged hit's position is the number of hits of its query that rank above it (a higher score, or
the same score and a key later in byte order, as trec_eval breaks ties). The run's keys are only joined
once, to confirm none needs the stripping every other path applies. Anything out of the ordinary
(other types, keys with whitespace, NaN, non-ASCII keys, many tied scores) returns None and the general
path takes over, so both paths give the same numbers.
"""

from __future__ import annotations

from itertools import chain, repeat
from typing import Any

import numpy as np

from abcompare.evaluation.judged_hits import JudgedHits
from abcompare.ranking import padded_lists, ranked_above

#: Bytes that make a key differ from its stripped form somewhere (ASCII whitespace, incl. 0x1c-0x1f).
_WHITESPACE = b" \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f"
#: Separator of the joined keys; a key holding it (or an empty key) sends the run to the general path.
_SEPARATOR = "\x00"
#: Give up on the fast path when more judged hits than this share tie with another hit of their query.
_MAX_TIED_SHARE = 0.05


def judged_hits_of_mappings(run: Any, annotations: Any) -> JudgedHits | None:
    """The judged hits of a ``{query: {key: score}}`` run under ``{query: {id: grade}}`` judgments, or None
    when the inputs are not plainly of that shape (the general path then handles them)."""
    if type(run) is not dict or type(annotations) is not dict:
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
    judged_score = np.fromiter(
        chain.from_iterable(
            map(d.get, keys, repeat(np.nan, len(keys))) for d, keys in zip(dicts, ann_keys, strict=True)
        ),
        dtype=np.float64,
        count=n_judged,
    )
    hit = ~np.isnan(judged_score)
    rows = np.flatnonzero(hit)
    position = _positions(
        scores, run_lengths, ann_query[rows], judged_score[rows], dicts, ann_keys, lengths, rows
    )
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
    """Judged query ids (non-empty dicts, in order), their id views, counts and grades; None unless every
    id is a clean ASCII string and every grade a number."""
    items = [(q, judged) for q, judged in annotations.items() if judged is not None]
    if not all(type(judged) is dict for _, judged in items):
        return None
    items = [(q, judged) for q, judged in items if judged]
    query_ids = [q if type(q) is str else str(q) for q, _ in items]
    if len(set(query_ids)) != len(query_ids):
        return None
    keys = list(map(dict.keys, (judged for _, judged in items)))
    if not _clean_keys(keys):
        return None
    lengths = np.fromiter(map(len, keys), dtype=np.int64, count=len(keys))
    try:
        grades = np.fromiter(
            chain.from_iterable(judged.values() for _, judged in items),
            dtype=np.float64,
            count=int(lengths.sum()),
        )
    except (TypeError, ValueError):
        return None
    if np.isnan(grades).any():
        return None
    return query_ids, keys, lengths, grades


def _run_lists(
    run: dict[Any, Any], query_ids: list[str]
) -> tuple[list[dict[str, float]], np.ndarray, np.ndarray] | None:
    """The judged queries' lists (in query order), their scores (concatenated) and lengths; None unless the
    run's keys are clean ASCII strings and its scores finite numbers."""
    if not all(type(q) is str for q in run):
        return None
    empty: dict[str, float] = {}
    dicts = [run.get(q, empty) for q in query_ids]
    if not all(type(d) is dict for d in dicts):
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
    """Whether every key of every group is a non-empty ASCII string without whitespace (so stripping it
    would change nothing): one join and one scan, from C."""
    try:
        joined = _SEPARATOR.join(_SEPARATOR.join(group) for group in groups if group)
    except TypeError:
        return False  # a key that is not a string
    n_keys = sum(map(len, groups))
    if n_keys == 0:
        return True
    if not joined.isascii():
        return False
    data, sep = joined.encode("ascii"), _SEPARATOR.encode("ascii")
    if data.count(sep) != n_keys - 1:
        return False  # a key holds the separator
    if not data or data.startswith(sep) or data.endswith(sep) or sep + sep in data:
        return False  # an empty key
    return len(data.translate(None, _WHITESPACE)) == len(data)


def _positions(
    scores: np.ndarray,
    lengths: np.ndarray,
    query: np.ndarray,
    score: np.ndarray,
    dicts: list[dict[str, float]],
    ann_keys: list[Any],
    ann_lengths: np.ndarray,
    rows: np.ndarray,
) -> np.ndarray | None:
    """Each judged hit's 0-based position in its query's list: hits with a higher score, plus hits with
    the same score and a greater key (trec_eval's tie order)."""
    width = int(lengths.max()) if lengths.size else 0
    if width == 0 or lengths.size * width > 2 * scores.size + 1024:
        return None if scores.size else np.zeros(0, dtype=np.int64)
    position, tied = ranked_above(padded_lists(scores, lengths), query, score)
    if tied.any():
        if tied.sum() > _MAX_TIED_SHARE * max(query.size, 1) + 16:
            return None  # heavy ties: the general path orders them faster
        ann_starts = np.concatenate(([0], np.cumsum(ann_lengths)[:-1]))
        keys_of: dict[int, list[str]] = {}
        for i in np.flatnonzero(tied):
            q = int(query[i])
            keys = keys_of.setdefault(q, list(ann_keys[q]))
            key, own_score = keys[int(rows[i] - ann_starts[q])], float(score[i])
            position[i] += sum(1 for other, value in dicts[q].items() if value == own_score and other > key)
    return position
