"""The trec convention equals pytrec_eval (trec_eval's C code) to 1e-9 on the shared real collections.

Runs are built here, cheaply and deterministically: a seeded random run over the corpus ids with some
relevant documents mixed in and scores rounded so that ties are common (trec_eval's tie rule matters),
and a real BM25 run (bm25s) on the two small collections. Cranfield's qrels are graded (1-4).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from oracle_support import bm25_run, load_qrels, random_run
from support.environment import require_module

from abcompare.evaluation.batch import evaluate_run

pytrec_eval = require_module("pytrec_eval")

CUTOFFS = (1, 3, 5, 10, 20, 100)
ATOL = 1e-9
COLLECTIONS = ("scifact", "cranfield", "cisi")


def oracle(qrels, run, threshold: int, judged_only: bool = False) -> dict[str, dict[str, float]]:
    """pytrec_eval's P, recall, nDCG@k and RR (cut at k by truncating each query's run, trec order);
    ``judged_only`` is trec_eval's -J (unjudged documents removed: the condensed list)."""
    measures = {f"{m}.{','.join(map(str, CUTOFFS))}" for m in ("P", "recall", "ndcg_cut")}
    if judged_only:
        run = {qid: {d: s for d, s in docs.items() if d in qrels.get(qid, {})} for qid, docs in run.items()}
    result = pytrec_eval.RelevanceEvaluator(
        qrels, measures, relevance_level=threshold, judged_docs_only_flag=judged_only
    ).evaluate(run)
    for k in CUTOFFS:
        truncated = {
            qid: dict(sorted(docs.items(), key=lambda item: (item[1], item[0]), reverse=True)[:k])
            for qid, docs in run.items()
        }
        rr_evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}, relevance_level=threshold)
        rr = rr_evaluator.evaluate(truncated)
        for qid, values in rr.items():
            result[qid][f"rr_{k}"] = values["recip_rank"]
    return result


def assert_equal_to_oracle(frame: pd.DataFrame, expected: dict[str, dict[str, float]]) -> None:
    compared = [qid for qid in frame.index if qid in expected]
    assert len(compared) > 50
    for k in CUTOFFS:
        want = pd.DataFrame(
            {
                f"precision@{k}": [expected[q][f"P_{k}"] for q in compared],
                f"recall@{k}": [expected[q][f"recall_{k}"] for q in compared],
                f"ndcg@{k}": [expected[q][f"ndcg_cut_{k}"] for q in compared],
                f"mrr@{k}": [expected[q][f"rr_{k}"] for q in compared],
            },
            index=compared,
        )
        p, r = want[f"precision@{k}"], want[f"recall@{k}"]
        want[f"f1@{k}"] = np.where(p + r > 0, 2 * p * r / (p + r).where(p + r > 0, 1), 0.0)
        got = frame.loc[compared, want.columns]
        np.testing.assert_allclose(got.to_numpy(), want.to_numpy(), rtol=0, atol=ATOL, err_msg=f"k={k}")
    # judged queries the run missed are rows of zeros (pytrec_eval leaves them out)
    missing = [qid for qid in frame.index if qid not in expected]
    assert (frame.loc[missing, [f"ndcg@{k}" for k in CUTOFFS]] == 0).all().all()


@pytest.mark.slow
@pytest.mark.parametrize("name", COLLECTIONS)
def test_condensed_lists_equal_trec_eval_judged_only_flag(datasets_dir, name):
    """``unjudged: condensed`` is trec_eval's -J: the same numbers with unjudged documents removed."""
    folder = datasets_dir / name
    qrels = load_qrels(folder)
    run = random_run(folder, qrels, seed=len(name))
    for threshold in (1, 2, 3) if name == "cranfield" else (1,):
        frame = evaluate_run(
            run, qrels, k=CUTOFFS, convention="trec", relevance_threshold=threshold, unjudged="condensed"
        )
        assert_equal_to_oracle(frame, oracle(qrels, run, threshold, judged_only=True))


@pytest.mark.slow
@pytest.mark.parametrize("name", COLLECTIONS)
def test_trec_convention_equals_pytrec_eval_on_a_seeded_run_with_ties(datasets_dir, name):
    folder = datasets_dir / name
    qrels = load_qrels(folder)
    run = random_run(folder, qrels, seed=len(name))
    thresholds = (1, 2, 3) if name == "cranfield" else (1,)
    for threshold in thresholds:
        frame = evaluate_run(run, qrels, k=CUTOFFS, convention="trec", relevance_threshold=threshold)
        assert_equal_to_oracle(frame, oracle(qrels, run, threshold))
    # the same run as a run DataFrame (rank column deliberately meaningless): trec re-orders by score
    rows = [(qid, 1, doc, score) for qid, docs in run.items() for doc, score in docs.items()]
    run_df = pd.DataFrame(rows, columns=["query_id", "rank", "key", "score"])
    annotations = pd.DataFrame(
        [(qid, doc, grade) for qid, docs in qrels.items() for doc, grade in docs.items()],
        columns=["query_id", "key", "grade"],
    )
    frame = evaluate_run(run_df, annotations, k=CUTOFFS, convention="trec")
    assert_equal_to_oracle(frame, oracle(qrels, run, 1))


@pytest.mark.slow
@pytest.mark.parametrize("name", ["cranfield", "cisi"])
def test_trec_convention_equals_pytrec_eval_on_bm25(datasets_dir, name):
    folder = datasets_dir / name
    qrels = load_qrels(folder)
    run = bm25_run(folder, qrels)
    frame = evaluate_run(run, qrels, k=CUTOFFS, convention="trec")
    assert_equal_to_oracle(frame, oracle(qrels, run, 1))
