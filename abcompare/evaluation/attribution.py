"""Where a metric's change comes from: each treatment's per-query delta split into parts that add up to it.

For one treatment, metric@k and query, ``treatment - control`` is split into

- **new**: relevant items in the treatment's top k that are not in the control's top k;
- **lost**: relevant items in the control's top k that are not in the treatment's (negative);
- **reorder**: items in both top k lists whose contribution changed with their rank;
- **ideal**: the change of the normaliser itself (nDCG's ideal DCG, ai4j precision's depth
  ``min(k, hits)``, recall's relevant count at span level), which differs when the variants returned
  different numbers of hits (ai4j) or were judged apart (span level); 0 otherwise;

and, beside them, the count of **unjudged newcomers**: items in the treatment's top k (as returned) that
nobody judged and that the control's top k does not hold (they score 0 today).

nDCG, precision and recall add up by item: an item contributes its gain times its discount (nDCG) or 1
(precision, recall when relevant) over the query's normaliser, and the item parts divide by the control's
normaliser (the treatment's when the control's is 0), so ``ideal`` is what remains of the normaliser's
change: ``S_t / N_t - S_t / N_c``. MRR and F1 do not add up by item; each query's change is classified
instead and its whole delta attributed to that class. MRR: ``new`` (a first relevant hit the control did
not have first: none before, or another one), ``reorder`` (the same one moved), ``lost`` (none left),
``unchanged`` (the first relevant hit's rank, or its absence, is the control's). F1: ``new`` (more
relevant hits in the top k), ``lost`` (fewer), ``ideal`` (as many, over another depth or relevant count),
``unchanged`` (as many, over the same).

The lists are read as the evaluator reads them (the one sort of a run, ``core.ranking.run_order``: the
ai4j rank order with repeats counted, or trec_eval's score order with ties by key and repeats once;
condensed lists keep their judged hits only), with the same judgment rules
(:mod:`abcompare.evaluation.judgments`), so the parts add up to the per-query deltas of
:func:`~abcompare.evaluation.per_query.per_query_metrics` (to rounding, 1e-12; the tests pin it). Every
step is an array operation over all hits of all queries.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa

from abcompare.core.ranking import repeated_within_queries, run_order
from abcompare.core.vocabulary import parse_metric
from abcompare.evaluation import codes
from abcompare.evaluation.convention import Convention, ideal_ranking, ratio_or_zero
from abcompare.evaluation.gains import discounts
from abcompare.evaluation.inputs import flatten_annotations, flatten_run
from abcompare.evaluation.judgments import best_grades, evaluated_queries, is_relevant

#: The parts of a delta, in the order they are read.
PARTS: tuple[str, ...] = ("new", "lost", "reorder", "ideal")
#: The measures split by item; the others (MRR, F1) are attributed by classifying each query's change.
ITEM_MEASURES: tuple[str, ...] = ("ndcg", "precision", "recall")
#: The class of a query whose metric did not move (MRR, F1).
UNCHANGED = "unchanged"
#: The per-query table's columns after ``metric`` and ``query_id``.
PER_QUERY_COLUMNS: tuple[str, ...] = (
    "delta", *PARTS, "new_count", "lost_count", "reorder_count", "unjudged_newcomers", "change", "reorder_up",
)  # fmt: skip

_FAR = np.iinfo(np.int64).max  # the position of a hit a condensed list leaves out


@dataclass(frozen=True)
class ScoredLists:
    """One variant's lists as the evaluator scores them: every hit of the top ``depth`` (as returned, or
    of the condensed list) with its grade, and each query's list length and relevant count.

    Hits are grouped by query (ascending code, each query's hits by position); ``query`` is the hit's code
    in ``query_ids`` (the comparison's fixed query set), ``key`` its code in ``key_labels`` (its stripped
    key), ``position`` its 0-based place in the list as scored (``_FAR`` when a condensed list leaves it
    out), ``returned`` its place in the list as returned, ``grade`` its judgment (NaN: nobody judged it).
    ``ideal`` holds the positive grades of every query, best first, as ``(query, position, grade)``: the
    trec ideal ranking.
    """

    query_ids: pd.Index
    convention: str
    relevance_threshold: float
    query: np.ndarray
    key: np.ndarray
    key_labels: pa.Array
    position: np.ndarray
    returned: np.ndarray
    grade: np.ndarray
    length: np.ndarray
    relevant: np.ndarray
    ideal: tuple[np.ndarray, np.ndarray, np.ndarray]


def scored_lists(
    run: pd.DataFrame,
    annotations: pd.DataFrame,
    query_ids: Sequence[str],
    *,
    cutoffs: Sequence[int],
    convention: str,
    relevance_threshold: float,
    unjudged: str = "nonrelevant",
    measures: Sequence[str] | None = None,
) -> ScoredLists:
    """A variant's run and judgments (as :func:`~abcompare.evaluation.per_query.per_query_metrics` takes
    them, with the same keyword arguments) as the lists the evaluator scores, down to the deepest cutoff.

    ``measures`` is accepted so the evaluation section's options pass unchanged; every measure is read
    from the same lists.
    """
    del measures
    Convention.named(convention)  # an unknown name is a ConfigError here, as in the evaluator
    wanted = pd.Index([str(q) for q in query_ids], name="query_id", dtype=object)
    wanted_labels = pa.array(list(wanted), type=pa.large_string())
    n_queries = len(wanted)
    depth = max(cutoffs)

    best_pair, best_grade, ann_labels, n_ids = _best_judgments(annotations, wanted_labels)
    evaluated = evaluated_queries(best_pair // n_ids, n_queries)
    relevant = np.bincount(
        best_pair[is_relevant(best_grade, relevance_threshold)] // n_ids, minlength=n_queries
    )
    ideal = ideal_ranking(best_pair // n_ids, best_grade)

    query, key, key_labels = _hits_in_order(run, convention, wanted_labels, evaluated)
    starts = np.searchsorted(query, query, side="left")
    returned = np.arange(query.size, dtype=np.int64) - starts
    annotated = np.append(codes.lookup(key_labels, ann_labels), -1)[key]
    pair = query * n_ids + annotated
    slot = np.minimum(np.searchsorted(best_pair, pair), max(best_pair.size - 1, 0))
    judged = (annotated >= 0) & (best_pair[slot] == pair) if best_pair.size else annotated < -1
    grade = np.where(judged, best_grade[slot] if best_pair.size else np.nan, np.nan)
    if unjudged == "condensed":  # Sakai (2007): the judged hits only, ranks closed up
        seen = np.cumsum(judged)
        position = np.where(judged, seen - 1 - (seen[starts] - judged[starts]), _FAR)
        length = np.bincount(query[judged], minlength=n_queries)
    else:
        position = returned
        length = np.bincount(query, minlength=n_queries)
    top = (returned < depth) | (position < depth)
    return ScoredLists(
        query_ids=wanted,
        convention=convention,
        relevance_threshold=relevance_threshold,
        query=query[top],
        key=key[top],
        key_labels=key_labels,
        position=position[top],
        returned=returned[top],
        grade=grade[top],
        length=length.astype(np.int64),
        relevant=relevant.astype(np.int64),
        ideal=ideal,
    )


def _best_judgments(
    annotations: pd.DataFrame, wanted_labels: pa.Array
) -> tuple[np.ndarray, np.ndarray, pa.Array, int]:
    """The judgments of the wanted queries: stripped ids, blank ones dropped, each (query, id) once with its
    best grade, as pair codes ``query * n_ids + id``; the ids' labels and ``n_ids``."""
    flat = flatten_annotations(annotations)
    ann_query = codes.lookup(_large(codes.as_strings(flat.query_id)), wanted_labels)
    ann_key, ann_labels = codes.encode(_large(codes.clean_strings(codes.as_strings(flat.key))))
    kept = (ann_query >= 0) & (ann_key >= 0)
    n_ids = max(len(ann_labels), 1)
    best_pair, best_grade = best_grades(
        ann_query[kept] * n_ids + ann_key[kept], np.asarray(flat.grade, dtype=np.float64)[kept]
    )
    return best_pair, best_grade, ann_labels, n_ids


