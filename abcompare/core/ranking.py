"""The order of a ranked list, written once: trec_eval's rule and the forms that apply it.

**The rule.** A query's hits are ordered by score, descending; hits with the same score by key,
descending in byte order (trec_eval's ``strcmp``); a list without scores keeps its rank order. A key
that appears again later in a query's list repeats an earlier hit.

Its forms: :func:`trec_order` orders one query's ``{key: score}`` (the per-query evaluators);
:func:`run_order` orders a whole run at once, with the fast paths that keep a run of millions of hits
cheap (the batch evaluator, the TREC reader); :func:`ranked_above` counts, for a few hits, how many of
their query rank above them (positions without sorting); :func:`repeated_within_queries` finds the
repeats. Shared by the data and evaluation stages, so it imports neither.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from abcompare.core.errors import DataError
from abcompare.core.row_blocks import block_aligned_bounds


def trec_order(scores: Mapping[str, float]) -> list[str]:
    """One query's keys in trec_eval's order: score descending, then key descending (byte order).

    >>> trec_order({"a": 1.0, "c": 1.0, "b": 2.0})
    ['b', 'c', 'a']
    """
    for key, score in scores.items():
        if score is None or math.isnan(float(score)):
            raise DataError(
                f"hit {key!r} has no score", field="score", hint="give every hit of a query a number"
            )
    return sorted(scores, key=lambda key: (float(scores[key]), key), reverse=True)  # str order = byte order


def first_occurrences(keys: Iterable[str]) -> list[str]:
    """The keys with repeats removed, each kept at its first rank (later hits move up)."""
    return list(dict.fromkeys(keys))


@dataclass(frozen=True)
class Placement:
    """Where a few hits stand in their lists (see :func:`place_in_lists`).

    ``higher``: how many hits of its list have a higher score; ``tied``: whether another hit has the same
    score; ``tie_pairs``: ``(hit, column)`` for every hit of a tied hit's list with the same score (the
    hit itself included), the column counted in the list as given. trec_eval ranks the tied hits with a
    greater key above a tied hit too: the caller, who holds the keys, adds those.
    """

    higher: np.ndarray
    tied: np.ndarray
    tie_pairs: tuple[np.ndarray, np.ndarray]


def place_in_lists(padded: np.ndarray, row: np.ndarray, score: np.ndarray) -> Placement:
    """Place hits of score ``score`` in the lists ``padded[row]`` (one list's scores per row of a matrix,
    NaN after its end) without sorting the lists: each hit is found by a binary search of its list. Lists
    already in descending order, as most runs are, are searched as they are; others are put in order
    first, row by row."""
    width = padded.shape[1] if padded.ndim == 2 else 0
    if row.size == 0 or width == 0:
        empty = np.zeros(0, dtype=np.int64)
        return Placement(np.zeros(row.size, dtype=np.int64), np.zeros(row.size, dtype=bool), (empty, empty))
    columns = None
    if width > 1 and bool((padded[:, 1:] > padded[:, :-1]).any()):
        columns = np.argsort(-padded, axis=1, kind="stable")  # NaN (after each list's end) stays last
        padded = np.take_along_axis(padded, columns, axis=1)
    flat = padded.reshape(-1)
    base = row.astype(np.int64) * width
    higher = _first_not(flat, base, width, score, strict=True)
    # the hit itself stands among the equal scores starting at ``higher``: tied when the next one is equal
    tied = (higher + 1 < width) & (flat[base + np.minimum(higher + 1, width - 1)] == score)
    hit = np.flatnonzero(tied)
    end = _first_not(flat, base[hit], width, score[hit], strict=False)
    sizes = end - higher[hit]
    pair_hit = np.repeat(hit, sizes)
    column = np.arange(pair_hit.size, dtype=np.int64) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    column += higher[pair_hit]
    if columns is not None:
        column = columns.reshape(-1)[base[pair_hit] + column]
    return Placement(higher, tied, (pair_hit, column))


def _first_not(flat: np.ndarray, base: np.ndarray, width: int, score: np.ndarray, strict: bool) -> np.ndarray:
    """In descending rows of ``width`` starting at ``base`` of ``flat``: the first column whose value is not
    above ``score`` (``strict``) or not at least ``score``; NaN never is. A vectorised binary search."""
    low = np.zeros(base.size, dtype=np.int64)
    high = np.full(base.size, width, dtype=np.int64)
    for _ in range(width.bit_length()):
        active = low < high
        middle = (low + high) >> 1
        value = flat[base + np.minimum(middle, width - 1)]
        ahead = value > score if strict else value >= score
        low = np.where(active & ahead, middle + 1, low)
        high = np.where(active & ~ahead, middle, high)
    return low


def ranked_above(padded: np.ndarray, row: np.ndarray, score: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For hits of score ``score`` in the lists ``padded[row]`` (NaN after each list's end): how many hits
    of their list have a higher score, and whether another hit ties with them (:func:`place_in_lists`)."""
    placement = place_in_lists(padded, row, score)
    return placement.higher, placement.tied


