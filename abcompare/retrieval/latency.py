"""Query latency timed so that equal work reads equal: after every variant has run, a timing pass re-runs
each variant's query stage, one query at a time, on the same sample of queries, in interleaved rounds.

Only query-time work is timed: the indexes and chunk vectors come from the retrieval memo (built by the
variants' own run, or built here once, untimed); a query is tokenised and searched (BM25), or encoded by
the model itself, bypassing the embedding cache, and searched (dense); then its lists are fused,
reranked and cut (a bi-encoder rerank encodes the query with its model too). A retriever several
variants share (a sweep over fusion) is one stage, timed once per query and round and charged to each of
them, as the production pass charges it.

Where the pass's wall time goes, and what bounds it:

1. Preparation, outside the budget, at most once per model and artefact: each stage made ready (what the
   memo lacks is built; on Ray the driver builds it) and called once on the first query, untimed. A model
   the run loaded is the one timed (:data:`~abcompare.retrieval.models.LOADED_MODELS`: one load per
   process and model identity). When the run loaded none (its vectors came from the embedding cache, or
   Ray's workers encoded them), the pass loads a model only where its query encoding tells the variants
   apart: a dense stage every timed variant shares (two or more; a fusion or rerank comparison) is the
   same work charged to each, so its query vectors are read from the cache and only its search is timed
   (``untimed``: the models whose query encoding was left out; the cost line says so), rather than
   loading a model (tens of seconds with torch) to add the same figure to every variant. Otherwise the
   pass loads it and says so, with the seconds.
2. ``budget_seconds`` then bounds everything else but a floor: a warm-up (at most :data:`WARMUP_QUERIES`
   queries and :data:`WARMUP_SHARE` of the budget, not kept) that measures what a query costs, and the
   rounds, sized to the budget that is left. The floor is :data:`MIN_ROUNDS` whole rounds (fewer when
   fewer are asked) over the sample the warm-up sized (at least :data:`MIN_TIMED_QUERIES` queries): they
   are always timed, since fewer rounds let one busy round decide a median, and a cost line without a
   figure helps nobody; when they run past the budget the pass says by how much. Beyond the floor the
   clock is checked after every query, so the pass ends at most one query's stages past the budget or
   the floor, whichever ends later; a round the budget cut short is dropped.

In each round every query is timed for every stage in turn, the stages' order rotated from
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
from typing import TYPE_CHECKING, Any

import numpy as np

from abcompare.retrieval import pipeline
from abcompare.retrieval.embedding_cache import Progress
from abcompare.retrieval.models import LOADED_MODELS
from abcompare.retrieval.query_planning import feedback_of, plan_queries
from abcompare.retrieval.rerank import make_reranker
from abcompare.retrieval.settings import BM25Settings, DenseSettings, VariantSettings

if TYPE_CHECKING:
    import pandas as pd

    from abcompare.retrieval.settings import QueryPlanningSettings

#: Queries of the warm-up (not kept; the first is the preparation's call); it measures what a query costs,
#: to size the sample to the budget left.
WARMUP_QUERIES = 5
#: The warm-up stops once it has used this share of the budget (after at least one query).
WARMUP_SHARE = 0.25
#: The sample never shrinks below this many queries for the budget (unless the query set is smaller).
MIN_TIMED_QUERIES = 5
#: The warm-up's cost per query is scaled by this when the sample is sized (a slack for a machine whose
#: speed changes; the garbage collection between rounds is measured and set aside on its own).
SIZING_MARGIN = 1.2
#: Fewer whole rounds than this (or than ``repeats``, when fewer are asked) are not kept: a query's median
#: over the rounds then outvotes no busy round.
MIN_ROUNDS = 3
#: What the pass reads the time from: wall time, what a person waits for a query. Read at each pass's
#: start, so a test can give the pass a clock whose readings it knows (``tests/support/clock.py``) and pin
#: what the pass makes of them exactly; what a real machine's timings make of equal and unequal work is
#: measured in ``benchmarks/`` (``bench_cost``), never asserted in a test.
CLOCK: Callable[[], float] = time.perf_counter


@dataclass(frozen=True)
class TimingPlan:
    """How much to time: ``repeats`` rounds over at most ``max_queries`` queries, fewer when the warm-up
    and rounds would take more than ``budget_seconds`` (see the module docstring for what it bounds)."""

    repeats: int = 5
    max_queries: int = 100
    budget_seconds: float = 2.0


def sample_queries(total: int, count: int) -> list[int]:
    """``count`` query positions spread evenly over ``total`` (all of them when ``count >= total``)."""
    if count >= total:
        return list(range(total))
    return sorted({int(round(x)) for x in np.linspace(0, total - 1, count)})


def sample_size(total: int, seconds_per_query: float, plan: TimingPlan, budget: float | None = None) -> int:
    """How many queries the rounds time: as many as fit ``budget`` seconds (default: the plan's whole
    budget; ``seconds_per_query``: one query's every stage, from the warm-up), between
    :data:`MIN_TIMED_QUERIES` and ``plan.max_queries``."""
    budget = plan.budget_seconds if budget is None else max(budget, 0.0)
    fits = budget / (plan.repeats * seconds_per_query) if seconds_per_query > 0 else math.inf
    wanted = max(MIN_TIMED_QUERIES, int(fits) if math.isfinite(fits) else plan.max_queries)
    return min(total, plan.max_queries, wanted)


Stage = Callable[[int], object]


def _retriever_stage(
    name: str, spec: BM25Settings | DenseSettings, chunks: list, chunks_id: Hashable, depth: int,
    query_texts: list[str], cache_dir: Path, memo: pipeline.RetrievalCache,
    feedback: QueryPlanningSettings | None = None, encode: bool = True,
) -> tuple[Stage, Callable[[], list]]:  # fmt: skip
    """One retriever's work for one query text (by position in ``query_texts``, the variant's planned
    texts): search (with RM3 ``feedback``, the expanded query), and for a dense model encode the text
    (unless ``encode`` is false: then the query's vector is read from the embedding cache and only the
    search is timed); and how to get its hits for every text at once, as the production pass does (when
    the memo lacks them: on Ray, whose workers made them)."""
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

    def all_dense() -> list:  # the query vectors the run put in the embedding cache
        query_vectors = encoder.encode(pipeline.query_texts_for(spec, query_texts))
        return pipeline.ranked_hits(chunks, pipeline.dense_ranking(query_vectors, vectors, depth), name)

    if not encode:  # the query vectors the run cached, read once: only the search is timed
        cached = encoder.encode(pipeline.query_texts_for(spec, query_texts))

        def search_only(i: int) -> Any:
            ranking = pipeline.dense_ranking(cached[i : i + 1], vectors, depth)
            return pipeline.ranked_hits(chunks, ranking, name)

        return search_only, all_dense

    def dense(i: int) -> Any:
        query_vector = encoder.encode_now(pipeline.query_texts_for(spec, [query_texts[i]]))
        return pipeline.ranked_hits(chunks, pipeline.dense_ranking(query_vector, vectors, depth), name)

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
    reranker = make_reranker(variant.rerank, cache_dir, served=True) if variant.rerank is not None else None
    groups = plan_queries(variant.query_planning, query_ids, query_texts).groups

    def finish(i: int) -> Any:
        lists = [[per_text[row] for row in groups[i]] for per_text in hits]
        return pipeline.finish_variant(
            variant, lists, [query_ids[i]], [query_texts[i]], cache_dir, reranker=reranker
        )

    return finish


@dataclass
class TimingPass:
    """What one timing pass measured and where its wall time went: ``samples`` (per variant, rounds x
    queries, seconds; empty when nothing was kept, ``note`` says why), ``preparation_seconds`` (outside
    the budget: stages made ready, models loaded, one untimed call per stage), ``loaded`` (the models the
    pass itself loaded: name, seconds), ``budgeted_seconds`` (the warm-up and rounds, which the budget
    bounds), the whole rounds kept and the queries per round. ``note`` says the budget cut rounds (raise
    it to time them all; said as a stage line, not warned: on a busy machine it is the load's doing, and
    the cost line states the sample); ``overrun`` how far the floor's rounds ran past the budget,
    recorded but not said (nothing to do about a busy machine)."""

    samples: dict[str, np.ndarray]
    preparation_seconds: float = 0.0
    loaded: tuple[tuple[str, float], ...] = ()
    budgeted_seconds: float = 0.0
    rounds: int = 0
    queries: int = 0
    note: str = ""
    overrun: str = ""
    #: The models whose query encoding was not timed: a dense stage every variant shares, whose model the
    #: run did not load (see the module docstring); the variants' samples are its search alone.
    untimed: tuple[str, ...] = ()


def _stages(
    variants: Mapping[str, VariantSettings], corpus: pd.DataFrame, query_ids: list[str],
    query_texts: list[str], cache_dir: Path, cache: pipeline.RetrievalCache,
) -> tuple[dict[Hashable, Stage], dict[str, list[Hashable]], tuple[str, ...]]:  # fmt: skip
    """Every stage to time (a retriever several variants share is one), each variant's stages, and the
    models whose query encoding is left untimed (:func:`_encodes`)."""
    fingerprint = pipeline.corpus_fingerprint(corpus)
    planned: dict[str, tuple] = {}
    for name, variant in variants.items():
        chunks_id = pipeline.chunks_key(fingerprint, variant.chunking)
        chunks = cache.get(("chunks", chunks_id), lambda v=variant: pipeline.chunk_corpus(corpus, v.chunking))
        texts = plan_queries(variant.query_planning, query_ids, query_texts)
        feedback = feedback_of(variant)
        planned_id = pipeline.queries_key(texts.texts)
        depth = pipeline.fetch_depth(variant, chunks)
        keys = {
            retriever: pipeline.ranking_key(
                retriever, spec, chunks_id, depth, planned_id, cache_dir, feedback
            )
            for retriever, spec in variant.retrievers.items()
        }
        planned[name] = (chunks, chunks_id, texts, feedback, depth, keys)
    everyone = (
        set.intersection(*(set(p[-1].values()) for p in planned.values())) if len(planned) > 1 else set()
    )
    stages: dict[Hashable, Stage] = {}
    hits_of: dict[Hashable, list] = {}
    uses: dict[str, list[Hashable]] = {}
    untimed: list[str] = []
    for name, variant in variants.items():
        chunks, chunks_id, texts, feedback, depth, keys = planned[name]
        hits = []
        for retriever, spec in variant.retrievers.items():
            key = keys[retriever]
            if key not in stages:
                encode = _encodes(spec, cache_dir, shared=key in everyone)
                if not encode:
                    untimed.append(spec.model)
                per_text, everything = _retriever_stage(
                    retriever, spec, chunks, chunks_id, depth, texts.texts, cache_dir, cache, feedback, encode
                )
                stages[key] = _per_question(per_text, texts.groups)
                hits_of[key] = cache.get(key, everything)
            hits.append(hits_of[key])
        stages[("finish", name)] = _finish_stage(variant, hits, query_ids, query_texts, cache_dir)
        uses[name] = [*keys.values(), ("finish", name)]
    return stages, uses, tuple(dict.fromkeys(untimed))


def _encodes(spec: BM25Settings | DenseSettings, cache_dir: Path, *, shared: bool) -> bool:
    """Whether a retriever's stage encodes each query with its model (always, once the run loaded it):
    not a dense stage every timed variant shares whose model the run did not load (its query vectors
    are in the embedding cache; the same encoding charged to every variant tells none apart)."""
    if isinstance(spec, BM25Settings) or not shared:
        return True
    return pipeline.dense_encoder(spec, cache_dir).loaded


def _warm_up(
    stages: dict[Hashable, Stage], warmup: Sequence[int], started: float, plan: TimingPlan, first: float
) -> float:
    """Run every stage on the warm-up queries (within ``WARMUP_SHARE`` of the budget), and return what one
    query of every stage costs: the warm-up's mean, or without a warm-up query ``first`` (the first call's
    seconds, the models' loads set aside)."""
    clock = CLOCK
    warmed = 0
    for i in warmup:
        if warmed and clock() - started >= WARMUP_SHARE * plan.budget_seconds:
            break
        for key in stages:
            stages[key](i)
        warmed += 1
    return (clock() - started) / warmed if warmed else max(first, 1e-6)