def _hits_in_order(
    run: pd.DataFrame, convention: str, wanted_labels: pa.Array, evaluated: np.ndarray
) -> tuple[np.ndarray, np.ndarray, pa.Array]:
    """The hits of the evaluated queries in the order the evaluator reads them (trec: each key once): each
    hit's query code, key code, and the keys' labels."""
    hits = flatten_run(run, convention)
    query = codes.lookup(_large(codes.as_strings(hits.query_id)), wanted_labels)
    keep = query >= 0
    keep[keep] = evaluated[query[keep]]
    query = query[keep]
    keys = _large(codes.clean_strings(codes.as_strings(hits.key))).filter(pa.array(keep))
    rank = None if hits.rank is None else hits.rank[keep]
    score = None if hits.score is None else hits.score[keep]
    order = run_order(query, score, rank, keys)
    query = query[order]
    key, key_labels = codes.encode(keys.take(pa.array(order)))
    if convention == "trec" and query.size:
        first = ~repeated_within_queries(query, key)
        query, key = query[first], key[first]
    return query, key, key_labels


def _large(strings: pa.Array) -> pa.Array:
    """Strings as Arrow ``large_string``, so that any two can be looked up in or joined to each other."""
    return strings if pa.types.is_large_string(strings.type) else strings.cast(pa.large_string())


