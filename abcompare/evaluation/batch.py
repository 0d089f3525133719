"""Evaluate a whole run at once: one row of metrics per annotated query, vectorised over queries.

Keys and query ids are factorised to integers, the hits are put in order with one sort, and every measure
is an array operation over all queries. The numbers equal the per-query evaluators' (``RagEvaluator`` for
"ai4j", ``TrecEvaluator`` for "trec"): same operations, same order, same discount table.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from abcompare.errors import AbcompareWarning, ConfigError, DataError
from abcompare.evaluation.gains import discounts
from abcompare.evaluation.inputs import FlatAnnotations, FlatRun, flatten_annotations, flatten_run
from abcompare.evaluation.keys import clean_id
from abcompare.evaluation.measures import COUNT_MEASURE, metric_columns, metric_name, normalise_cutoffs

CONVENTIONS: tuple[str, ...] = ("ai4j", "trec")


@dataclass(frozen=True)
class _Coded:
    """Run and annotations with integer query codes (0..n_queries-1, output order) and key codes."""

    query_ids: np.ndarray  # output index (str), annotation first-seen order
    ann_query: np.ndarray
    ann_key: np.ndarray
    ann_grade: np.ndarray
    run_query: np.ndarray
    run_key: np.ndarray
    run_rank: np.ndarray | None
    run_score: np.ndarray | None
    key_labels: pd.Index  # labels of the run's key codes (annotation-only keys come after them)
    n_keys: int


def evaluate_run(
    run: Any,
    annotations: Any,
    k: int | Iterable[int] = (1, 5, 10),
    convention: str = "ai4j",
    relevance_threshold: float = 1,
) -> pd.DataFrame:
    """Per-query metrics of ``run`` against ``annotations`` at every cutoff in ``k``.

    One row per annotated query (at least one judgment with ``grade >= relevance_threshold``), in the
    order the annotations first list them, index ``query_id``; columns ``precision@k, recall@k, f1@k,
    mrr@k, ndcg@k`` for every k, then ``retrieved_count, relevant_count, true_positive_count@k``.
    ``df.attrs`` holds ``convention`` and ``queries_with_repeated_keys``.
    """
    if convention not in CONVENTIONS:
        raise ConfigError(
            f"unknown convention {convention!r}", field="convention", hint="use 'ai4j' or 'trec'"
        )
    cutoffs = normalise_cutoffs(k)
    coded = _encode(flatten_annotations(annotations), flatten_run(run, convention), relevance_threshold)
    n_queries = len(coded.query_ids)
    # each (query, key) pair keeps its best grade (stripped ids can collide)
    ann_pair = coded.ann_query * coded.n_keys + coded.ann_key
    best = pd.Series(coded.ann_grade).groupby(ann_pair, sort=False).max()
    best_pair, best_grade = best.index.to_numpy(), best.to_numpy(dtype=np.float64)
    relevant_pair = best_grade >= relevance_threshold
    relevant_count = np.bincount(best_pair[relevant_pair] // coded.n_keys, minlength=n_queries)

    order = _order(coded)
    run_query = coded.run_query[order]
    pair = run_query * coded.n_keys + coded.run_key[order]
    repeated = pd.Series(pair).duplicated(keep="first").to_numpy()
    repeated_queries = int(np.unique(run_query[repeated]).size)
    if convention == "trec":
        run_query, pair = run_query[~repeated], pair[~repeated]

    found = pd.Index(best_pair).get_indexer(pair)
    judged = found >= 0
    hit_grade = np.where(judged, best_grade[np.maximum(found, 0)], 0.0)
    hit_relevant = judged & (hit_grade >= relevance_threshold)

    retrieved = np.bincount(run_query, minlength=n_queries)
    starts = np.concatenate(([0], np.cumsum(retrieved)[:-1])).astype(np.int64)
    position = np.arange(run_query.size, dtype=np.int64) - starts[run_query]
    first = _first_relevant_position(run_query, position, hit_relevant, n_queries)

    if convention == "ai4j":
        gain = hit_relevant.astype(np.float64)
        ideal_by_depth = np.concatenate(([0.0], np.cumsum(discounts(max(cutoffs)))))
    else:
        gain = np.where(judged & (hit_grade > 0), hit_grade, 0.0)
        ideal_query, ideal_position, ideal_gain = _ideal_ranking(best_pair, best_grade, coded.n_keys)

    columns: dict[str, np.ndarray] = {}
    for cutoff in cutoffs:
        within = position < cutoff
        true_positives = np.bincount(run_query[within & hit_relevant], minlength=n_queries)
        depth = np.minimum(cutoff, retrieved) if convention == "ai4j" else np.full(n_queries, cutoff)
        precision = _ratio(true_positives, depth)
        recall = _ratio(true_positives, relevant_count)
        total = precision + recall
        f1 = _ratio(2.0 * precision * recall, total)
        mrr = _ratio(np.ones(n_queries), first + 1.0, where=first < cutoff)
        scoring = within & (gain > 0)
        dcg = np.bincount(
            run_query[scoring],
            weights=gain[scoring] * discounts(cutoff)[position[scoring]],
            minlength=n_queries,
        )
        if convention == "ai4j":
            ideal = ideal_by_depth[np.minimum(depth, relevant_count)]
        else:
            top = ideal_position < cutoff
            ideal = np.bincount(
                ideal_query[top],
                weights=ideal_gain[top] * discounts(cutoff)[ideal_position[top]],
                minlength=n_queries,
            )
        columns[metric_name("precision", cutoff)] = precision
        columns[metric_name("recall", cutoff)] = recall
        columns[metric_name("f1", cutoff)] = f1
        columns[metric_name("mrr", cutoff)] = mrr
        columns[metric_name("ndcg", cutoff)] = _ratio(dcg, ideal)
        columns[metric_name(COUNT_MEASURE, cutoff)] = true_positives.astype(np.int64)
    columns["retrieved_count"] = retrieved.astype(np.int64)
    columns["relevant_count"] = relevant_count.astype(np.int64)

    frame = pd.DataFrame(columns, index=pd.Index(coded.query_ids, name="query_id", dtype=object))
    frame = frame[metric_columns(cutoffs)]
    frame.attrs["convention"] = convention
    frame.attrs["queries_with_repeated_keys"] = repeated_queries
    if repeated_queries and convention == "ai4j":
        warnings.warn(
            AbcompareWarning(
                f"{repeated_queries} queries retrieved the same key more than once; the ai4j convention "
                "counts every repeat (recall can exceed 1), the trec convention counts it once"
            ),
            stacklevel=2,
        )
    return frame


def _ratio(numerator: np.ndarray, denominator: np.ndarray, where: np.ndarray | None = None) -> np.ndarray:
    """``numerator / denominator`` as float64; 0 where the denominator is not positive (or not ``where``)."""
    mask = np.asarray(denominator) > 0
    if where is not None:
        mask &= where
    out = np.zeros(mask.shape, dtype=np.float64)
    np.divide(numerator, denominator, out=out, where=mask, dtype=np.float64)
    return out


def _encode(judged: FlatAnnotations, flat: FlatRun, relevance_threshold: float) -> _Coded:
    """Factorise query ids and keys; drop unannotated queries (no judgment at the threshold)."""
    ann_query, query_labels = pd.factorize(judged.query_id)
    has_relevant = np.zeros(len(query_labels), dtype=bool)
    has_relevant[ann_query[judged.grade >= relevance_threshold]] = True
    new_code = np.where(has_relevant, np.cumsum(has_relevant) - 1, -1)
    ann_query = new_code[ann_query]
    ann_keep = ann_query >= 0
    query_ids = np.asarray(query_labels, dtype=object)[has_relevant]

    run_codes, run_labels = pd.factorize(flat.query_id, use_na_sentinel=False)
    run_labels_str = pd.Index([str(label) for label in run_labels], dtype=object)
    to_output = pd.Index(query_ids, dtype=object).get_indexer(run_labels_str)
    run_query = to_output[run_codes] if run_codes.size else np.zeros(0, dtype=np.int64)
    in_scope = run_query >= 0

    key_codes, key_labels = pd.factorize(flat.key, use_na_sentinel=False)
    if not flat.keys_are_clean:
        cleaned = np.array([clean_id(label) for label in key_labels] + [""], dtype=object)[:-1]
        blank = pd.isna(cleaned)
        if blank.any():
            row = int(np.flatnonzero(key_codes == int(np.flatnonzero(blank)[0]))[0])
            raise DataError(
                f"row {row}: a hit has no key",
                field="key",
                hint="every hit needs a key (its stable key, e.g. the document id)",
            )
        merged, key_labels = pd.factorize(cleaned)
        key_codes = merged[key_codes]
    key_labels = pd.Index(key_labels, dtype=object)
    ann_key = key_labels.get_indexer(judged.key[ann_keep])
    unseen = ann_key < 0
    extra = 0
    if unseen.any():
        extra_codes, extra_labels = pd.factorize(judged.key[ann_keep][unseen])
        ann_key[unseen] = len(key_labels) + extra_codes
        extra = len(extra_labels)
    return _Coded(
        query_ids=query_ids,
        ann_query=ann_query[ann_keep].astype(np.int64),
        ann_key=ann_key.astype(np.int64),
        ann_grade=judged.grade[ann_keep],
        run_query=run_query[in_scope].astype(np.int64),
        run_key=key_codes[in_scope].astype(np.int64),
        run_rank=None if flat.rank is None else flat.rank[in_scope],
        run_score=None if flat.score is None else flat.score[in_scope],
        key_labels=key_labels,
        n_keys=max(len(key_labels) + extra, 1),
    )


def _order(coded: _Coded) -> np.ndarray:
    """The one sort: hits grouped by query, then by score (descending, key descending, as trec_eval)
    when scores rule, else by rank; ties and missing ranks keep the given row order."""
    query = coded.run_query
    rank = coded.run_rank if coded.run_rank is not None else np.arange(query.size, dtype=np.float64)
    if coded.run_score is None:
        if query.size == 0 or (np.all(np.diff(query) >= 0) and np.all(_within_query_diff(query, rank) >= 0)):
            return np.arange(query.size)
        return np.lexsort((rank, query))
    score = coded.run_score
    missing = np.isnan(score)
    if missing.any():
        n_queries = int(query.max()) + 1
        missing_count = np.bincount(query[missing], minlength=n_queries)
        total = np.bincount(query, minlength=n_queries)
        partial = (missing_count > 0) & (missing_count < total)
        if partial.any():
            row = int(np.flatnonzero(missing & partial[query])[0])
            raise DataError(
                f"row {row}: a hit has no score while others of its query have one",
                field="score",
                hint="give every hit of a query a score, or none (then rank order is used)",
            )
        score = np.where(missing, -rank, score)  # all-unscored queries keep rank order
    key_order = np.empty(len(coded.key_labels), dtype=np.int64)
    key_order[np.argsort(np.asarray(coded.key_labels, dtype=str), kind="stable")] = np.arange(
        len(coded.key_labels)
    )
    return np.lexsort((-key_order[coded.run_key], -score, query))


def _within_query_diff(query: np.ndarray, rank: np.ndarray) -> np.ndarray:
    """Rank steps between consecutive rows of the same query (for the already-sorted shortcut)."""
    same = query[1:] == query[:-1]
    return np.diff(rank)[same]


def _first_relevant_position(
    query: np.ndarray, position: np.ndarray, relevant: np.ndarray, n_queries: int
) -> np.ndarray:
    """The 0-based position of each query's first relevant hit, +inf when there is none."""
    first = np.full(n_queries, np.inf)
    rel_query, rel_position = query[relevant], position[relevant]
    if rel_query.size:
        leading = np.concatenate(([True], rel_query[1:] != rel_query[:-1]))
        first[rel_query[leading]] = rel_position[leading]
    return first


def _ideal_ranking(
    pair: np.ndarray, gain: np.ndarray, n_keys: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The ideal ranking of every query's positive grades (query, 0-based position, gain), best first."""
    positive = gain > 0
    query, gain = pair[positive] // n_keys, gain[positive]
    order = np.lexsort((-gain, query))
    query, gain = query[order], gain[order]
    counts = np.bincount(query) if query.size else np.zeros(0, dtype=np.int64)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.int64)
    position = np.arange(query.size, dtype=np.int64) - starts[query]
    return query, position, gain