def padded_lists(score: np.ndarray, lengths: np.ndarray, fill: float = np.nan) -> np.ndarray:
    """Consecutive lists of the given lengths as rows of a (lists x longest) matrix, ``fill`` after each
    list's end (NaN: never above nor equal to a score); a view when all lists are equally long."""
    width = int(lengths.max()) if lengths.size else 0
    if lengths.size * width == score.size:
        return score.reshape(lengths.size, width)
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1])).astype(np.int64)
    target = np.repeat(np.arange(lengths.size, dtype=np.int64) * width - starts, lengths)
    target += np.arange(score.size, dtype=np.int64)
    padded = np.full(lengths.size * width, fill)
    padded[target] = score
    return padded.reshape(lengths.size, width)


_IDENTITY_CHUNK = 16_384


def key_identity(query: np.ndarray, keys: pa.Array) -> np.ndarray:
    """An integer per hit, equal for two hits of one query exactly when their keys are equal; rows are
    grouped by query. Hashed in query-aligned chunks (small, in-cache hash tables, much faster than one
    table over millions of keys), on Arrow's CPU count of threads (the hashing releases the GIL)."""
    from concurrent.futures import ThreadPoolExecutor

    identity = np.empty(query.size, dtype=np.int64)
    bounds = block_aligned_bounds(query, _IDENTITY_CHUNK)

    def fill(low: int, high: int) -> None:  # writes rows low:high only, so chunks run in parallel
        encoded = pc.dictionary_encode(keys.slice(low, high - low)).indices
        identity[low:high] = encoded.to_numpy(zero_copy_only=False)

    with ThreadPoolExecutor(max_workers=max(1, pa.cpu_count())) as pool:
        list(pool.map(fill, bounds[:-1], bounds[1:]))
    return identity


def repeated_keys(query: np.ndarray, keys: pa.Array) -> np.ndarray:
    """:func:`repeated_within_queries` of :func:`key_identity` at the cost of the hashing alone: rows
    whose key appeared earlier in their query (rows grouped by query). Each query-aligned chunk is hashed
    once; a chunk with as many distinct keys as rows holds no repeat, and in the others only the rows
    whose key occurs more than once in the chunk are looked at."""
    from concurrent.futures import ThreadPoolExecutor

    repeated = np.zeros(query.size, dtype=bool)
    bounds = block_aligned_bounds(query, _IDENTITY_CHUNK)

    def fill(low: int, high: int) -> None:  # writes rows low:high only, so chunks run in parallel
        encoded = pc.dictionary_encode(keys.slice(low, high - low))
        if len(encoded.dictionary) < high - low:
            codes = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
            repeated[low:high] = repeats_among(query[low:high], codes)

    with ThreadPoolExecutor(max_workers=max(1, pa.cpu_count())) as pool:
        list(pool.map(fill, bounds[:-1], bounds[1:]))
    return repeated


