"""The trec convention equals pytrec_eval (trec_eval's C code) to 1e-9 on the shared real collections.

Runs are built here, cheaply and deterministically: a seeded random run over the corpus ids with some
relevant documents mixed in and scores rounded so that ties are common (trec_eval's tie rule matters),
and a real BM25 run (bm25s) on the two small collections. Cranfield's qrels are graded (1-4).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from abcompare.evaluation.batch import evaluate_run

pytrec_eval = pytest.importorskip("pytrec_eval")

CUTOFFS = (1, 3, 5, 10, 20, 100)
ATOL = 1e-9
COLLECTIONS = ("scifact", "cranfield", "cisi")


def load_qrels(folder: Path) -> dict[str, dict[str, int]]:
    frame = pd.read_csv(folder / "qrels" / "test.tsv", sep="\t", dtype=str)
    qrels: dict[str, dict[str, int]] = {}
    for qid, doc, grade in frame.itertuples(index=False):
        qrels.setdefault(qid, {})[doc] = int(grade)
    return qrels


def load_jsonl(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def random_run(folder: Path, qrels: dict[str, dict[str, int]], seed: int) -> dict[str, dict[str, float]]:
    """100 corpus ids per judged query (plus about half its relevant ids), scores on a coarse grid."""
    rng = np.random.default_rng(seed)
    doc_ids = np.array([doc["_id"] for doc in load_jsonl(folder / "corpus.jsonl")], dtype=object)
    run = {}
    for i, (qid, judged) in enumerate(qrels.items()):
        if i % 10 == 9:
            continue  # some judged queries retrieve nothing
        picked = list(rng.choice(doc_ids, size=100, replace=False))
        relevant = [doc for doc in judged if rng.random() < 0.5]
        scores = np.round(rng.random(len(picked) + len(relevant)) * 20) / 4  # many ties
        run[qid] = {doc: float(s) for doc, s in zip(picked + relevant, scores, strict=True)}
    return run


def bm25_run(folder: Path, qrels: dict[str, dict[str, int]]) -> dict[str, dict[str, float]]:
    bm25s = pytest.importorskip("bm25s")
    corpus = load_jsonl(folder / "corpus.jsonl")
    queries = {q["_id"]: q["text"] for q in load_jsonl(folder / "queries.jsonl") if q["_id"] in qrels}
    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize([f"{d['title']} {d['text']}" for d in corpus], show_progress=False),
                    show_progress=False)  # fmt: skip
    qids = list(queries)
    docs, scores = retriever.retrieve(
        bm25s.tokenize([queries[q] for q in qids], show_progress=False), k=100, show_progress=False
    )
    ids = [d["_id"] for d in corpus]
    return {
        qid: {ids[int(j)]: float(np.float32(s)) for j, s in zip(docs[i], scores[i], strict=True)}
        for i, qid in enumerate(qids)
    }


def oracle(qrels, run, threshold: int) -> dict[str, dict[str, float]]:
    """pytrec_eval's P, recall, nDCG@k and RR (cut at k by truncating each query's run, trec order)."""
    measures = {f"{m}.{','.join(map(str, CUTOFFS))}" for m in ("P", "recall", "ndcg_cut")}
    result = pytrec_eval.RelevanceEvaluator(qrels, measures, relevance_level=threshold).evaluate(run)
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
def test_trec_convention_equals_pytrec_eval_on_a_seeded_run_with_ties(datasets_dir, name):
    folder = datasets_dir / name
    qrels = load_qrels(folder)
    run = random_run(folder, qrels, seed=len(name))
    thresholds = (1, 2) if name == "cranfield" else (1,)
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
