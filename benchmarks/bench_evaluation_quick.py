"""Quick benchmark of the vectorised evaluator against pytrec_eval on the same synthetic run.

Usage: python benchmarks/bench_evaluation_quick.py [--queries 100000] [--hits 100] [--repeat 1]
Measures evaluate_run (trec and ai4j, from a run DataFrame and from a {qid: {key: score}} mapping) and
pytrec_eval (P, recall, nDCG@1,5,10 and RR) on identical data, and checks that they agree. Not a test.
"""

from __future__ import annotations

import argparse
import platform
import time
import warnings

import numpy as np
import pandas as pd

from abcompare.evaluation.batch import evaluate_run

CUTOFFS = (1, 5, 10)


def synthetic(n_queries: int, n_hits: int, n_docs: int, n_relevant: int, seed: int, decimals: int | None = 1):
    """A run DataFrame (distinct keys per query, scored) and graded annotations, half of them retrieved.
    Scores in [0, 100) rounded to ``decimals`` (1: about 10% of hits tie with a neighbour; None: no ties)."""
    rng = np.random.default_rng(seed)
    query = np.repeat(np.arange(n_queries), n_hits)
    position = np.tile(np.arange(n_hits), n_queries)
    base = rng.integers(0, n_docs, size=n_queries)
    doc = (base[query] + position * 7919) % n_docs  # distinct within a query
    score = rng.random(query.size) * 100
    if decimals is not None:
        score = np.round(score, decimals)  # ties on purpose: trec_eval breaks them by docno
    query_ids = np.array([f"q{i}" for i in range(n_queries)], dtype=object)
    doc_ids = np.array([f"d{j}" for j in range(n_docs)], dtype=object)
    run = pd.DataFrame(
        {"query_id": query_ids[query], "rank": position + 1, "key": doc_ids[doc], "score": score}
    )
    # relevant: every other one is a retrieved hit, the rest random documents (may or may not be retrieved)
    ann_query = np.repeat(np.arange(n_queries), n_relevant)
    slot = np.tile(np.arange(n_relevant), n_queries)
    retrieved_pick = (base[ann_query] + rng.integers(0, n_hits, size=ann_query.size) * 7919) % n_docs
    random_pick = rng.integers(0, n_docs, size=ann_query.size)
    ann_doc = np.where(slot % 2 == 0, retrieved_pick, random_pick)
    annotations = pd.DataFrame(
        {
            "query_id": query_ids[ann_query],
            "key": doc_ids[ann_doc],
            "grade": rng.integers(1, 4, size=ann_query.size),
        }
    ).drop_duplicates(["query_id", "key"])
    return run, annotations


def timed(label: str, fn, repeat: int):
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    print(f"{label:<58s} {best:8.2f} s")
    return result, best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=100_000)
    parser.add_argument("--hits", type=int, default=100)
    parser.add_argument("--docs", type=int, default=1_000_000)
    parser.add_argument("--relevant", type=int, default=6)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--decimals", type=int, default=1, help="round scores (ties); -1 keeps them all")
    args = parser.parse_args()
    print(f"{args.queries} queries x {args.hits} hits, {args.docs} docs; python {platform.python_version()}")

    decimals = None if args.decimals < 0 else args.decimals
    run, annotations = synthetic(args.queries, args.hits, args.docs, args.relevant, args.seed, decimals)
    tied = run.duplicated(["query_id", "score"], keep=False).mean()
    print(f"hits tied on score within their query: {tied:.1%}")
    warnings.simplefilter("ignore")
    trec, t_trec = timed(
        "evaluate_run(run DataFrame, trec)",
        lambda: evaluate_run(run, annotations, k=CUTOFFS, convention="trec"),
        args.repeat,
    )
    # as abcompare.data.read_run hands a TREC run over: already in trec order (score, then docno, descending)
    presorted = run.sort_values(
        ["query_id", "score", "key"], ascending=[True, False, False], ignore_index=True
    )
    timed(
        "evaluate_run(run DataFrame already in trec order, trec)",
        lambda: evaluate_run(presorted, annotations, k=CUTOFFS, convention="trec"),
        args.repeat,
    )
    timed(
        "evaluate_run(run DataFrame, ai4j)",
        lambda: evaluate_run(run, annotations, k=CUTOFFS, convention="ai4j"),
        args.repeat,
    )

    start = time.perf_counter()
    run_dict: dict[str, dict[str, float]] = {}
    columns = (run["query_id"].tolist(), run["key"].tolist(), run["score"].tolist())
    for qid, key, score in zip(*columns, strict=True):
        run_dict.setdefault(qid, {})[key] = score
    qrels: dict[str, dict[str, int]] = {}
    judged = (annotations["query_id"].tolist(), annotations["key"].tolist(), annotations["grade"].tolist())
    for qid, key, grade in zip(*judged, strict=True):
        qrels.setdefault(qid, {})[key] = int(grade)
    print(f"{'(building the dict-of-dicts inputs, Python)':<58s} {time.perf_counter() - start:8.2f} s")

    timed(
        "evaluate_run({qid: {key: score}}, trec)",
        lambda: evaluate_run(run_dict, qrels, k=CUTOFFS, convention="trec"),
        args.repeat,
    )

    import pytrec_eval

    measures = {"P.1,5,10", "recall.1,5,10", "ndcg_cut.1,5,10", "recip_rank"}

    def with_pytrec():
        return pytrec_eval.RelevanceEvaluator(qrels, measures, relevance_level=1).evaluate(run_dict)

    oracle, t_pytrec = timed("pytrec_eval (evaluator + evaluate, same dicts)", with_pytrec, args.repeat)
    print(f"speed-up over pytrec_eval: {t_pytrec / t_trec:.1f}x (DataFrame path, trec)")

    expected = pd.DataFrame.from_dict(oracle, orient="index").loc[trec.index]
    worst = 0.0
    for k in CUTOFFS:
        for ours, theirs in (("precision", "P"), ("recall", "recall"), ("ndcg", "ndcg_cut")):
            worst = max(worst, float(np.abs(trec[f"{ours}@{k}"] - expected[f"{theirs}_{k}"]).max()))
    print(f"max |ours - pytrec_eval| over P/recall/nDCG@1,5,10: {worst:.2e}")


if __name__ == "__main__":
    main()
