"""Property tests: the vectorised evaluate_run equals the per-query evaluators, query by query, for both
conventions, with repeated keys, None hits, blank ids, empty lists and k beyond the list."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from abcompare.core.hits import RagHit
from abcompare.evaluation import RagEvaluator, TrecEvaluator, trec_order
from abcompare.evaluation.batch import evaluate_run
from abcompare.evaluation.keys import hit_keys

ATOL = 1e-12
KEYS = ["a", "b", "c", "d", " a", "b ", "", "  ", "0", "1", "2", "A"]
QUERIES = ["q1", "q2", "q3", "q4"]

key = st.sampled_from(KEYS)
hit = st.one_of(
    key,
    st.none(),
    key.map(lambda k: RagHit(id=k)),
    st.builds(lambda doc, idx: RagHit(document_id=doc, chunk_index=idx), key, st.none() | st.integers(0, 2)),
    key.map(lambda k: {"content": k}),
)
hits_lists = st.dictionaries(st.sampled_from(QUERIES), st.lists(hit, max_size=9), max_size=4)
grade = st.integers(-1, 3)
graded = st.dictionaries(st.sampled_from([*KEYS, "d#0", "d#-", "a#1"]) | st.none(), grade, max_size=6)
annotations_maps = st.dictionaries(st.sampled_from(QUERIES), graded, max_size=4)
cutoffs = st.lists(st.integers(1, 12), min_size=1, max_size=3)
thresholds = st.sampled_from([1, 2])


def _cleaned(judged):
    """The judgments as the evaluator reads them: blank ids dropped, ids stripped, the best grade kept."""
    cleaned = {}
    for raw, g in judged.items():
        if raw is None or not raw.strip():
            continue
        cleaned[raw.strip()] = max(g, cleaned.get(raw.strip(), g))
    return cleaned


def _expected_rows(annotations):
    """Every query with a judgment of any grade is evaluated, whatever the threshold."""
    return [qid for qid, judged in annotations.items() if _cleaned(judged)]


def _listed_keys(convention, hits):
    keys = hit_keys(hits)
    return list(dict.fromkeys(keys)) if convention == "trec" else keys


def _judged_at(convention, hits, judged, k):
    """judged@k from its definition: judged share of the top min(k, hits returned); 0 for no hits."""
    keys = _listed_keys(convention, hits)[:k]
    cleaned = _cleaned(judged)
    return sum(key in cleaned for key in keys) / len(keys) if keys else 0.0


def _per_query(convention, hits, judged, k, threshold):
    if convention == "ai4j":
        relevant = [raw for raw, g in judged.items() if g >= threshold]
        return RagEvaluator().evaluate(hits, relevant, k)
    return TrecEvaluator(relevance_threshold=threshold).evaluate(hits, judged, k)


def _condensed(convention, hits, judged):
    """The hit list with every unjudged hit removed (as keys, which both evaluators accept)."""
    cleaned = _cleaned(judged)
    return [key for key in _listed_keys(convention, hits) if key in cleaned]


def _assert_matches(frame, run, annotations, ks, convention, threshold, unjudged="nonrelevant"):
    assert list(frame.index) == _expected_rows(annotations)
    for qid in frame.index:
        hits = run.get(qid, [])
        for k in ks:
            evaluated = _condensed(convention, hits, annotations[qid]) if unjudged == "condensed" else hits
            want = _per_query(convention, evaluated, annotations[qid], k, threshold)
            got = frame.loc[qid]
            np.testing.assert_allclose(
                [
                    got[f"precision@{k}"],
                    got[f"recall@{k}"],
                    got[f"f1@{k}"],
                    got[f"mrr@{k}"],
                    got[f"ndcg@{k}"],
                ],
                [want.precision_at_k, want.recall_at_k, want.f1_at_k, want.mrr, want.ndcg],
                rtol=0,
                atol=ATOL,
                err_msg=f"{convention} {qid} k={k}",
            )
            assert got[f"true_positive_count@{k}"] == want.true_positive_count
            assert got["relevant_count"] == want.relevant_count
            assert got["retrieved_count"] == len(_listed_keys(convention, hits))
            assert got["judged_count"] == len(_condensed(convention, hits, annotations[qid]))
            assert got[f"judged@{k}"] == _judged_at(convention, hits, annotations[qid], k)


def _quiet_evaluate(*args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return evaluate_run(*args, **kwargs)


@settings(max_examples=200, deadline=None)
@given(hits_lists, annotations_maps, cutoffs, st.sampled_from(["ai4j", "trec"]), thresholds)
def test_batch_equals_per_query_on_hit_lists(run, annotations, ks, convention, threshold):
    frame = _quiet_evaluate(run, annotations, k=ks, convention=convention, relevance_threshold=threshold)
    _assert_matches(frame, run, annotations, ks, convention, threshold)


@settings(max_examples=150, deadline=None)
@given(hits_lists, annotations_maps, cutoffs, st.sampled_from(["ai4j", "trec"]), thresholds)
def test_condensed_lists_equal_the_per_query_evaluators_on_the_judged_hits_only(
    run, annotations, ks, convention, threshold
):
    frame = _quiet_evaluate(
        run, annotations, k=ks, convention=convention, relevance_threshold=threshold, unjudged="condensed"
    )
    _assert_matches(frame, run, annotations, ks, convention, threshold, unjudged="condensed")


@settings(max_examples=100, deadline=None)
@given(hits_lists, annotations_maps, cutoffs, st.sampled_from(["ai4j", "trec"]), thresholds)
def test_run_and_annotation_frames_equal_the_mappings(run, annotations, ks, convention, threshold):
    rows = [
        (qid, rank, key, np.nan) for qid, hits in run.items() for rank, key in enumerate(hit_keys(hits), 1)
    ]
    run_df = pd.DataFrame(rows, columns=["query_id", "rank", "key", "score"]).sample(frac=1.0, random_state=0)
    ann_df = pd.DataFrame(
        [(qid, key, g) for qid, judged in annotations.items() for key, g in judged.items()],
        columns=["query_id", "key", "grade"],
    )
    kwargs = {"k": ks, "convention": convention, "relevance_threshold": threshold}
    pd.testing.assert_frame_equal(
        _quiet_evaluate(run_df, ann_df, **kwargs), _quiet_evaluate(run, annotations, **kwargs)
    )


scores = st.dictionaries(
    st.sampled_from(["a", "b", "c", "d", "e", "B", "d#0"]),
    st.sampled_from([0.0, 0.5, 1.0, 2.0, -1.0]),
    max_size=7,
)


@settings(max_examples=100, deadline=None)
@given(
    st.dictionaries(st.sampled_from(QUERIES), scores, max_size=4),
    annotations_maps,
    cutoffs,
    st.sampled_from(["ai4j", "trec"]),
)
def test_score_mappings_equal_per_query_on_the_trec_order(run, annotations, ks, convention):
    frame = _quiet_evaluate(run, annotations, k=ks, convention=convention)
    ordered = {qid: trec_order(s) for qid, s in run.items()}
    _assert_matches(frame, ordered, annotations, ks, convention, 1)
    # the same run as a scored trec DataFrame with shuffled ranks: re-ordered by score, same numbers
    if convention == "trec":
        rows = [(qid, 1, key, s) for qid, qs in run.items() for key, s in qs.items()]
        run_df = pd.DataFrame(rows, columns=["query_id", "rank", "key", "score"])
        pd.testing.assert_frame_equal(_quiet_evaluate(run_df, annotations, k=ks, convention="trec"), frame)
        shuffled = run_df.sample(frac=1.0, random_state=1)  # not grouped by query: the global sort
        pd.testing.assert_frame_equal(_quiet_evaluate(shuffled, annotations, k=ks, convention="trec"), frame)


def test_large_skewed_and_shuffled_runs_equal_per_query():
    """Runs big enough for the chunked key factorisation, skewed enough for the unpadded fallbacks, and
    shuffled so that the global sort is used: still the per-query numbers, query by query."""
    rng = np.random.default_rng(7)
    run: dict[str, dict[str, float]] = {}
    annotations: dict[str, dict[str, int]] = {}
    for q in range(1900):
        size = 4000 if q == 0 else int(rng.integers(0, 60))
        docs = [f"d{int(d)}" for d in rng.integers(0, 3000, size=size)]  # repeats inside a query
        run[f"q{q}"] = docs
        annotations[f"q{q}"] = {
            f"d{int(d)}": int(g) for d, g in zip(rng.integers(0, 3000, 8), rng.integers(0, 3, 8), strict=True)
        }
    rows = [
        (qid, rank, key, float(rng.integers(0, 5)))
        for qid, docs in run.items()
        for rank, key in enumerate(docs, 1)
    ]
    frame = pd.DataFrame(rows, columns=["query_id", "rank", "key", "score"])
    assert len(frame) > 50_000
    ks = (1, 10, 100)
    unscored = frame.drop(columns="score")  # rank order in both conventions
    for convention in ("ai4j", "trec"):
        got = _quiet_evaluate(unscored, annotations, k=ks, convention=convention)
        _assert_matches(got, run, annotations, ks, convention, 1)
        shuffled = _quiet_evaluate(
            unscored.sample(frac=1.0, random_state=3), annotations, k=ks, convention=convention
        )
        pd.testing.assert_frame_equal(shuffled, got)
        # annotations listing the queries in another order: the run's blocks are reordered, not re-sorted
        backwards = dict(reversed(annotations.items()))
        reordered = _quiet_evaluate(unscored, backwards, k=ks, convention=convention)
        pd.testing.assert_frame_equal(reordered, got.loc[[q for q in backwards if q in got.index]])
    # trec with scores: order by score (ties: key descending), grouped (segmented) and shuffled (global)
    scored = {qid: {} for qid in run}
    for qid, _, key, score in rows:
        scored[qid].setdefault(key, score)  # first occurrence's score
    first_rows = frame.drop_duplicates(["query_id", "key"])
    want = _quiet_evaluate(scored, annotations, k=ks, convention="trec")
    _assert_matches(want, {q: trec_order(s) for q, s in scored.items()}, annotations, ks, "trec", 1)
    for candidate in (first_rows, first_rows.sample(frac=1.0, random_state=5)):
        pd.testing.assert_frame_equal(_quiet_evaluate(candidate, annotations, k=ks, convention="trec"), want)
