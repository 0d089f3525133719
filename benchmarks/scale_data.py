"""Seeded comparisons at scale: two runs, graded qrels, queries and a config, written without a per-row loop.

``write_comparison(folder, level=..., n_queries=..., hits=...)`` writes what ``abcompare run`` reads:
- ``document``: two TREC runs and TREC qrels. With ``chunk_keys`` the docnos are chunk keys (``d12#3``,
  several chunks of a document in one list) so the run collapses to documents; without, document ids (the
  issue 38 scenario).
- ``chunk``: the same shape, judged on chunk keys (the qrels name chunks).
- ``span``: two Parquet runs whose hits carry ``document_id`` and ``start``/``end``, and evidence spans.

Each query has 1-7 relevant items (grades 1-3) plus 2 judged non-relevant, drawn near the top of the
candidates (so most are retrieved) and some beyond the depth (judged, never retrieved); a few queries of the
runs have no judgment and a few judged queries are missing from the treatment. Scores are distinct within a
list, so every tool ranks identically.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

__all__ = ["write_comparison"]

CHUNKS = 3  # chunks per document (chunk keys and span level)
CHUNK_CHARS, CHUNK_STRIDE = 120, 100  # chunk c of a document covers [100c, 100c + 120)


def _names(prefix: str, numbers: np.ndarray) -> pa.Array:
    return pc.binary_join_element_wise(prefix, pc.cast(pa.array(numbers), pa.string()), "")


def _candidates(rng: np.random.Generator, n_queries: int, hits: int) -> tuple[np.ndarray, np.ndarray]:
    """(query index, item number) of each query's candidates, 1.5x the depth, items distinct in a query."""
    per_query = hits + hits // 2
    query = np.repeat(np.arange(n_queries), per_query)
    item = query * per_query + np.tile(np.arange(per_query), n_queries)
    return query, item


def _ranked(rng: np.random.Generator, query: np.ndarray, item: np.ndarray, hits: int, noise: float):
    """The top ``hits`` candidates of each query by a noisy score (candidate order plus noise), best first."""
    per_query = len(item) // (query[-1] + 1)
    position = np.tile(np.arange(per_query), query[-1] + 1)
    score = -position + rng.normal(0.0, noise, len(item))
    order = np.lexsort((-score, query))
    q, it = query[order], item[order]
    rank = np.tile(np.arange(1, per_query + 1), q[-1] + 1)
    keep = rank <= hits
    return q[keep], it[keep], rank[keep]


