"""Evaluate a whole run at once: one row of metrics per annotated query, vectorised over queries.

Keys and query ids are factorised to integers, the hits are put in order with one sort, and every measure
is an array operation over all queries. The numbers equal the per-query evaluators' (``RagEvaluator`` for
"ai4j", ``TrecEvaluator`` for "trec"): same operations, same order, same discount table.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from abcompare.core.errors import AbcompareWarning, ConfigError, DataError
from abcompare.core.ranking import (
    lists_in_order,
    padded_lists,
    place_in_lists,
    repeated_within_queries,
    repeats_among,
    run_order,
)
from abcompare.core.row_blocks import block_aligned_bounds, bounds_between_blocks
from abcompare.evaluation import codes
from abcompare.evaluation.convention import Convention, ideal_ranking, ratio_or_zero
from abcompare.evaluation.gains import discounts
from abcompare.evaluation.inputs import (
    ANNOTATION_COLUMNS_HINT,
    RUN_COLUMNS_HINT,
    AnnotationsInput,
    FlatAnnotations,
    FlatRun,
    RunInput,
    flatten_annotations,
    flatten_run,
)
from abcompare.evaluation.judged_hits import JudgedHits
from abcompare.evaluation.judgments import UNJUDGED_POLICIES, best_grades, evaluated_queries, is_relevant
from abcompare.evaluation.mappings import judged_hits_of_mappings
from abcompare.evaluation.measures import (
    COUNT_MEASURE,
    JUDGED_MEASURE,
    metric_name,
    normalise_cutoffs,
    per_query_columns,
)


@dataclass(frozen=True)
class _Coded:
    """Run and annotations with integer query codes (0..n_queries-1, output order) and annotated-id codes."""

    query_ids: np.ndarray  # output index (str), annotation first-seen order
    ann_query: np.ndarray
    ann_key: np.ndarray  # code of the (stripped) annotated id, 0..n_ann_keys-1
    ann_grade: np.ndarray
    n_ann_keys: int
    run_blocks: tuple[np.ndarray, np.ndarray]  # the run's blocks of one query: (query code, length)
    run_keys: pa.Array  # the hits' keys (stripped), as strings
    ann_key_labels: pa.Array  # the annotated ids (stripped), by code
    run_rank: np.ndarray | None
    run_score: np.ndarray | None
    distinct_keys: bool = False  # no key repeats within a query (so the repeat check is skipped)

    @functools.cached_property
    def run_query(self) -> np.ndarray:
        """Each hit's query code (expanded from the blocks only when a path needs one per hit)."""
        block_query, lengths = self.run_blocks
        return np.repeat(block_query, lengths)