@dataclass(frozen=True)
class _Cut:
    """One variant's top ``k`` as the metrics see it: its scored hits (pair codes, gains, relevance,
    positions), the pair codes of its top ``k`` as returned and unjudged, and each query's normalisers."""

    pair: np.ndarray
    gain: np.ndarray  # nDCG gain times discount
    hit: np.ndarray  # 1.0 for a relevant hit (precision, recall, F1)
    position: np.ndarray
    unjudged: np.ndarray  # pair codes of the top k as returned that nobody judged
    returned: np.ndarray  # pair codes of the top k as returned
    ideal_dcg: np.ndarray
    depth: np.ndarray  # the precision denominator
    relevant: np.ndarray
    first: np.ndarray  # position of the first relevant hit (+inf: none)
    first_key: np.ndarray  # its key code (-1: none)
    true_positives: np.ndarray  # relevant hits in the top k


def _cut(lists: ScoredLists, key: np.ndarray, n_keys: int, k: int) -> _Cut:
    n_queries = len(lists.query_ids)
    scored = lists.position < k
    query, position, grade = lists.query[scored], lists.position[scored], lists.grade[scored]
    pair = query * n_keys + key[scored]
    relevant = is_relevant(np.nan_to_num(grade, nan=-np.inf), lists.relevance_threshold)
    rules = Convention(lists.convention)
    gain = rules.gain(grade, relevant)
    depth = rules.depth(k, lists.length)
    ideal_dcg = rules.ideal_dcg(k, depth, lists.relevant, lists.ideal, n_queries)
    first = np.full(n_queries, np.inf)
    first_key = np.full(n_queries, -1, dtype=np.int64)
    leading_query, leading = np.unique(query[relevant], return_index=True)  # each query's hits by position
    first[leading_query] = position[relevant][leading]
    first_key[leading_query] = key[scored][relevant][leading]
    shown = lists.returned < k
    returned = lists.query[shown] * n_keys + key[shown]
    return _Cut(
        pair=pair,
        gain=gain * discounts(k)[position],
        hit=relevant.astype(np.float64),
        position=position,
        unjudged=returned[np.isnan(lists.grade[shown])],
        returned=returned,
        ideal_dcg=ideal_dcg,
        depth=depth,
        relevant=lists.relevant,
        first=first,
        first_key=first_key,
        true_positives=np.bincount(query[relevant], minlength=n_queries),
    )


def attribution(
    control: ScoredLists, treatment: ScoredLists, metrics: Sequence[str], *, name: str = "treatment"
) -> pd.DataFrame:
    """Every metric's per-query delta (treatment - control) split into :data:`PARTS`, with the counts.

    Returns one row per (metric, query), columns ``treatment`` (``name``), ``metric``, ``query_id`` and
    :data:`PER_QUERY_COLUMNS`:
    ``delta`` (= new + lost + reorder + ideal), the parts, the items (nDCG, precision, recall: relevant
    hits; MRR, F1: this query, 0 or 1) counted in each, the unjudged newcomers, and ``change``, the
    class of an MRR or F1 query (empty for the item measures).
    """
    if not control.query_ids.equals(treatment.query_ids):
        raise ValueError("the control and the treatment are scored on different query sets")
    n_queries = len(control.query_ids)
    shared, labels = codes.encode(pa.concat_arrays([control.key_labels, treatment.key_labels]))
    n_keys = max(len(labels), 1)
    split = len(control.key_labels)
    control_key, treatment_key = shared[:split][control.key], shared[split:][treatment.key]
    cuts: dict[int, tuple[_Cut, _Cut, _Matched]] = {}
    blocks: list[dict[str, np.ndarray]] = []
    for metric in metrics:
        measure, k = parse_metric(metric)
        if k not in cuts:
            before = _cut(control, control_key, n_keys, k)
            after = _cut(treatment, treatment_key, n_keys, k)
            cuts[k] = (before, after, _matched(before, after, n_keys, n_queries))
        before, after, matched = cuts[k]
        if measure in ITEM_MEASURES:
            columns = _by_item(measure, before, after, matched, n_queries)
        else:
            columns = _by_class(measure, before, after, n_queries)
        columns["unjudged_newcomers"] = matched.unjudged_newcomers
        columns["treatment"] = np.full(n_queries, name, dtype=object)
        columns["metric"] = np.full(n_queries, metric, dtype=object)
        columns["query_id"] = control.query_ids.to_numpy(dtype=object)
        blocks.append(columns)
    names = ["treatment", "metric", "query_id", *PER_QUERY_COLUMNS]
    if not blocks:
        return pd.DataFrame(columns=names)
    return pd.DataFrame({name: np.concatenate([block[name] for block in blocks]) for name in names})


