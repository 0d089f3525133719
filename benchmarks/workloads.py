"""Seeded workload generators: TREC run + graded qrels files for evaluation, paired metric tables for tests.

Every workload is a pure function of its size and seed, so every tool in a run sees the very same data.
Files go under ``benchmarks/_data/`` (git-ignored) and are reused when a manifest says they match.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

DATA_DIR = Path(__file__).resolve().parent / "_data"
HITS_PER_QUERY = 100
GRADE_PROBABILITIES = (0.3, 0.35, 0.2, 0.15)  # grades 0..3 of a judged document
SIGNIFICANCE_CUTOFFS = (1, 5, 10)
SIGNIFICANCE_MEASURES = ("precision", "recall", "f1", "mrr", "ndcg")
_FORMAT_VERSION = 1


@dataclass(frozen=True)
class EvaluationWorkload:
    """A TREC run file and a TREC qrels file on disk, and how they were made."""

    n_queries: int
    hits: int
    seed: int
    run_path: Path
    qrels_path: Path


#: The evaluation workloads: ``distinct`` (distinct scores, about 8% of hits judged) and ``tied`` (the
#: shape of issue 16: every docno distinct over the run, about 6% of hits judged, scores with 3 decimals,
#: so many ties, written in score order with ties in the system's own order, not trec_eval's).
WORKLOADS: tuple[str, ...] = ("distinct", "tied")


def evaluation_workload(
    n_queries: int,
    hits: int = HITS_PER_QUERY,
    seed: int = 0,
    data_dir: Path | None = None,
    kind: str = "distinct",
) -> EvaluationWorkload:
    """Write (or reuse) a run of ``n_queries`` x ``hits`` and graded qrels; returns their paths.

    ``distinct``: scores are distinct within a query (so every tool ranks identically), about 8 judged
    documents per query come from the run (denser near the top), 2 more are judged but never retrieved.
    ``tied``: every docno of the run is distinct (10M at 100k x 100), scores have 3 decimals (about a
    third of the hits tie with another of their query; ties are written in random order, as a system's
    internal order would leave them), about 6% of the hits are judged (denser near the top), 2 more per
    query judged but never retrieved. Both: grades 0..3, every query has a document of grade >= 1.
    """
    if kind not in WORKLOADS:
        raise ValueError(f"unknown workload {kind!r}: use one of {', '.join(WORKLOADS)}")
    name = f"eval_q{n_queries}_h{hits}_s{seed}" + ("" if kind == "distinct" else f"_{kind}")
    folder = (data_dir or DATA_DIR) / name
    manifest = {"version": _FORMAT_VERSION, "n_queries": n_queries, "hits": hits, "seed": seed}
    if kind != "distinct":
        manifest["kind"] = kind
    workload = EvaluationWorkload(n_queries, hits, seed, folder / "run.trec", folder / "qrels.trec")
    manifest_path = folder / "manifest.json"
    if manifest_path.is_file() and json.loads(manifest_path.read_text()) == manifest:
        return workload
    folder.mkdir(parents=True, exist_ok=True)
    if kind == "distinct":
        run, qrels = _evaluation_tables(n_queries, hits, seed)
        _write_space_separated(run, workload.run_path, float_format="%.4f")
    else:
        run, qrels = _tied_tables(n_queries, hits, seed)
        _write_space_separated(run, workload.run_path, float_format="%.3f")
    _write_space_separated(qrels, workload.qrels_path)
    manifest_path.write_text(json.dumps(manifest))
    return workload


def _evaluation_tables(n_queries: int, hits: int, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The run (query, Q0, doc, rank, score, tag) and qrels (query, 0, doc, grade) rows, vectorised."""
    rng = np.random.default_rng(seed)
    pool = max(1_000_000, 10 * n_queries * hits)
    docs = np.sort(rng.integers(0, pool, size=(n_queries, hits)), axis=1)
    repeated = np.zeros_like(docs, dtype=bool)
    repeated[:, 1:] = docs[:, 1:] == docs[:, :-1]
    docs = np.where(repeated, pool + np.arange(hits), docs)  # distinct within each query
    docs = rng.permuted(docs, axis=1)  # rank order unrelated to the id
    gaps = rng.integers(1, 2_000, size=(n_queries, hits))
    scores = (gaps[:, ::-1].cumsum(axis=1)[:, ::-1] + rng.integers(0, 10_000, size=(n_queries, 1))) / 1e4
    query_ids = np.char.add("q", np.arange(n_queries).astype(str)).astype(object)
    doc_ids = np.char.add("d", docs.astype(str)).astype(object)
    run = _run_frame(query_ids, doc_ids, scores)
    position = np.arange(hits)
    judged = rng.random((n_queries, hits)) < 0.3 * np.exp(-position / 20.0) + 0.02
    return run, _qrels(rng, judged, doc_ids, query_ids)


