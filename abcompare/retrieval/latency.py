"""Query latency timed so that equal work reads equal: after every variant has run, a timing pass re-runs
each variant's query stage, one query at a time, on the same sample of queries, in interleaved rounds.

Only query-time work is timed: the indexes and chunk vectors come from the retrieval memo (built by the
variants' own run, or built here once, untimed); a query is tokenised and searched (BM25), or encoded by
the model itself, bypassing the embedding cache, and searched (dense); then its lists are fused,
reranked and cut. A retriever several variants share (a sweep over fusion) is one stage, timed once per
query and round and charged to each of them, as the production pass charges it. A warm-up over a few
queries comes first and is not kept (model and allocator warm-up); it also sizes the sample to the time
budget. In each round every query is timed for every stage in turn, the stages' order rotated from
query to query and round to round, so a busy spell of the machine falls on all of them alike; Python's
garbage collector runs between rounds, not inside a timed stage (a collection costs whichever stage it
lands on the whole heap's work, as ``timeit`` avoids too). The
samples (rounds x queries, seconds) go to :mod:`abcompare.stats.cost`, which summarises them.
"""

from __future__ import annotations

import gc
import math
import time
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from abcompare.retrieval import pipeline
from abcompare.retrieval.embedding_cache import Progress
from abcompare.retrieval.query_planning import feedback_of, plan_queries
from abcompare.retrieval.rerank import make_reranker
from abcompare.retrieval.settings import BM25Settings, VariantSettings

#: Queries of the warm-up (not kept); it also measures what a query costs, to size the sample.
WARMUP_QUERIES = 5
#: The sample never shrinks below this many queries for the budget (unless the query set is smaller).
MIN_TIMED_QUERIES = 5


@dataclass(frozen=True)
class TimingPlan:
    """How much to time: ``repeats`` rounds over at most ``max_queries`` queries, fewer when the rounds
    would take more than ``budget_seconds``."""

    repeats: int = 5
    max_queries: int = 100
    budget_seconds: float = 2.0


def sample_queries(total: int, count: int) -> list[int]:
    """``count`` query positions spread evenly over ``total`` (all of them when ``count >= total``)."""
    if count >= total:
        return list(range(total))
    return sorted({int(round(x)) for x in np.linspace(0, total - 1, count)})


def sample_size(total: int, seconds_per_query: float, plan: TimingPlan) -> int:
    """How many queries the rounds time: as many as fit the budget (``seconds_per_query``: one query's
    every stage, from the warm-up), between :data:`MIN_TIMED_QUERIES` and ``plan.max_queries``."""
    fits = plan.budget_seconds / (plan.repeats * seconds_per_query) if seconds_per_query > 0 else math.inf
    wanted = max(MIN_TIMED_QUERIES, int(fits) if math.isfinite(fits) else plan.max_queries)
    return min(total, plan.max_queries, wanted)


Stage = Callable[[int], Any]


def _retriever_stage(
    name: str, spec: Any, chunks: list, chunks_id: Hashable, depth: int, query_texts: list[str],
    cache_dir: Path, memo: pipeline.RetrievalCache, feedback: Any = None,
) -> tuple[Stage, Callable[[], list]]:  # fmt: skip
    """One retriever's work for one query text (by position in ``query_texts``, the variant's planned
    texts): search (with RM3 ``feedback``, the expanded query), and for a dense model encode the text;
    and how to get its hits for every text at once, as the production pass does (when the memo lacks
    them: on Ray, whose workers made them)."""
    if isinstance(spec, BM25Settings):
        index = memo.get(
            pipeline.bm25_index_key(chunks_id, spec), lambda: pipeline.build_bm25_index(chunks, spec)
        )

        def bm25(i: int) -> Any:
            return pipeline.ranked_hits(
                chunks, pipeline.bm25_ranking(index, [query_texts[i]], depth, feedback), name
            )

        def all_bm25() -> list:
            return pipeline.ranked_hits(
                chunks, pipeline.bm25_ranking(index, query_texts, depth, feedback), name
            )

        return bm25, all_bm25
    encoder = pipeline.dense_encoder(spec, cache_dir)
    vectors = memo.get(
        pipeline.dense_vectors_key(chunks_id, encoder, spec, cache_dir),
        lambda: pipeline.encode_chunks(encoder, pipeline.document_texts(chunks, spec)),
    ).vectors

    def dense(i: int) -> Any:
        query_vector = encoder.encode_now(pipeline.query_texts_for(spec, [query_texts[i]]))
        return pipeline.ranked_hits(chunks, pipeline.dense_ranking(query_vector, vectors, depth), name)

    def all_dense() -> list:  # the query vectors the run put in the embedding cache
        query_vectors = encoder.encode(pipeline.query_texts_for(spec, query_texts))
        return pipeline.ranked_hits(chunks, pipeline.dense_ranking(query_vectors, vectors, depth), name)

    return dense, all_dense