def _normalisers(measure: str, cut: _Cut) -> np.ndarray:
    if measure == "ndcg":
        return cut.ideal_dcg
    return cut.depth if measure == "precision" else cut.relevant


@dataclass(frozen=True)
class _Matched:
    """The (query, key) pairs of both top k lists, each once, ascending: which list holds each, where it
    first stands in each, each hit's pair, and each query's count of unjudged newcomers."""

    query: np.ndarray
    index_before: np.ndarray  # each control hit's pair
    index_after: np.ndarray
    in_before: np.ndarray
    in_after: np.ndarray
    moved: np.ndarray  # in both, at another first position
    unjudged_newcomers: np.ndarray


def _matched(before: _Cut, after: _Cut, n_keys: int, n_queries: int) -> _Matched:
    pairs, index = np.unique(np.concatenate((before.pair, after.pair)), return_inverse=True)
    index_before, index_after = index[: before.pair.size], index[before.pair.size :]
    size = pairs.size
    place_before = np.full(size, _FAR, dtype=np.int64)
    place_after = np.full(size, _FAR, dtype=np.int64)
    np.minimum.at(place_before, index_before, before.position)
    np.minimum.at(place_after, index_after, after.position)
    shown = np.sort(before.returned)  # the control's top k as returned, against the unjudged newcomers
    unjudged = codes.sorted_unique(after.unjudged)
    slot = np.minimum(np.searchsorted(shown, unjudged), max(shown.size - 1, 0))
    newcomers = unjudged[shown[slot] != unjudged] if shown.size else unjudged
    return _Matched(
        query=pairs // n_keys,
        index_before=index_before,
        index_after=index_after,
        in_before=place_before < _FAR,
        in_after=place_after < _FAR,
        moved=place_before != place_after,
        unjudged_newcomers=np.bincount(newcomers // n_keys, minlength=n_queries),
    )


def _by_item(
    measure: str, before: _Cut, after: _Cut, matched: _Matched, n_queries: int
) -> dict[str, np.ndarray]:
    """nDCG, precision, recall: each (query, item) pair's contribution in either list, by class."""
    value_before = before.gain if measure == "ndcg" else before.hit
    value_after = after.gain if measure == "ndcg" else after.hit
    size, query = matched.query.size, matched.query
    sum_before = np.bincount(matched.index_before, weights=value_before, minlength=size)
    sum_after = np.bincount(matched.index_after, weights=value_after, minlength=size)
    in_before, in_after = matched.in_before, matched.in_after
    new, lost, both = in_after & ~in_before, in_before & ~in_after, in_before & in_after
    norm_before, norm_after = _normalisers(measure, before), _normalisers(measure, after)
    reference = np.where(norm_before > 0, norm_before, norm_after)

    def per_query(mask: np.ndarray, weights: np.ndarray) -> np.ndarray:
        return np.bincount(query[mask], weights=weights[mask], minlength=n_queries)

    def count(mask: np.ndarray) -> np.ndarray:
        return np.bincount(query[mask], minlength=n_queries)

    total_before = np.bincount(query[matched.index_before], weights=value_before, minlength=n_queries)
    total_after = np.bincount(query[matched.index_after], weights=value_after, minlength=n_queries)
    scores = (sum_before > 0) | (sum_after > 0)
    return {
        "delta": ratio_or_zero(total_after, norm_after) - ratio_or_zero(total_before, norm_before),
        "new": ratio_or_zero(per_query(new, sum_after), reference),
        "lost": -ratio_or_zero(per_query(lost, sum_before), reference),
        "reorder": ratio_or_zero(per_query(both, sum_after - sum_before), reference),
        # the items that moved up alone (reorder - reorder_up is what the items that moved down cost)
        "reorder_up": ratio_or_zero(per_query(both, np.maximum(sum_after - sum_before, 0.0)), reference),
        "ideal": ratio_or_zero(total_after, norm_after) - ratio_or_zero(total_after, reference),
        "new_count": count(new & (sum_after > 0)),
        "lost_count": count(lost & (sum_before > 0)),
        "reorder_count": count(both & scores & matched.moved),
        "change": np.full(n_queries, "", dtype=object),
    }


def _by_class(measure: str, before: _Cut, after: _Cut, n_queries: int) -> dict[str, np.ndarray]:
    """MRR, F1: each query's whole delta in the class of its change."""
    if measure == "mrr":
        value_before = ratio_or_zero(
            np.ones(n_queries), np.where(np.isfinite(before.first), before.first + 1, 0)
        )
        value_after = ratio_or_zero(
            np.ones(n_queries), np.where(np.isfinite(after.first), after.first + 1, 0)
        )
        moved = before.first != after.first  # the first relevant hit's rank decides MRR alone
        had, has = before.first_key >= 0, after.first_key >= 0
        same = before.first_key == after.first_key
        classes = {
            "new": moved & has & ~(had & same),
            "lost": moved & had & ~has,
            "reorder": moved & has & had & same,
        }
    else:
        value_before, hits_before = _f1_of(before)
        value_after, hits_after = _f1_of(after)
        renormalised = (before.depth != after.depth) | (before.relevant != after.relevant)
        classes = {
            "new": hits_after > hits_before,
            "lost": hits_after < hits_before,
            "ideal": (hits_after == hits_before) & renormalised,
        }
    delta = value_after - value_before
    out: dict[str, np.ndarray] = {"delta": delta}
    change = np.full(n_queries, UNCHANGED, dtype=object)
    for part in PARTS:
        mask = classes.get(part, np.zeros(n_queries, dtype=bool))
        out[part] = np.where(mask, delta, 0.0)
        change[mask] = part
        if part != "ideal":
            out[f"{part}_count"] = mask.astype(np.int64)
    out["change"] = change
    out["reorder_up"] = np.maximum(out["reorder"], 0.0)  # a query's whole change: up or down, not both
    return out


def _f1_of(cut: _Cut) -> tuple[np.ndarray, np.ndarray]:
    """Each query's F1 as the evaluator computes it (precision over the depth, recall over the relevant
    count, then their harmonic mean) and its count of relevant hits in the top k."""
    true_positives = cut.true_positives
    precision = ratio_or_zero(true_positives, cut.depth)
    recall = ratio_or_zero(true_positives, cut.relevant)
    return ratio_or_zero(2.0 * precision * recall, precision + recall), true_positives


def attribution_summary(per_query: pd.DataFrame) -> pd.DataFrame:
    """The per-query attribution (of one or more treatments, :func:`attribution`'s tables concatenated)
    summed over queries: one row per (treatment, metric) with the mean delta
    and parts (they add up as the per-query ones do; the mean over the fixed query set is the delta the
    comparison reports), the counts summed, ``unit`` (``hits`` for the item measures, ``queries`` for MRR
    and F1) and ``n_queries``."""
    columns = ["treatment", "metric", "delta", *PARTS, "new_count", "lost_count", "reorder_count",
               "unjudged_newcomers", "unit", "n_queries", "reorder_up"]  # fmt: skip
    if per_query.empty:
        return pd.DataFrame(columns=columns)
    grouped = per_query.groupby(["treatment", "metric"], sort=False)
    means = grouped[["delta", *PARTS, "reorder_up"]].mean()
    counts = grouped[["new_count", "lost_count", "reorder_count", "unjudged_newcomers"]].sum()
    out = means.join(counts).reset_index()
    out["n_queries"] = grouped.size().to_numpy()
    measures = [parse_metric(metric)[0] for metric in out["metric"]]
    out["unit"] = ["hits" if m in ITEM_MEASURES else "queries" for m in measures]
    return out[columns]