def _judged(
    rng: np.random.Generator, n_queries: int, per_query: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(query index, candidate position, grade): 1-7 relevant (grades 1-3) and 2 non-relevant per query."""
    n_relevant = rng.integers(1, 8, n_queries)
    draws = 12
    query = np.repeat(np.arange(n_queries), draws)
    position = np.minimum(rng.exponential(per_query / 6, len(query)).astype(np.int64), per_query - 1)
    order = np.lexsort((position, query))
    query, position = query[order], position[order]
    first = np.ones(len(query), bool)
    first[1:] = (query[1:] != query[:-1]) | (position[1:] != position[:-1])
    query, position = query[first], position[first]  # distinct positions per query
    starts = np.searchsorted(query, np.arange(n_queries))
    nth = np.arange(len(query)) - starts[query]
    shuffled = rng.permutation(len(query))  # which drawn positions are relevant: random, not the best ones
    key = np.lexsort((shuffled, query))
    query, position, nth = query[key], position[key], nth[key]
    nth = np.arange(len(query)) - starts[query]
    relevant = nth < n_relevant[query]
    judged = relevant | (nth < n_relevant[query] + 2)
    grade = np.where(relevant, rng.integers(1, 4, len(query)), 0)
    return query[judged], position[judged], grade[judged]


def write_comparison(
    folder: str | Path,
    *,
    level: str = "document",
    n_queries: int = 200,
    hits: int = 100,
    seed: int = 0,
    chunk_keys: bool = True,
    convention: str = "trec",
    cutoffs: tuple[int, ...] = (1, 5, 10, 100),
    n_resamples: int = 1_000,
    tracking: bool = False,
) -> Path:
    """Write a control and a treatment run, judgments, queries and a config into ``folder``; return the
    config."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    query, item = _candidates(rng, n_queries, hits)
    per_query = hits + hits // 2
    qids = _names("q", np.arange(n_queries))
    chunked = level in ("chunk", "span") or chunk_keys
    # an item is a chunk (document item // CHUNKS, chunk item % CHUNKS) when keys are chunked

    def key_of(items: np.ndarray) -> pa.Array:
        if not chunked:
            return _names("d", items)
        docs = _names("d", items // CHUNKS)
        return pc.binary_join_element_wise(docs, pc.cast(pa.array(items % CHUNKS), pa.string()), "#")

    runs = {}
    unjudged_queries = max(1, n_queries // 50)  # the last queries of the runs have no judgment
    for name, noise in (("control", 8.0), ("treatment", 7.0)):
        q, it, rank = _ranked(rng, query, item, hits, noise)
        if name == "treatment":  # a few judged queries the treatment never answered
            keep = (q % 97) != 5
            q, it, rank = q[keep], it[keep], rank[keep]
        score = (hits + 1 - rank).astype(np.float64) + 0.25
        qid = pc.take(qids, pa.array(q))
        if level == "span":
            table = pa.table(
                {
                    "query_id": qid,
                    "rank": pa.array(rank),
                    "score": pa.array(score),
                    "document_id": _names("d", it // CHUNKS),
                    "chunk_index": pa.array(it % CHUNKS),
                    "start": pa.array((it % CHUNKS) * CHUNK_STRIDE),
                    "end": pa.array((it % CHUNKS) * CHUNK_STRIDE + CHUNK_CHARS),
                }
            )
            path = folder / f"{name}.parquet"
            pq.write_table(table, path)
        else:
            n = len(q)
            table = pa.table(
                {
                    "qid": qid,
                    "q0": pa.array(np.full(n, "Q0")),
                    "docno": key_of(it),
                    "rank": pa.array(rank),
                    "score": pa.array(score),
                    "tag": pa.array(np.full(n, name)),
                }
            )
            path = folder / f"{name}.trec"
            options = pacsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")
            pacsv.write_csv(table, path, write_options=options)
        runs[name] = path

    jq, position, grade = _judged(rng, n_queries - unjudged_queries, per_query)
    judged_item = jq * per_query + position
    jqid = pc.take(qids, pa.array(jq))
    if level == "span":
        doc = judged_item // CHUNKS
        # evidence inside the chunk: [100c + 10, 100c + 60), overlapping chunk c (and chunk c-1's tail)
        start = (judged_item % CHUNKS) * CHUNK_STRIDE + 10
        relevant = grade > 0
        spans = pa.table(
            {
                "query_id": jqid.filter(pa.array(relevant)),
                "document_id": _names("d", doc[relevant]),
                "start": pa.array(start[relevant]),
                "end": pa.array(start[relevant] + 50),
                "grade": pa.array(grade[relevant]),
            }
        )
        spans_path = folder / "spans.jsonl"
        spans_path.write_text("".join(_json_line(row) for row in spans.to_pylist()))
        annotations_line = f"  spans: {spans_path.name}\n  annotations: qrels.txt\n"
        qrels_items = _names("d", doc)
    else:
        qrels_items = (
            key_of(judged_item)
            if level == "chunk"
            else _names("d", judged_item // CHUNKS if chunked else judged_item)
        )
        annotations_line = "  annotations: qrels.txt\n"
    qrels = pa.table(
        {
            "qid": jqid,
            "zero": pa.array(np.zeros(len(jq), np.int64)),
            "docno": qrels_items,
            "grade": pa.array(grade),
        }
    )
    if level != "chunk" and chunked:  # chunks of one document judged twice: keep the document once
        qrels = qrels.group_by(["qid", "zero", "docno"], use_threads=False).aggregate([("grade", "max")])
        qrels = qrels.rename_columns(["qid", "zero", "docno", "grade"])
    options = pacsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")
    pacsv.write_csv(qrels, folder / "qrels.txt", write_options=options)
    queries = pa.table({"query_id": qids, "text": _names("query text ", np.arange(n_queries))})
    tsv = pacsv.WriteOptions(include_header=False, delimiter="\t", quoting_style="none")
    pacsv.write_csv(queries, folder / "queries.tsv", write_options=tsv)
    fmt = "parquet" if level == "span" else "trec"
    metrics = ", ".join(str(k) for k in cutoffs)
    config = folder / "config.yaml"
    config.write_text(
        f"""\
name: scale-{level}
dataset:
  name: scale
  level: {level}
  queries: queries.tsv
{annotations_line}control:
  run: {{path: {runs["control"].name}, format: {fmt}}}
treatments:
  treatment:
    run: {{path: {runs["treatment"].name}, format: {fmt}}}
evaluation:
  cutoffs: [{metrics}]
  convention: {convention}
  primary_metric: ndcg@10
significance:
  n_resamples: {n_resamples}
efficiency:
  repeats: 0
tracking:
  enabled: {str(tracking).lower()}
  experiment: scale-{level}
"""
    )
    return config


def _json_line(row: dict) -> str:
    import json

    return json.dumps(row) + "\n"