def _timed_rounds(
    stages: dict[Hashable, Stage], picked: Sequence[int], plan: TimingPlan, deadline: float, fewest: int,
    progress: Progress | None,
) -> tuple[dict[Hashable, np.ndarray], int, float]:  # fmt: skip
    """The timed rounds: each stage's seconds (rounds x picked queries, the stages' order rotated query by
    query), the whole rounds kept, and how far past the deadline the floor's ``fewest`` rounds ended."""
    clock = CLOCK
    order = list(stages)
    seconds = {key: np.zeros((plan.repeats, len(picked))) for key in order}
    total = plan.repeats * len(picked)
    rounds = 0
    floor_past = 0.0  # how far past the deadline the floor's rounds ended (0: within the budget)
    collecting = gc.isenabled()
    try:
        for r in range(plan.repeats):
            gc.collect()  # the collector runs between rounds, never inside a timed stage
            gc.disable()  # (reference counting still frees each query's hits as it goes)
            for j, i in enumerate(picked):
                shift = (r + j) % len(order)
                for key in order[shift:] + order[:shift]:
                    start = clock()
                    stages[key](i)
                    seconds[key][r, j] = clock() - start
                if progress is not None:
                    progress(r * len(picked) + j + 1, total)
                if r >= fewest and clock() > deadline and j < len(picked) - 1:
                    break  # out of budget in the middle of a round past the floor: the round is dropped
            else:
                rounds += 1
            if collecting:
                gc.enable()
            now = clock()
            if r == fewest - 1:  # the floor's last round (never cut): did the floor alone outrun the budget?
                floor_past = max(now - deadline, 0.0)
            if rounds >= fewest and now > deadline:
                break
    finally:
        if collecting:
            gc.enable()
        gc.unfreeze()
    return seconds, rounds, floor_past


