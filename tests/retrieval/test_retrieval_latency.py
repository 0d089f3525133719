"""The timing pass on real BM25 stages over a synthetic corpus: stages timed alike read "within the noise"
(the same algorithm at several k1/b points draws no front: a ticking clock's timings), clearly different work
(1,000 hits per query against 10, real timings) does not. No assertion on speed: only on what the noise
rule makes of the timings."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from support.clock import tick_the_timing_pass

from abcompare.retrieval.latency import TimingPlan, sample_queries, sample_size, timing_pass
from abcompare.retrieval.pipeline import RetrievalCache, run_variant_with_cost
from abcompare.retrieval.settings import VariantSettings
from abcompare.stats.cost import latency_ratio, noise_aware_front

WORDS = [f"w{i}" for i in range(60)]


@pytest.fixture(scope="module")
def synthetic() -> tuple[pd.DataFrame, pd.DataFrame]:
    """1,200 documents that all hold the word ``common`` (so any query can fill 1,000 hits) and 30
    queries of three words."""
    rng = np.random.default_rng(0)
    texts = [" ".join(["common", *rng.choice(WORDS, size=12)]) for _ in range(1200)]
    corpus = pd.DataFrame({"doc_id": [f"d{i}" for i in range(1200)], "title": "", "text": texts})
    queries = pd.DataFrame(
        {"query_id": [f"q{i}" for i in range(30)],
         "text": [" ".join(["common", *rng.choice(WORDS, size=2)]) for _ in range(30)]}
    )  # fmt: skip
    return corpus, queries


def bm25(k1: float, b: float, depth: int = 50) -> VariantSettings:
    return VariantSettings(
        chunking={"strategy": "none"}, retrievers={"bm25": {"k1": k1, "b": b}}, depth=depth, top_k=10
    )


def timed(variants: dict[str, VariantSettings], synthetic, tmp_path: Path, repeats: int = 5):
    corpus, queries = synthetic
    cache = RetrievalCache()
    for variant in variants.values():  # the variants' own run first, as the runner does
        run_variant_with_cost(variant, corpus, queries, cache_dir=tmp_path, cache=cache)
    builds = cache.builds
    plan = TimingPlan(repeats=repeats, max_queries=30, budget_seconds=60)
    samples = timing_pass(variants, corpus, queries, cache_dir=tmp_path, cache=cache, plan=plan).samples
    return samples, cache.builds - builds


def test_stages_timed_alike_read_within_the_noise_and_draw_no_front(
    synthetic, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same BM25 at several k1/b points, each stage timed one tick of a ticking clock (what equal work
    on a quiet machine approaches; what a real machine's noise makes of it is measured in
    benchmarks/bench_cost.py, not asserted here)."""
    grid = {f"k1={k1},b={b}": bm25(k1, b) for k1, b in [(0.9, 0.4), (1.2, 0.75), (1.5, 0.9), (2.0, 0.3)]}
    clock = tick_the_timing_pass(monkeypatch)
    samples, rebuilt = timed(grid, synthetic, tmp_path, repeats=7)
    assert rebuilt == 0  # the timing pass reused every index and ranking the variants built
    assert {name: s.shape for name, s in samples.items()} == dict.fromkeys(grid, (7, 30))
    # a variant's query: its BM25 stage and its finish stage, one tick each
    assert all((s == 2 * clock.tick).all() for s in samples.values())
    for a, b in itertools.combinations(grid, 2):
        assert latency_ratio(samples[a], samples[b]).within_noise, (a, b)
    names = list(grid)
    quality = [0.03, 0.01, 0.02, 0.00]  # whatever their quality, no point dominates another: no fake front
    assert noise_aware_front([samples[n] for n in names], quality) == [0, 1, 2, 3]


def test_a_thousand_hits_per_query_is_not_within_the_noise_of_ten(synthetic, tmp_path: Path) -> None:
    """Real timings, on purpose: the pass times the stages' own work. Only the direction of a hundredfold
    difference in work is asserted (it reads about 12x slower on two loaded cores, its interval's low end
    above 7x), against a noise band of 10%: no figure of speed."""
    variants = {"shallow": bm25(1.2, 0.75, depth=10), "deep": bm25(1.2, 0.75, depth=1000)}
    samples, _ = timed(variants, synthetic, tmp_path)
    found = latency_ratio(samples["deep"], samples["shallow"])
    assert not found.within_noise and found.ratio > 1
    # as good and faster beyond the noise: the shallow variant dominates the deep one
    assert noise_aware_front([samples["shallow"], samples["deep"]], [0.0, 0.0]) == [0]


def test_run_files_are_not_timed(synthetic, tmp_path: Path) -> None:
    corpus, queries = synthetic
    run = VariantSettings(run={"path": str(tmp_path / "run.trec")})
    assert (
        timing_pass({"file": run}, corpus, queries, cache_dir=tmp_path, cache=RetrievalCache()).samples == {}
    )


def test_the_sample_spreads_over_the_queries_and_fits_the_budget() -> None:
    assert sample_queries(10, 3) == [0, 4, 9] and sample_queries(3, 10) == [0, 1, 2]
    plan = TimingPlan(repeats=5, max_queries=100, budget_seconds=10)
    assert sample_size(300, 0.01, plan) == 100  # 5 x 100 x 10 ms = 5 s: all that max_queries allows
    assert sample_size(300, 0.1, plan) == 20  # 10 s / (5 x 100 ms)
    assert sample_size(300, 10.0, plan) == 5  # never fewer than 5 queries
    assert sample_size(3, 0.1, plan) == 3


def test_with_an_empty_memo_the_pass_builds_what_it_needs_untimed(synthetic, tmp_path: Path) -> None:
    """What the Ray backend's driver does: its workers built the indexes, so the driver builds them again
    (chunks, index, every query's hits) before any round, and times the same stages."""
    corpus, queries = synthetic
    cache = RetrievalCache()
    plan = TimingPlan(repeats=2, max_queries=8, budget_seconds=60)
    samples = timing_pass(
        {"control": bm25(1.2, 0.75)}, corpus, queries, cache_dir=tmp_path, cache=cache, plan=plan
    ).samples
    assert cache.builds == 3 and samples["control"].shape == (2, 8) and (samples["control"] > 0).all()