def _per_question(per_text: Stage, groups: Sequence[range]) -> Stage:
    """A retriever's work for one question: every one of its planned texts (one without planning)."""

    def question(i: int) -> Any:
        return [per_text(row) for row in groups[i]]

    return question


def _finish_stage(
    variant: VariantSettings, hits: list[list[list[Any]]], query_ids: list[str], query_texts: list[str],
    cache_dir: Path,
) -> Stage:  # fmt: skip
    """A variant's own work for one query: fuse its retrievers' lists (``hits``: per retriever, per
    planned text) and its planned texts' lists, rerank, cut."""
    reranker = make_reranker(variant.rerank, cache_dir) if variant.rerank is not None else None
    groups = plan_queries(variant.query_planning, query_ids, query_texts).groups

    def finish(i: int) -> Any:
        lists = [[per_text[row] for row in groups[i]] for per_text in hits]
        return pipeline.finish_variant(
            variant, lists, [query_ids[i]], [query_texts[i]], cache_dir, reranker=reranker
        )

    return finish


def time_query_stages(
    variants: Mapping[str, VariantSettings],
    corpus: Any,
    queries: Any,
    *,
    cache_dir: Path,
    cache: pipeline.RetrievalCache,
    plan: TimingPlan | None = None,
    progress: Progress | None = None,
) -> dict[str, np.ndarray]:
    """Each retrieval variant's timed query latency: ``repeats`` x sampled-queries seconds (see the module
    docstring). Variants given as run files are left out. ``cache`` is the memo the variants ran with
    (what is missing from it is built here, untimed)."""
    plan = plan or TimingPlan()
    variants = {name: v for name, v in variants.items() if v.run is None}
    query_ids, query_texts = pipeline.query_table(queries)
    if not variants or not query_ids or plan.repeats == 0:
        return {}
    fingerprint = pipeline.corpus_fingerprint(corpus)
    stages: dict[Hashable, Stage] = {}
    hits_of: dict[Hashable, list] = {}
    uses: dict[str, list[Hashable]] = {}
    for name, variant in variants.items():
        chunks_id = pipeline.chunks_key(fingerprint, variant.chunking)
        chunks = cache.get(("chunks", chunks_id), lambda v=variant: pipeline.chunk_corpus(corpus, v.chunking))
        keys: list[Hashable] = []
        hits = []
        texts = plan_queries(variant.query_planning, query_ids, query_texts)
        feedback = feedback_of(variant)
        planned_id = pipeline.queries_key(texts.texts)
        for retriever, spec in variant.retrievers.items():
            key = pipeline.ranking_key(
                retriever, spec, chunks_id, variant.depth, planned_id, cache_dir, feedback
            )
            if key not in stages:
                per_text, everything = _retriever_stage(
                    retriever, spec, chunks, chunks_id, variant.depth, texts.texts, cache_dir, cache, feedback
                )
                stages[key] = _per_question(per_text, texts.groups)
                hits_of[key] = cache.get(key, everything)
            hits.append(hits_of[key])
            keys.append(key)
        stages[("finish", name)] = _finish_stage(variant, hits, query_ids, query_texts, cache_dir)
        uses[name] = [*keys, ("finish", name)]
    order = list(stages)
    warmup = sample_queries(len(query_ids), min(WARMUP_QUERIES, len(query_ids)))
    for key in order:  # the first query loads what the run had no need of (a model, when its query
        stages[key](warmup[0])  # vectors were cached): not part of what a query costs
    start = time.perf_counter()
    for i in warmup[1:]:
        for key in order:
            stages[key](i)
    per_query = (time.perf_counter() - start) / max(len(warmup) - 1, 1)
    picked = sample_queries(len(query_ids), sample_size(len(query_ids), per_query, plan))
    seconds = {key: np.zeros((plan.repeats, len(picked))) for key in order}
    total = plan.repeats * len(picked)
    collecting = gc.isenabled()
    try:
        for r in range(plan.repeats):
            gc.collect()  # the collector runs between rounds, never inside a timed stage
            gc.disable()  # (reference counting still frees each query's hits as it goes)
            for j, i in enumerate(picked):
                shift = (r + j) % len(order)
                for key in order[shift:] + order[:shift]:
                    begin = time.perf_counter()
                    stages[key](i)
                    seconds[key][r, j] = time.perf_counter() - begin
                if progress is not None:
                    progress(r * len(picked) + j + 1, total)
            if collecting:
                gc.enable()
    finally:
        if collecting:
            gc.enable()
    return {name: sum(seconds[key] for key in keys) for name, keys in uses.items()}