def timing_pass(
    variants: Mapping[str, VariantSettings],
    corpus: pd.DataFrame,
    queries: pd.DataFrame,
    *,
    cache_dir: Path,
    cache: pipeline.RetrievalCache,
    plan: TimingPlan | None = None,
    progress: Progress | None = None,
) -> TimingPass:
    """Each retrieval variant's timed query latency and the account of the pass's time (see the module
    docstring). Variants given as run files are left out. ``cache`` is the memo the variants ran with
    (what is missing from it is built here, in the preparation)."""
    plan = plan or TimingPlan()
    clock = CLOCK
    variants = {name: v for name, v in variants.items() if v.run is None}
    query_ids, query_texts = pipeline.query_table(queries)
    if not variants or not query_ids or plan.repeats == 0:
        return TimingPass({})
    begin = clock()
    loads_before = len(LOADED_MODELS.history)
    stages, uses, untimed = _stages(variants, corpus, query_ids, query_texts, cache_dir, cache)
    order = list(stages)
    warmup = sample_queries(len(query_ids), min(WARMUP_QUERIES, len(query_ids)))
    first = clock()
    for key in order:  # the first query loads what the run had no need of (a model, when its query
        stages[key](warmup[0])  # vectors were cached) and warms it: not part of what a query costs
    first = clock() - first
    loaded = tuple(LOADED_MODELS.history[loads_before:])
    started = clock()
    preparation = started - begin
    deadline = started + plan.budget_seconds
    per_query = _warm_up(stages, warmup[1:], started, plan, first - sum(seconds for _, seconds in loaded))
    gc.collect()
    gc.freeze()  # what exists now (models, indexes, data) is never scanned again by the rounds' collections
    collected = clock()
    gc.collect()  # what a collection between rounds costs now: set aside from the queries' share
    collected = clock() - collected
    left = deadline - clock() - plan.repeats * collected
    sized = sample_size(len(query_ids), per_query * SIZING_MARGIN, plan, left)
    picked = sample_queries(len(query_ids), sized)
    fewest = min(MIN_ROUNDS, plan.repeats)  # the floor: always timed, whatever the budget
    account = dict(preparation_seconds=preparation, loaded=loaded, queries=len(picked), untimed=untimed)
    budget = f"the {plan.budget_seconds:g} s budget (efficiency.budget_seconds)"
    seconds, rounds, floor_past = _timed_rounds(stages, picked, plan, deadline, fewest, progress)
    budgeted = clock() - started
    over = budgeted - plan.budget_seconds
    note = overrun = ""
    if floor_past > 0:  # the floor alone ran past the budget: recorded, not warned (nothing to act on)
        overrun = (
            f"{rounds} of {plan.repeats} rounds of {len(picked)} queries timed, {over:.2g} s past {budget} "
            f"(at least {fewest} rounds are always timed)"
        )
    elif rounds != plan.repeats:  # the budget cut rounds: a larger budget times them all
        note = f"{rounds} of {plan.repeats} rounds timed within {budget}"
    samples = {name: sum(seconds[key][:rounds] for key in keys) for name, keys in uses.items()}
    return TimingPass(
        samples, budgeted_seconds=budgeted, rounds=rounds, note=note, overrun=overrun, **account
    )