def _tied_tables(n_queries: int, hits: int, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The ``tied`` workload's run and qrels: distinct docnos over the whole run, 3-decimal scores."""
    rng = np.random.default_rng(seed)
    docs = rng.choice(2 * n_queries * hits, size=(n_queries, hits), replace=False)
    base = rng.uniform(0.4, 0.8, size=(n_queries, 1))
    scores = np.round(base + 0.08 * rng.standard_normal((n_queries, hits)), 3)
    scores = -np.sort(-scores, axis=1)  # score order; ties stay in the (random) order of ``docs``
    query_ids = np.char.add("q", np.arange(n_queries).astype(str)).astype(object)
    doc_ids = np.char.add("D", docs.astype(str)).astype(object)
    run = _run_frame(query_ids, doc_ids, scores)
    position = np.arange(hits)
    judged = rng.random((n_queries, hits)) < 0.2 * np.exp(-position / 20.0) + 0.02
    return run, _qrels(rng, judged, doc_ids, query_ids)


def _run_frame(query_ids: np.ndarray, doc_ids: np.ndarray, scores: np.ndarray) -> pd.DataFrame:
    """A TREC run table from per-query arrays (``doc_ids``, ``scores``: a row per query, in rank order)."""
    n_queries, hits = doc_ids.shape
    return pd.DataFrame(
        {
            "query_id": np.repeat(query_ids, hits),
            "q0": "Q0",
            "doc_id": doc_ids.ravel(),
            "rank": np.tile(np.arange(1, hits + 1), n_queries),
            "score": scores.ravel(),
            "tag": "bench",
        }
    )


def _qrels(
    rng: np.random.Generator, judged: np.ndarray, doc_ids: np.ndarray, query_ids: np.ndarray
) -> pd.DataFrame:
    """Graded qrels (query, 0, doc, grade) for the judged cells of the (queries x hits) run, about 2 more
    judged but unretrieved documents per query, and at least one relevant document per query."""
    n_queries = len(query_ids)
    judged_query, judged_position = np.nonzero(judged)
    n_missing = rng.poisson(2.0, size=n_queries)
    missing_query = np.repeat(np.arange(n_queries), n_missing)
    missing_index = np.arange(missing_query.size) - np.repeat(np.cumsum(n_missing) - n_missing, n_missing)
    missing_docs = np.char.add(
        np.char.add("u", missing_query.astype(str)), np.char.add("_", missing_index.astype(str))
    ).astype(object)
    qrel_query = np.concatenate([judged_query, missing_query])
    qrel_doc = np.concatenate([doc_ids[judged_query, judged_position], missing_docs])
    grade = rng.choice(len(GRADE_PROBABILITIES), p=GRADE_PROBABILITIES, size=qrel_query.size)
    # at least one relevant document per query: raise the first judgment of queries that have none
    order = np.argsort(qrel_query, kind="stable")
    qrel_query, qrel_doc, grade = qrel_query[order], qrel_doc[order], grade[order]
    best = np.zeros(n_queries, dtype=np.int64)
    np.maximum.at(best, qrel_query, grade)
    first = np.concatenate(([True], qrel_query[1:] != qrel_query[:-1]))
    grade = np.where(first & (best[qrel_query] == 0), 1, grade)
    judgeless = np.flatnonzero(np.bincount(qrel_query, minlength=n_queries) == 0)
    if judgeless.size:  # a query with no judgment at all gets one relevant unretrieved document
        qrel_query = np.concatenate([qrel_query, judgeless])
        qrel_doc = np.concatenate([qrel_doc, np.char.add("v", judgeless.astype(str)).astype(object)])
        grade = np.concatenate([grade, np.ones(judgeless.size, dtype=grade.dtype)])
        order = np.argsort(qrel_query, kind="stable")
        qrel_query, qrel_doc, grade = qrel_query[order], qrel_doc[order], grade[order]
    return pd.DataFrame(
        {"query_id": query_ids[qrel_query], "iteration": 0, "doc_id": qrel_doc, "grade": grade}
    )


def _write_space_separated(frame: pd.DataFrame, path: Path, float_format: str | None = None) -> None:
    """One line per row, fields separated by single spaces (the TREC file layout)."""
    tmp = path.with_suffix(path.suffix + ".tmp")
    frame.to_csv(tmp, sep=" ", header=False, index=False, quoting=csv.QUOTE_NONE, float_format=float_format)
    tmp.replace(path)


# ------------------------------------------------------------------------------------------ significance
def significance_columns() -> list[str]:
    """The 15 metric columns of the significance workload: 5 measures at cutoffs 1, 5, 10."""
    return [f"{m}@{k}" for m in SIGNIFICANCE_MEASURES for k in SIGNIFICANCE_CUTOFFS]


def significance_workload(n_queries: int, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per-query metric tables (control, treatment) of ``n_queries`` with the 15 columns, paired by query.

    Each query has a relevant count and a per-system chance that a hit in the top 10 is relevant; the
    treatment's chance is the control's plus a small shift, and both systems draw their hits from the same
    uniforms, so the pairs are correlated and the values discrete, as real per-query metrics are.
    """
    rng = np.random.default_rng(seed)
    depth = max(SIGNIFICANCE_CUTOFFS)
    relevant = 1 + rng.poisson(3.0, size=n_queries)
    base = rng.beta(1.2, 3.0, size=n_queries)
    shift = rng.normal(0.02, 0.08, size=n_queries)
    uniforms = rng.random((n_queries, depth))
    query_ids = pd.Index(np.char.add("q", np.arange(n_queries).astype(str)).astype(object), name="query_id")
    frames = []
    for chance in (base, np.clip(base + shift, 0.0, 1.0)):
        hits = uniforms < chance[:, None]
        frames.append(pd.DataFrame(_binary_metrics(hits, relevant), index=query_ids))
    return frames[0], frames[1]


def _binary_metrics(hits: np.ndarray, relevant: np.ndarray) -> dict[str, np.ndarray]:
    """P, R, F1, RR and binary nDCG at cutoffs 1, 5, 10 of 0/1 hit matrices (queries x depth)."""
    discount = 1.0 / np.log2(np.arange(2, hits.shape[1] + 2))
    hits = hits & (hits.cumsum(axis=1) <= relevant[:, None])  # no more relevant hits than relevant items
    tp_cumulative = hits.cumsum(axis=1)
    first = np.where(hits.any(axis=1), hits.argmax(axis=1), hits.shape[1])
    columns: dict[str, np.ndarray] = {}
    for k in SIGNIFICANCE_CUTOFFS:
        tp = tp_cumulative[:, k - 1].astype(np.float64)
        precision = tp / k
        recall = tp / relevant
        total = precision + recall
        f1 = np.divide(2 * precision * recall, total, out=np.zeros_like(total), where=total > 0)
        rr = np.where(first < k, 1.0 / (first + 1.0), 0.0)
        dcg = (hits[:, :k] * discount[:k]).sum(axis=1)
        ideal = np.cumsum(discount[:k])[np.minimum(relevant, k) - 1]
        columns |= {
            f"precision@{k}": precision,
            f"recall@{k}": recall,
            f"f1@{k}": f1,
            f"mrr@{k}": rr,
            f"ndcg@{k}": dcg / ideal,
        }
    return {name: columns[name] for name in significance_columns()}