def evaluate_run(
    run: RunInput,
    annotations: AnnotationsInput,
    k: int | Iterable[int] = (1, 5, 10),
    convention: str = "ai4j",
    relevance_threshold: float = 1,
    unjudged: str = "nonrelevant",
) -> pd.DataFrame:
    """Per-query metrics of ``run`` against ``annotations`` at every cutoff in ``k``, vectorised.

    Parameters
    ----------
    run : mapping or DataFrame
        ``{query: [hits]}`` (``RagHit``, dicts of hit fields or key strings, best first),
        ``{query: {key: score}}`` (ranked by score, ties as trec_eval), or a run table
        (``query_id, rank, key, score``).
    annotations : mapping or DataFrame
        ``{query: [relevant ids]}`` (grade 1), ``{query: {id: grade}}``, or ``query_id, key, grade``.
    k : int or iterable of int
        The cutoffs.
    convention : {"ai4j", "trec"}
        ``ai4j``: ai4j's ``RagEvaluator`` exactly (binary gains, repeats counted, hits as given);
        ``trec``: trec_eval's definitions (graded nDCG, repeats once, score order).
    relevance_threshold : float
        The grade from which an annotated id counts as relevant in the binary measures.
    unjudged : {"nonrelevant", "condensed"}
        Unjudged hits count as non-relevant, or are removed before scoring (Sakai 2007; trec_eval ``-J``).

    Returns
    -------
    pandas.DataFrame
        One row per judged query (any judgment, of any grade: :mod:`abcompare.evaluation.judgments`), in
        the order the annotations first list them, index ``query_id``; columns ``precision@k, recall@k,
        f1@k, mrr@k, ndcg@k`` and ``judged@k`` for every k, then ``retrieved_count, relevant_count,
        judged_count, true_positive_count@k``. ``judged@k`` and the counts describe the list as returned.
        ``df.attrs`` holds ``convention``, ``unjudged`` and ``queries_with_repeated_keys``.

    References
    ----------
    trec_eval, https://github.com/usnistgov/trec_eval (the ``trec`` convention; equal to it to 1e-9).
    T. Sakai, "Alternatives to Bpref", SIGIR 2007 (condensed lists).

    Examples
    --------
    >>> frame = evaluate_run({"q": ["a", "b", "c", "d"]}, {"q": ["b", "d"]}, k=4)
    >>> frame.loc["q", ["precision@4", "recall@4", "mrr@4"]].tolist()
    [0.5, 1.0, 0.5]
    >>> round(float(frame.loc["q", "ndcg@4"]), 4)
    0.6509
    """
    rules = Convention.named(convention)
    _check_unjudged(unjudged)
    cutoffs = normalise_cutoffs(k)
    judged = judged_hits_of_mappings(run, annotations)
    if judged is None:
        judged = _judged_hits(run, annotations, convention)
    n_queries = len(judged.query_ids)
    n_ids, best_pair, best_grade = judged.n_ids, judged.best_pair, judged.best_grade
    relevant_pair = is_relevant(best_grade, relevance_threshold)
    relevant_count = np.bincount(best_pair[relevant_pair] // n_ids, minlength=n_queries)
    retrieved = judged.retrieved
    judged_query, judged_position, judged_grade = judged.query, judged.position, judged.grade
    judged_count = np.bincount(judged_query, minlength=n_queries)
    judged_at = {
        cutoff: ratio_or_zero(
            np.bincount(judged_query[judged_position < cutoff], minlength=n_queries),
            np.minimum(cutoff, retrieved),
        )
        for cutoff in cutoffs
    }
    if unjudged == "condensed":  # Sakai (2007): the metrics see the judged hits only, ranks closed up
        retrieved_in_list = judged_count
        judged_position = _positions(judged_query, judged_count)
    else:
        retrieved_in_list = retrieved
    relevant = is_relevant(judged_grade, relevance_threshold)
    # the hits that carry a gain: the relevant ones (ai4j), every positive grade (trec)
    scored = relevant if rules.binary else judged_grade > 0
    hits = _ScoredHits(
        first=_first_relevant_position(judged_query[relevant], judged_position[relevant], n_queries),
        rel_query=judged_query[relevant],
        rel_position=judged_position[relevant],
        gain_query=judged_query[scored],
        gain_position=judged_position[scored],
        gain=rules.gain(judged_grade[scored], relevant[scored]),
        ideal=ideal_ranking(best_pair // n_ids, best_grade),
    )
    columns: dict[str, np.ndarray] = {}
    for cutoff in cutoffs:
        columns.update(_columns_at(cutoff, rules, hits, retrieved_in_list, relevant_count, judged_at[cutoff]))
    columns["retrieved_count"] = retrieved.astype(np.int64)
    columns["relevant_count"] = relevant_count.astype(np.int64)
    columns["judged_count"] = judged_count.astype(np.int64)

    return _metrics_frame(columns, judged, cutoffs, convention, unjudged)


@dataclass(frozen=True)
class _ScoredHits:
    """What the measures read of the judged hits: each query's first relevant position, the relevant hits'
    (query, position), the gain-carrying hits' (query, position, gain) and each query's ideal ranking."""

    first: np.ndarray
    rel_query: np.ndarray
    rel_position: np.ndarray
    gain_query: np.ndarray
    gain_position: np.ndarray
    gain: np.ndarray
    ideal: tuple[np.ndarray, np.ndarray, np.ndarray]


def _columns_at(
    cutoff: int,
    rules: Convention,
    hits: _ScoredHits,
    retrieved: np.ndarray,
    relevant_count: np.ndarray,
    judged_at: np.ndarray,
) -> dict[str, np.ndarray]:
    """Every measure's column at ``cutoff``, then ``judged_at`` and the true positives, in table order."""
    n_queries, first = len(relevant_count), hits.first
    true_positives = np.bincount(hits.rel_query[hits.rel_position < cutoff], minlength=n_queries)
    depth = rules.depth(cutoff, retrieved)
    precision = ratio_or_zero(true_positives, depth)
    recall = ratio_or_zero(true_positives, relevant_count)
    total = precision + recall
    f1 = ratio_or_zero(2.0 * precision * recall, total)
    mrr = ratio_or_zero(np.ones(n_queries), first + 1.0, where=first < cutoff)
    scoring = hits.gain_position < cutoff
    dcg = np.bincount(
        hits.gain_query[scoring],
        weights=hits.gain[scoring] * discounts(cutoff)[hits.gain_position[scoring]],
        minlength=n_queries,
    )
    ideal_dcg = rules.ideal_dcg(cutoff, depth, relevant_count, hits.ideal, n_queries)
    return {
        metric_name("precision", cutoff): precision,
        metric_name("recall", cutoff): recall,
        metric_name("f1", cutoff): f1,
        metric_name("mrr", cutoff): mrr,
        metric_name("ndcg", cutoff): ratio_or_zero(dcg, ideal_dcg),
        metric_name(JUDGED_MEASURE, cutoff): judged_at,
        metric_name(COUNT_MEASURE, cutoff): true_positives.astype(np.int64),
    }


def _check_unjudged(unjudged: str) -> None:
    if unjudged not in UNJUDGED_POLICIES:
        raise ConfigError(
            f"unknown unjudged policy {unjudged!r}",
            field="unjudged",
            hint=f"use one of {', '.join(UNJUDGED_POLICIES)}",
        )


def _metrics_frame(
    columns: dict[str, np.ndarray],
    judged: JudgedHits,
    cutoffs: tuple[int, ...],
    convention: str,
    unjudged: str,
) -> pd.DataFrame:
    """The per-query metrics table from its columns, in the documented order, with its settings in
    ``attrs``; ai4j's counting of a repeated key is said once, as a warning."""
    repeated_queries = judged.repeated_queries
    frame = pd.DataFrame(columns, index=pd.Index(judged.query_ids, name="query_id", dtype=object))
    frame = frame[per_query_columns(cutoffs)]
    frame.attrs["convention"] = convention
    frame.attrs["unjudged"] = unjudged
    frame.attrs["queries_with_repeated_keys"] = repeated_queries
    if repeated_queries and convention == "ai4j":
        warnings.warn(
            AbcompareWarning(
                f"{repeated_queries} queries retrieved the same key more than once; the ai4j convention "
                "counts every repeat (recall can exceed 1), the trec convention counts it once"
            ),
            stacklevel=3,
        )
    return frame


def _judged_hits(run: RunInput, annotations: AnnotationsInput, convention: str) -> JudgedHits:
    """The general path: any run and annotations evaluate_run accepts, flattened, coded, and either
    counted (scored runs without repeats) or sorted into order."""
    coded = _encode(flatten_annotations(annotations), flatten_run(run, convention))
    n_queries = len(coded.query_ids)
    n_ids = coded.n_ann_keys
    best_pair, best_grade = best_grades(coded.ann_query * n_ids + coded.ann_key, coded.ann_grade)
    placed = _judged_in_row_order(coded, convention, best_pair, best_grade, n_ids, n_queries)
    if placed is not None:
        retrieved, query, position, grade, repeated = placed
    else:
        retrieved, query, position, grade, repeated = _judged_by_sorting(
            coded, convention, best_pair, best_grade, n_ids, n_queries
        )
    return JudgedHits(
        coded.query_ids, n_ids, best_pair, best_grade, retrieved, query, position, grade, repeated
    )


def in_evaluation_order(run: pd.DataFrame, convention: str) -> pd.DataFrame:
    """The run's rows in the order the evaluator reads each query's list, with ``rank`` renumbered from 1:
    by rank in the ai4j convention, by score (descending, key descending, as trec_eval) in the trec one,
    where a key repeated within a query keeps its first row only. Queries keep their first-seen order.

    Anything that must see the lists as they are scored (pooling their tops, say) takes them from here.
    """
    order, query, _ = evaluation_order(run, convention)
    out = run.iloc[order].reset_index(drop=True)
    out["rank"] = np.arange(query.size, dtype=np.int64) - np.searchsorted(query, query, side="left") + 1
    return out


def evaluation_order(run: pd.DataFrame, convention: str) -> tuple[np.ndarray, np.ndarray, pa.Array]:
    """:func:`in_evaluation_order` as ``(rows, query codes, query labels)``: the rows of ``run`` it keeps,
    in its order, each row's query code (ascending: a query's rows are one block) and the query ids, for
    a caller that needs a part of each list and not the whole table re-sorted (issue 38)."""
    flat = flatten_run(run, convention)
    query, labels = codes.encode_grouped(codes.as_strings(flat.query_id))
    keys = codes.as_strings(flat.key)
    keys = keys if flat.keys_are_clean else codes.clean_strings(keys)
    order = run_order(query, flat.score, flat.rank, keys)
    query = query[order]  # grouped by query, codes ascending: the blocks are read from the codes
    if convention == "trec":  # a key's later rows in its query go, on codes (the key column hashed once)
        key = codes.encode(codes.as_strings(run["key"]))[0][order]
        if query.size and (query[0] < 0 or key.min() < 0):  # a missing id: pandas' rule, on the strings
            kept = ~run.iloc[order].duplicated(["query_id", "key"], keep="first").to_numpy()
        else:
            kept = ~repeated_within_queries(query, key)
        order, query = order[kept], query[kept]
    return order, query, labels


def _judged_by_sorting(
    coded: _Coded, convention: str, best_pair: np.ndarray, best_grade: np.ndarray, n_ids: int, n_queries: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
    """Put every hit in order (one sort), drop repeats in the trec convention, and find the judged hits:
    ``(retrieved, judged_query, judged_position, judged_grade, queries_with_repeated_keys)``, the judged
    hits in (query, position) order."""
    order = run_order(coded.run_query, coded.run_score, coded.run_rank, coded.run_keys)
    run_query = coded.run_query[order]
    if coded.distinct_keys:  # no repeats, so only the annotated keys are looked up
        labels = coded.ann_key_labels.cast(coded.run_keys.type)
        run_ann = codes.lookup(coded.run_keys, labels)[order]
        repeated_queries = 0
    else:
        identity, run_ann = _key_codes(coded, order, run_query)
        repeated = repeated_within_queries(run_query, identity)
        repeated_queries = int(codes.sorted_unique(run_query[repeated]).size)
        if convention == "trec" and repeated_queries:
            run_query, run_ann = run_query[~repeated], run_ann[~repeated]
        del identity, repeated
    # look up only hits whose key is annotated for some query (few), not every hit; from here on every
    # array is over those judged hits only, in row order (so sums add up in the same order as over all)
    candidate = np.flatnonzero(run_ann >= 0)
    judged_row, judged_grade, _ = _judged_rows(
        run_query[candidate], run_ann[candidate], best_pair, best_grade, n_ids, candidate
    )
    retrieved = np.bincount(run_query, minlength=n_queries)
    starts = np.concatenate(([0], np.cumsum(retrieved)[:-1])).astype(np.int64)
    judged_query = run_query[judged_row]
    return retrieved, judged_query, judged_row - starts[judged_query], judged_grade, repeated_queries


def _judged_rows(
    query: np.ndarray,
    ann: np.ndarray,
    best_pair: np.ndarray,
    best_grade: np.ndarray,
    n_ids: int,
    rows: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Of the candidate ``rows`` (hits whose key is annotated for some query; ``query`` and ``ann`` are
    their query and annotated-key codes), the ones judged for their own query, their grades, and the mask
    of those among the candidates."""
    pair = query * n_ids + ann
    slot = np.minimum(np.searchsorted(best_pair, pair), max(best_pair.size - 1, 0))
    match = best_pair[slot] == pair if best_pair.size else np.zeros(rows.size, dtype=bool)
    return rows[match], best_grade[slot[match]], match


def _judged_in_row_order(
    coded: _Coded, convention: str, best_pair: np.ndarray, best_grade: np.ndarray, n_ids: int, n_queries: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int] | None:
    """The judged hits' positions without sorting the run, when each query's hits are one block and the
    list needs no repeat removed: keys are coded in row order (block-aligned chunks), and a judged hit's
    position is the number of hits of its query that rank above it. By score (trec): a higher score, or
    the same score and a key later in byte order, as trec_eval breaks ties, found by a binary search of
    its list (lists already in order, as the data layer writes them, are not sorted). By rank: the row's
    place in its block, when ranks ascend within every block. None when the run is not of that shape (a
    query in two blocks, a NaN score, ranks out of order, a repeat in the trec convention): the sorting
    path."""
    block_query, lengths = coded.run_blocks
    score, rank = coded.run_score, coded.run_rank
    n_hits = len(coded.run_keys)
    if n_hits == 0 or codes.sorted_unique(block_query).size != block_query.size:
        return None
    if score is not None and np.isnan(score).any():
        return None
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1])).astype(np.int64)
    if score is None and rank is not None:
        block_of_row = np.repeat(np.arange(block_query.size, dtype=np.int64), lengths)
        if not np.all((rank[1:] >= rank[:-1]) | (block_of_row[1:] != block_of_row[:-1])):
            return None  # ranks out of order: the stable sort decides
        del block_of_row
    run_ann, repeated = _row_key_codes(coded, starts)
    repeated_queries = 0
    if repeated is not None:
        if convention == "trec":
            return None  # repeats are removed first: the sorting path
        block_of = np.searchsorted(starts, np.flatnonzero(repeated), side="right") - 1
        repeated_queries = int(codes.sorted_unique(block_query[block_of]).size)
    candidate = np.flatnonzero(run_ann >= 0)
    candidate_block = np.searchsorted(starts, candidate, side="right") - 1
    judged_row, judged_grade, match = _judged_rows(
        block_query[candidate_block], run_ann[candidate], best_pair, best_grade, n_ids, candidate
    )
    block = candidate_block[match]
    if score is None or lists_in_order(score, lengths, coded.run_keys, most_ties=judged_row.size):
        position = judged_row - starts[block]  # rank order, or lists in score order: the place in the block
    else:
        placement = place_in_lists(padded_lists(score, lengths), block, score[judged_row])
        position = placement.higher
        hit, column = placement.tie_pairs
        if hit.size:  # the tied hits with a greater key rank above (trec_eval's tie order)
            others = pa.array(starts[block[hit]] + column)
            greater = pc.greater(coded.run_keys.take(others), coded.run_keys.take(pa.array(judged_row[hit])))
            position += np.bincount(hit[greater.to_numpy(zero_copy_only=False)], minlength=position.size)
    retrieved = np.zeros(n_queries, dtype=np.int64)
    retrieved[block_query] = lengths
    judged_query = block_query[block]
    by_rank = np.lexsort((position, judged_query))
    return retrieved, judged_query[by_rank], position[by_rank], judged_grade[by_rank], repeated_queries


def _row_key_codes(coded: _Coded, starts: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """For every hit in row order (each query's hits one block; ``starts`` the blocks' first rows): the code
    of its key among the annotated ids (-1 when not annotated), and the rows whose key appeared earlier in
    their query (None when no key repeats). Done in block-aligned chunks, each against the annotations of
    its own queries only (small, in-cache hash tables, on Arrow's CPU count of threads): a chunk's keys are
    hashed once, their distinct values are looked up among the annotated ids, and a chunk with as many
    distinct keys as rows has no repeat to look for."""
    keys = coded.run_keys
    block_query, lengths = coded.run_blocks
    n = len(keys)
    by_query = np.argsort(coded.ann_query, kind="stable")
    ann_key = coded.ann_key[by_query]
    ann_count = np.bincount(coded.ann_query, minlength=len(coded.query_ids))
    ann_start = np.concatenate(([0], np.cumsum(ann_count)[:-1])).astype(np.int64)
    bounds = bounds_between_blocks(starts, n, _CHUNK)
    first_block = np.searchsorted(starts, bounds)
    run_ann = np.empty(n, dtype=np.int64)  # every chunk writes all its rows
    repeated = np.zeros(n, dtype=bool)
    found_repeats = []

    def fill(chunk: int) -> None:  # writes rows of its chunk only, so chunks run in parallel
        low, high = int(bounds[chunk]), int(bounds[chunk + 1])
        blocks = slice(first_block[chunk], first_block[chunk + 1])
        queries = block_query[blocks]
        counts = ann_count[queries]
        spans = np.repeat(ann_start[queries] - np.cumsum(counts) + counts, counts)
        candidates = codes.sorted_unique(ann_key[spans + np.arange(spans.size, dtype=np.int64)])
        chunk_keys = keys.slice(low, high - low)
        if coded.distinct_keys:  # no repeats possible: look the annotated ids up only
            run_ann[low:high] = _annotated_codes(coded, chunk_keys, candidates)
            return
        own, distinct = codes.encode(chunk_keys)  # the chunk's keys, each once
        run_ann[low:high] = _annotated_codes(coded, distinct, candidates)[own]
        if len(distinct) < high - low:  # a key occurs twice in the chunk: within one query?
            query = np.repeat(np.arange(queries.size, dtype=np.int64), lengths[blocks])
            mask = repeats_among(query, own)
            if mask.any():
                repeated[low:high] = mask
                found_repeats.append(True)

    with ThreadPoolExecutor(max_workers=max(1, pa.cpu_count())) as pool:
        list(pool.map(fill, range(bounds.size - 1)))  # Arrow's hashing releases the GIL
    return run_ann, (repeated if found_repeats else None)


def _encode(judged: FlatAnnotations, flat: FlatRun) -> _Coded:
    """Factorise query ids and annotated ids; the output's queries are the judged ones (any grade)."""
    ann_query, query_labels = codes.encode_grouped(codes.as_strings(judged.query_id))
    if (ann_query < 0).any():
        row = int(np.flatnonzero(ann_query < 0)[0])
        raise DataError(
            f"row {row}: a judgment has no query id", field="query_id", hint=ANNOTATION_COLUMNS_HINT
        )
    ann_key, ann_key_labels = codes.clean_labels(*codes.encode(codes.as_strings(judged.key)))
    ann_keep = ann_key >= 0  # None and blank ids are dropped
    evaluated = evaluated_queries(ann_query[ann_keep], len(query_labels))
    new_code = np.where(evaluated, np.cumsum(evaluated) - 1, -1)
    ann_query = new_code[ann_query]
    ann_keep &= ann_query >= 0
    output_labels = query_labels.filter(pa.array(evaluated))

    if flat.block_lengths is None:  # one query id per hit: blocks of neighbours with the same id
        block_query, run_query_labels, lengths = codes.encode_blocks(codes.as_strings(flat.query_id))
    else:  # one query id per block already
        block_query, run_query_labels = codes.encode(codes.as_strings(flat.query_id))
        lengths = flat.block_lengths
    if (block_query < 0).any():
        row = int(np.cumsum(np.append(0, lengths))[np.flatnonzero(block_query < 0)[0]])
        raise DataError(f"row {row}: a hit has no query id", field="query_id", hint=RUN_COLUMNS_HINT)
    block_query = np.append(codes.lookup(run_query_labels, output_labels), -1)[block_query]
    run_keys = codes.as_strings(flat.key)
    in_scope: np.ndarray | slice = slice(None)
    if not bool(np.all(block_query >= 0)):  # hits of queries nobody judged are not evaluated
        keep = block_query >= 0
        in_scope = np.repeat(keep, lengths)
        run_keys = run_keys.filter(pa.array(in_scope))
        block_query, lengths = block_query[keep], lengths[keep]
    distinct = flat.distinct_keys
    if not flat.keys_are_clean:
        cleaned = codes.clean_strings(run_keys)
        distinct = distinct and cleaned is run_keys  # stripping can make two keys of a query equal
        run_keys = cleaned
    if run_keys.null_count:
        row = int(np.flatnonzero(pd.isna(run_keys.to_numpy(zero_copy_only=False)))[0])
        raise DataError(
            f"row {row}: a hit has no key",
            field="key",
            hint="every hit needs a key (its stable key, e.g. the document id)",
        )
    return _Coded(
        query_ids=np.array(output_labels.to_pylist(), dtype=object),
        ann_query=ann_query[ann_keep],
        ann_key=ann_key[ann_keep],
        ann_grade=np.asarray(judged.grade, dtype=np.float64)[ann_keep],
        n_ann_keys=max(len(ann_key_labels), 1),
        run_blocks=(block_query, np.asarray(lengths, dtype=np.int64)),
        run_keys=run_keys,
        ann_key_labels=ann_key_labels,
        run_rank=None if flat.rank is None else flat.rank[in_scope],
        run_score=None if flat.score is None else flat.score[in_scope],
        distinct_keys=distinct,
    )


def _key_codes(coded: _Coded, order: np.ndarray, query: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For the hits in ``order`` (``query`` = their query codes, ascending): an integer equal for two hits
    of one query exactly when their keys are equal, and the code of the hit's key among the annotated ids
    (-1 when not annotated). Done in query-aligned chunks, each against the annotations of its own
    queries only: small, in-cache hash tables."""
    keys = coded.run_keys
    in_place = order.size == 0 or (order[0] == 0 and bool(np.all(np.diff(order) == 1)))
    by_query = np.argsort(coded.ann_query, kind="stable")
    ann_query, ann_key = coded.ann_query[by_query], coded.ann_key[by_query]
    bounds = block_aligned_bounds(query, _CHUNK)
    identity = np.empty(query.size, dtype=np.int64)
    run_ann = np.full(query.size, -1, dtype=np.int64)

    def fill(start: int, stop: int) -> None:  # writes rows start:stop only, so chunks run in parallel
        chunk = keys.slice(start, stop - start) if in_place else keys.take(pa.array(order[start:stop]))
        own, distinct = codes.encode(chunk)  # the chunk's keys, each once
        identity[start:stop] = own
        low, high = np.searchsorted(ann_query, [query[start], query[stop - 1] + 1])
        if high > low:  # look the distinct keys up among the annotated ids of the chunk's queries
            run_ann[start:stop] = _annotated_codes(coded, distinct, ann_key[low:high])[own]

    with ThreadPoolExecutor(max_workers=max(1, pa.cpu_count())) as pool:
        list(pool.map(fill, bounds[:-1], bounds[1:]))  # Arrow's hashing releases the GIL
    return identity, run_ann


def _annotated_codes(coded: _Coded, strings: pa.Array, candidates: np.ndarray) -> np.ndarray:
    """The annotated-id code of each string, looked up among ``candidates`` only (annotated-id codes: the
    ids of a chunk's queries, a small table), -1 when it is none of them."""
    labels = coded.ann_key_labels.take(pa.array(candidates)).cast(strings.type)
    return np.append(candidates, -1)[codes.lookup(strings, labels)]


_CHUNK = 65_536  # rows a chunk: its annotated ids stay a small, in-cache table; measured best of 4k-256k


def _positions(query: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The 0-based position of each row within its query's block (rows grouped by query, ascending)."""
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1])).astype(np.int64)
    return np.arange(query.size, dtype=np.int64) - starts[query]


def _first_relevant_position(rel_query: np.ndarray, rel_position: np.ndarray, n_queries: int) -> np.ndarray:
    """The 0-based position of each query's first relevant hit, +inf when there is none (the relevant
    hits' query codes and positions, in row order)."""
    first = np.full(n_queries, np.inf)
    if rel_query.size:
        leading = np.concatenate(([True], rel_query[1:] != rel_query[:-1]))
        first[rel_query[leading]] = rel_position[leading]
    return first
