"""Shared collections as pytrec_eval / ir_measures inputs: qrels, a seeded run with ties, a real BM25 run."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from support.environment import require_module
from support.frames import qrels_dict


def load_qrels(folder: Path) -> dict[str, dict[str, int]]:
    """A BEIR folder's test qrels as ``{query: {doc: grade}}``."""
    return qrels_dict(folder / "qrels" / "test.tsv")


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
    bm25s = require_module("bm25s")
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