def repeats_among(query: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """Rows whose (query, code) pair appeared in an earlier row; only rows whose code occurs more than once
    are compared (few, when repeats are rare)."""
    out = np.zeros(codes.size, dtype=bool)
    if codes.size < 2:
        return out
    shared = np.flatnonzero(np.bincount(codes)[codes] > 1)
    if shared.size:
        pair = query[shared] * (int(codes.max()) + 1) + codes[shared]
        out[shared] = pd.Series(pair).duplicated(keep="first").to_numpy()
    return out


def _descending_at(labels: pa.Array, first: np.ndarray, second: np.ndarray) -> bool:
    """Whether ``labels[first[i]] >= labels[second[i]]`` for every i (byte order): a presortedness check."""
    if first.size == 0:
        return True
    left, right = labels.take(pa.array(first)), labels.take(pa.array(second))
    return bool(pc.all(pc.greater_equal(left, right)).as_py())


def run_order(
    query: np.ndarray, score: np.ndarray | None, rank: np.ndarray | None, keys: pa.Array
) -> np.ndarray:
    """The one sort of a run: hits grouped by query (ascending code), then by score (descending, key
    descending, as trec_eval) when scores rule, else by rank; ties and missing ranks keep the given row
    order. A run whose queries come in blocks (as the data layer writes them) only has its blocks
    reordered, and a run already in order within its blocks is not sorted at all.

    ``query`` holds each hit's query code, ``keys`` its key (an Arrow string array); a query whose
    scores are all NaN is ordered by rank, one scored only in part is a ``DataError``.
    """
    order = reordering(query, score, rank, keys)
    return np.arange(query.size) if order is None else order


def reordering(
    query: np.ndarray, score: np.ndarray | None, rank: np.ndarray | None, keys: pa.Array
) -> np.ndarray | None:
    """:func:`run_order`, or None when the rows are in that order already (no row order is built: a run
    of millions of hits read in order costs a few comparisons per hit)."""
    base = _block_order(query)
    if base is _SCATTERED:  # a query's hits are not contiguous: one global sort
        return _global_order(query, score, rank, keys)
    blocked = query if base is None else query[base]
    same = blocked[1:] == blocked[:-1]
    if score is None:
        if rank is None:
            return base
        ranked = rank if base is None else rank[base]
        if np.all((ranked[1:] >= ranked[:-1]) | ~same):
            return base
        return _global_order(query, score, rank, keys)
    effective = _scores_or_rank_order(query, score, rank)
    ordered = effective if base is None else effective[base]
    tied = _ties_in_score_order(ordered, same)
    if tied is not None:  # in score order: only ties may need reordering
        tie = np.flatnonzero(tied)
        first, second = (tie, tie + 1) if base is None else (base[tie], base[tie + 1])
        if _descending_at(keys, first, second):
            return base
        rows = np.arange(query.size) if base is None else base
        return _break_ties_by_key(rows, query, effective, keys, tied=tied)
    within = _order_within_blocks(blocked, ordered, keys, base)
    if within is None:
        return _global_order(query, score, rank, keys)
    return within if base is None else base[within]


def lists_in_order(score: np.ndarray, lengths: np.ndarray, keys: pa.Array, most_ties: int) -> bool:
    """Whether consecutive lists of the given lengths (``score`` and ``keys`` one per hit) are each in
    trec_eval's order already, so a hit's position is its place in its list. A comparison per hit and a
    key comparison per tie; False without comparing keys when more than ``most_ties`` hits tie (the
    caller has a cheaper way then)."""
    if score.size < 2:
        return True
    same = np.ones(score.size - 1, dtype=bool)  # neighbours in one list
    boundary = np.cumsum(lengths)[:-1]  # the first hit of every list but the first
    same[boundary[(boundary > 0) & (boundary < score.size)] - 1] = False
    tied = _ties_in_score_order(score, same)
    if tied is None:
        return False
    tie = np.flatnonzero(tied)
    return tie.size <= most_ties and _descending_at(keys, tie, tie + 1)


def _ties_in_score_order(score: np.ndarray, same: np.ndarray) -> np.ndarray | None:
    """Which neighbours of one list (``same``) tie on score, or None when some list is not in descending
    score order."""
    if not np.all((score[1:] <= score[:-1]) | ~same):
        return None
    return same & (score[1:] == score[:-1])


_SCATTERED = np.zeros(0, dtype=np.int64)  # _block_order's answer when a query's hits are not contiguous


def _block_order(query: np.ndarray) -> np.ndarray | None:
    """The row order that puts each query's contiguous block of hits in ascending query code; None when
    they already are; ``_SCATTERED`` when some query's hits are not contiguous."""
    n = query.size
    block_start = (
        np.concatenate(([0], np.flatnonzero(query[1:] != query[:-1]) + 1)) if n else np.zeros(0, int)
    )
    block_query = query[block_start]
    if np.all(block_query[1:] > block_query[:-1]):
        return None
    if np.unique(block_query).size != block_query.size:
        return _SCATTERED
    lengths = np.diff(np.append(block_start, n))
    by_code = np.argsort(block_query)
    new_lengths = lengths[by_code]
    new_starts = np.concatenate(([0], np.cumsum(new_lengths)[:-1]))
    return np.repeat(block_start[by_code] - new_starts, new_lengths) + np.arange(n)


def _global_order(
    query: np.ndarray, score: np.ndarray | None, rank: np.ndarray | None, keys: pa.Array
) -> np.ndarray:
    """Sort every hit at once: by query, then rank (stable), or score descending and key descending."""
    if score is None:
        if rank is None:
            return np.argsort(query, kind="stable")
        _, rank_code = np.unique(rank, return_inverse=True)
        return np.argsort(query * (int(rank_code.max()) + 1) + rank_code, kind="stable")
    score = _scores_or_rank_order(query, score, rank)
    _, score_code = np.unique(-score, return_inverse=True)
    order = np.argsort(query * (int(score_code.max()) + 1) + score_code, kind="stable")
    return _break_ties_by_key(order, query, score, keys)


def _break_ties_by_key(
    order: np.ndarray,
    query: np.ndarray,
    score: np.ndarray,
    keys: pa.Array,
    rows: np.ndarray | None = None,
    tied: np.ndarray | None = None,
) -> np.ndarray:
    """Within each run of hits that tie on (query, score), put keys in descending byte order, as
    trec_eval does; ``rows`` maps the hits to their rows in ``keys`` (None: the same rows); ``tied``
    marks the neighbours in ``order`` that tie, when the caller has it. Only the tied hits are touched:
    one Arrow sort of their keys, by group."""
    if tied is None:
        ordered_query, ordered_score = query[order], score[order]
        tied = (ordered_query[1:] == ordered_query[:-1]) & (ordered_score[1:] == ordered_score[:-1])
    tie = np.flatnonzero(tied)
    if tie.size == 0:
        return order
    # the tied hits: both sides of every tie; a group starts where the hit before it does not tie
    in_group = np.zeros(order.size, dtype=bool)
    in_group[tie] = True
    in_group[tie + 1] = True
    position = np.flatnonzero(in_group)
    continues = np.zeros(order.size, dtype=bool)
    continues[tie + 1] = True
    group = np.cumsum(~continues[position])
    hits = order[position] if rows is None else rows[order[position]]
    tied_keys = keys.take(pa.array(hits))
    by_key = [("group", "ascending"), ("key", "descending")]  # stable: equal keys (repeats) keep their order
    table = pa.table({"group": group, "key": tied_keys})
    within = pc.sort_indices(table, sort_keys=by_key).to_numpy(zero_copy_only=False)
    order = order.copy()
    order[position] = order[position][within]
    return order


def _padded(values: np.ndarray, query: np.ndarray, lengths: np.ndarray, width: int, fill) -> np.ndarray:
    """Rows grouped by query as a (queries x width) matrix, each block left-aligned, ``fill`` after it."""
    if lengths.size * width == values.size:
        return values.reshape(lengths.size, width)  # every query has ``width`` hits: a view, no scatter
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    flat = np.arange(values.size) - starts[query] + query * width
    padded = np.full(lengths.size * width, fill, dtype=values.dtype)
    padded[flat] = values
    return padded.reshape(lengths.size, width)


def repeated_within_queries(query: np.ndarray, pair: np.ndarray) -> np.ndarray:
    """Rows whose key (``pair``: equal within a query exactly when keys are) appeared earlier in their
    query; rows are grouped by query. Each query's block is
    sorted as one row of a padded matrix (small in-cache sorts) unless padding would cost too much."""
    if query.size == 0:
        return np.zeros(0, dtype=bool)
    lengths = np.bincount(query)
    width = int(lengths.max())
    if lengths.size * width > 2 * query.size + 1024:
        combined = query * (int(pair.max()) + 1) + pair
        return pd.Series(combined).duplicated(keep="first").to_numpy()
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    padded = _padded(pair, query, lengths, width, np.iinfo(np.int64).max)
    repeated = np.zeros(query.size, dtype=bool)
    ranked = np.sort(padded, axis=1)  # first find the queries with a repeat (usually none): a plain sort
    equal = (ranked[:, 1:] == ranked[:, :-1]) & (ranked[:, 1:] != np.iinfo(np.int64).max)
    rows = np.flatnonzero(equal.any(axis=1))
    del ranked, equal
    if rows.size == 0:
        return repeated
    within = np.argsort(padded[rows], axis=1, kind="stable")  # equal keys keep their rank order
    ranked = np.take_along_axis(padded[rows], within, axis=1)
    later = np.zeros(ranked.shape, dtype=bool)
    later[:, 1:] = (ranked[:, 1:] == ranked[:, :-1]) & (ranked[:, 1:] != np.iinfo(np.int64).max)
    repeated[(starts[rows, None] + within)[later]] = True
    return repeated


def _order_within_blocks(
    query: np.ndarray, score: np.ndarray, keys: pa.Array, rows: np.ndarray | None
) -> np.ndarray | None:
    """Score order for a run grouped by query, sorting every query's block as one row of a padded matrix
    (many small in-cache sorts instead of one big one); None when padding would cost too much memory."""
    lengths = np.bincount(query)
    width = int(lengths.max())
    if lengths.size * width > 2 * query.size + 1024:
        return None
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    neg_score = _padded(-score, query, lengths, width, np.inf)
    within = np.argsort(neg_score, axis=1, kind="stable")
    order = (starts[:, None] + within)[np.arange(width) < lengths[:, None]]
    return _break_ties_by_key(order, query, score, keys, rows)


def _scores_or_rank_order(query: np.ndarray, score: np.ndarray, rank: np.ndarray | None) -> np.ndarray:
    """The scores, with queries that have none ordered by rank instead; a query scored only in part is an
    error (its order would be a guess)."""
    missing = np.isnan(score)
    if not missing.any():
        return score
    n_queries = int(query.max()) + 1
    missing_count = np.bincount(query[missing], minlength=n_queries)
    partial = (missing_count > 0) & (missing_count < np.bincount(query, minlength=n_queries))
    if partial.any():
        row = int(np.flatnonzero(missing & partial[query])[0])
        raise DataError(
            f"row {row}: a hit has no score while others of its query have one",
            field="score",
            hint="give every hit of a query a score, or none (then rank order is used)",
        )
    if rank is None:
        rank = np.arange(query.size, dtype=np.float64)
    return np.where(missing, -rank, score)
