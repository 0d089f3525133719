"""What a comparison's cost figures and extra stages cost, as ratios measured in one run
(``python -m benchmarks --only cost``).

Two parts:

- **Query latency** of the dense models against BM25, by the workbench's own timing pass
  (``retrieval.latency.timing_pass``: interleaved rounds after a warm-up, within its budget) on the shipped
  example: BM25 (the control), all-MiniLM-L6-v2 fp32 on torch, its int8 ONNX export, paraphrase-MiniLM-L3-v2
  on ONNX, each one retriever. Each variant's mean and p95 (of each query's median over the rounds) and its
  ratio to the control, with the paired bootstrap interval and the noise rule (``stats.cost``); and the
  dense models against each other.
- **The noise rule on real timings**: what tests cannot assert on a shared machine, measured. The same
  BM25 at six k1/b points (equal work, separate indexes and stages): how many of the pairs the noise rule
  reads within the noise, and the widest ratio; and the same BM25 at depth 1,000 against depth 10 (a
  hundredfold the hits), which must read as a difference. Tests pin what the rule makes of timings given
  by a ticking clock (``tests/support/clock.py``).
- **Issue 24's bound**: the delta attribution, the unjudged range and the queries-needed table together
  should add less than 10% to a comparison's time. One in-process run of a config, with every function
  of those stages (``scored_lists``, ``attribution``, ``attribution_summary``, ``unjudged_ranges``,
  ``robustness_table``, ``queries_needed_table``) wrapped by a clock that calls the real function: their
  seconds against the rest of the same run (the run "without them").
"""

from __future__ import annotations

import importlib
import math
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.harness import REPO_ROOT

#: (label, retriever settings): the control first; every ratio is against it.
LATENCY_VARIANTS: tuple[tuple[str, dict], ...] = (
    ("BM25", {"bm25": {}}),
    ("all-MiniLM-L6-v2 fp32, torch", {"dense": {"model": "all-MiniLM-L6-v2"}}),
    ("all-MiniLM-L6-v2 int8, onnx", {"dense": {"model": "all-MiniLM-L6-v2-int8"}}),
    ("paraphrase-MiniLM-L3-v2, onnx", {"dense": {"model": "paraphrase-MiniLM-L3-v2"}}),
)
#: Issue 24: attribution, unjudged range and queries needed add less than this to a comparison's time.
EXTRA_STAGES_GOAL = 0.10
#: (module, function): what issue 24's stages call, each wrapped by a clock (the real function runs).
EXTRA_STAGES: tuple[tuple[str, str], ...] = (
    ("abcompare.evaluation.attribution", "scored_lists"),
    ("abcompare.evaluation.attribution", "attribution"),
    ("abcompare.evaluation.attribution", "attribution_summary"),
    ("abcompare.evaluation.unjudged", "unjudged_ranges"),
    ("abcompare.stats.robustness", "robustness_table"),
    ("abcompare.stats.power", "queries_needed_table"),
)


# ------------------------------------------------------------------------------------------ latency
@dataclass
class QueryLatency:
    """The timing pass's samples per variant label, and what the pass spent where."""

    samples: dict[str, Any] = field(default_factory=dict)
    queries: int = 0
    rounds: int = 0
    preparation_seconds: float = 0.0
    budgeted_seconds: float = 0.0
    note: str = ""


def example_tables(documents: int | None = None, queries: int | None = None) -> tuple[Any, Any]:
    """The shipped example's corpus and queries (the first ``documents`` / ``queries`` of them)."""
    from abcompare.data.corpus import read_corpus
    from abcompare.data.queries import read_queries
    from abcompare.examples import example_path

    folder = example_path("hr-docs")
    corpus, table = read_corpus(folder / "corpus.jsonl"), read_queries(folder / "queries.jsonl")
    return corpus.head(documents or len(corpus)), table.head(queries or len(table))


def timed_after_their_runs(
    variants: dict[str, Any], corpus: Any, table: Any, *, cache_dir: Path, plan: Any,
    log: Callable[[str], None] = print,
) -> Any:  # fmt: skip
    """Each variant's run first, as the runner does (it fills the memo, and encodes what the embedding cache
    at ``cache_dir`` lacks), then one timing pass over all of them with ``plan``, in this process."""
    from abcompare.retrieval.latency import timing_pass
    from abcompare.retrieval.pipeline import RetrievalCache, run_variant_with_cost

    memo = RetrievalCache()
    for label, variant in variants.items():
        log(f"cost: {label}: retrieving {len(table)} queries ...")
        run_variant_with_cost(variant, corpus, table, cache_dir=cache_dir, cache=memo)
    log(f"cost: timing pass, {plan.repeats} rounds within {plan.budget_seconds:g} s ...")
    return timing_pass(variants, corpus, table, cache_dir=cache_dir, cache=memo, plan=plan)


def run_query_latency(
    *, documents: int | None = None, queries: int | None = None, repeats: int = 5, max_queries: int = 50,
    budget_seconds: float = 20.0, cache_dir: Path | None = None, log: Callable[[str], None] = print,
) -> QueryLatency:  # fmt: skip
    """The dense models and BM25 on the example, timed by :func:`timed_after_their_runs`."""
    from abcompare.retrieval.embedding_cache import default_cache_dir
    from abcompare.retrieval.latency import TimingPlan
    from abcompare.retrieval.settings import VariantSettings

    corpus, table = example_tables(documents, queries)
    variants = {label: VariantSettings(retrievers=retrievers, depth=50, top_k=10)
                for label, retrievers in LATENCY_VARIANTS}  # fmt: skip
    plan = TimingPlan(repeats=repeats, max_queries=max_queries, budget_seconds=budget_seconds)
    timed = timed_after_their_runs(
        variants, corpus, table, cache_dir=cache_dir or default_cache_dir(), plan=plan, log=log
    )
    return QueryLatency(timed.samples, timed.queries, timed.rounds, timed.preparation_seconds,
                        timed.budgeted_seconds, timed.note)  # fmt: skip


def latency_table(result: QueryLatency) -> tuple[list[str], list[list[str]]]:
    """One row per variant: mean and p95 per query, and the ratio of its mean to the control's with the
    interval and the noise rule's reading."""
    from abcompare.outcome.rows import format_duration
    from abcompare.stats.cost import latency_ratio, summarise_latency

    header = ["variant", "mean per query", "p95", "vs BM25 (mean)", "95% interval", "reading", "p95 vs BM25"]
    control = LATENCY_VARIANTS[0][0]
    rows = []
    base = summarise_latency(result.samples[control])
    for label, _ in LATENCY_VARIANTS:
        own = summarise_latency(result.samples[label])
        if label == control:
            rows.append(
                [label, *(format_duration(v) for v in (own.mean, own.p95)), "1.00x", "—", "—", "1.00x"]
            )
            continue
        ratio = latency_ratio(result.samples[label], result.samples[control])
        reading = "within the noise" if ratio.within_noise else ("slower" if ratio.ratio > 1 else "faster")
        rows.append(
            [label, format_duration(own.mean), format_duration(own.p95), f"{ratio.ratio:.2f}x",
             f"{ratio.low:.2f}x–{ratio.high:.2f}x", reading, f"{own.p95 / base.p95:.2f}x"]
        )  # fmt: skip
    return header, rows


def latency_lines(result: QueryLatency) -> list[str]:
    """The dense models against each other (int8 and L3 against fp32), and what the pass spent."""
    from abcompare.stats.cost import latency_ratio

    fp32, int8, l3 = (label for label, _ in LATENCY_VARIANTS[1:])
    lines = []
    for label in (int8, l3):
        ratio = latency_ratio(result.samples[label], result.samples[fp32])
        lines.append(
            f"- {label} vs fp32 torch: {ratio.ratio:.2f}x the mean query latency "
            f"({ratio.low:.2f}x–{ratio.high:.2f}x{', within the noise' if ratio.within_noise else ''})"
        )
    lines.append(
        f"- {result.rounds} rounds x {result.queries} queries; the pass spent "
        f"{result.preparation_seconds:.1f} s on preparation (outside the budget) and "
        f"{result.budgeted_seconds:.1f} s on the warm-up and rounds"
        + (f"; {result.note}" if result.note else "")
    )
    return lines


# ------------------------------------------------------------------------------------------ the noise rule
#: The equal-work grid: the sweep of tests/runner/test_runner_cost.py, on the example.
EQUAL_WORK_POINTS: tuple[tuple[float, float], ...] = tuple(
    (k1, b) for k1 in (0.9, 1.2, 2.0) for b in (0.4, 0.9)
)
#: The unequal pair: the same BM25 keeping this many hits per query against this few.
UNEQUAL_DEPTHS = (1000, 10)


@dataclass
class NoiseRule:
    """The equal-work grid's pairwise latency ratios and the unequal pair's, from one timing pass each."""

    equal: list[tuple[str, str, Any]] = field(default_factory=list)
    unequal: Any = None
    rounds: int = 0
    queries: int = 0


def run_noise_rule(
    *, repeats: int = 5, max_queries: int = 50, budget_seconds: float = 20.0,
    log: Callable[[str], None] = print,
) -> NoiseRule:  # fmt: skip
    """One timing pass over the equal-work grid, one over the unequal pair, on the example (BM25 only:
    nothing to encode), each after the variants' own run, as the runner times them."""
    import itertools

    from abcompare.retrieval.latency import TimingPlan
    from abcompare.retrieval.settings import VariantSettings
    from abcompare.stats.cost import latency_ratio

    corpus, table = example_tables()
    plan = TimingPlan(repeats=repeats, max_queries=max_queries, budget_seconds=budget_seconds)

    def timed(variants: dict[str, Any]) -> Any:
        with tempfile.TemporaryDirectory(prefix="abcompare-bench-") as tmp:  # BM25 only: nothing cached
            return timed_after_their_runs(variants, corpus, table, cache_dir=Path(tmp), plan=plan, log=log)

    def bm25(k1: float = 1.2, b: float = 0.75, depth: int = 50) -> Any:
        return VariantSettings(retrievers={"bm25": {"k1": k1, "b": b}}, depth=depth, top_k=10)

    log(f"cost: the noise rule: BM25 at {len(EQUAL_WORK_POINTS)} k1/b points, {repeats} rounds ...")
    grid = timed({f"k1={k1},b={b}": bm25(k1, b) for k1, b in EQUAL_WORK_POINTS})
    result = NoiseRule(rounds=grid.rounds, queries=grid.queries)
    for a, b in itertools.combinations(grid.samples, 2):
        result.equal.append((a, b, latency_ratio(grid.samples[a], grid.samples[b])))
    deep, shallow = UNEQUAL_DEPTHS
    log(f"cost: the noise rule: BM25 at depth {deep} against {shallow} ...")
    pair = timed({"deep": bm25(depth=deep), "shallow": bm25(depth=shallow)})
    result.unequal = latency_ratio(pair.samples["deep"], pair.samples["shallow"])
    return result


def noise_rule_lines(result: NoiseRule) -> list[str]:
    """How often equal work read within the noise, its widest ratio, and the unequal pair's reading."""
    within = sum(ratio.within_noise for _, _, ratio in result.equal)
    widest = max(result.equal, key=lambda row: abs(math.log(row[2].ratio)))
    unequal = result.unequal
    deep, shallow = UNEQUAL_DEPTHS
    return [
        f"- equal work, BM25 at {len(EQUAL_WORK_POINTS)} k1/b points ({result.rounds} rounds x "
        f"{result.queries} queries): {within} of {len(result.equal)} pairs within the noise; the widest, "
        f"{widest[0]} over {widest[1]}, {widest[2].ratio:.2f}x ({widest[2].low:.2f}x–{widest[2].high:.2f}x)",
        f"- unequal work, depth {deep:,} over depth {shallow}: {unequal.ratio:.1f}x "
        f"({unequal.low:.1f}x–{unequal.high:.1f}x), "
        + ("within the noise: MISSED" if unequal.within_noise else "a difference, as it must be"),
    ]


# ------------------------------------------------------------------------------------------ issue 24
@dataclass
class ExtraStages:
    """One comparison's wall time and the seconds (and calls) of issue 24's stages within it."""

    config: str
    wall_seconds: float = 0.0
    seconds: dict[str, float] = field(default_factory=dict)
    calls: dict[str, int] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def stage_seconds(self) -> float:
        return sum(self.seconds.values())

    @property
    def ratio(self) -> float:
        """What the stages add to the run without them: their seconds over the rest of the wall time."""
        rest = self.wall_seconds - self.stage_seconds
        return self.stage_seconds / rest if rest > 0 else float("inf")


@contextmanager
def clocked(targets: tuple[tuple[str, str], ...], into: ExtraStages) -> Iterator[None]:
    """Every ``module.function`` of ``targets`` replaced, for the block, by a clock around the real one,
    in its own module and in every loaded abcompare module that imported it by name (the runner imports
    them at module top); nested calls count once."""
    saved = []
    depth = [0]

    def wrap(name: str, real: Callable[..., Any]) -> Callable[..., Any]:
        def clock(*args: Any, **kwargs: Any) -> Any:
            depth[0] += 1
            start = time.perf_counter()
            try:
                return real(*args, **kwargs)
            finally:
                depth[0] -= 1
                into.calls[name] = into.calls.get(name, 0) + 1
                if depth[0] == 0:
                    into.seconds[name] = into.seconds.get(name, 0.0) + time.perf_counter() - start

        return clock

    try:
        for module_name, function in targets:
            real = getattr(importlib.import_module(module_name), function)
            clock = wrap(function, real)
            holders = [m for n, m in list(sys.modules.items()) if n.startswith("abcompare")]
            for module in holders:
                if getattr(module, function, None) is real:
                    saved.append((module, function, real))
                    setattr(module, function, clock)
        yield
    finally:
        for module, function, real in saved:
            setattr(module, function, real)


def run_extra_stages(
    config: str = "configs/rrf_vs_dbsf.yaml", overrides: tuple[str, ...] = (), *, tracking: bool = True,
    log: Callable[[str], None] = print,
) -> ExtraStages:  # fmt: skip
    """One in-process run of ``config`` (relative to the repository) as ``abcompare run`` makes it (MLflow
    to a throwaway SQLite store, written in the background), with issue 24's stages clocked."""
    from abcompare.config.loading import load_config
    from abcompare.runner import run_comparison

    path = REPO_ROOT / config
    result = ExtraStages(config)
    with tempfile.TemporaryDirectory(prefix="abcompare-bench-") as tmp:
        folder = Path(tmp)
        store = (
            [f"tracking.uri=sqlite:///{folder / 'mlflow.db'}",
             f"tracking.artifact_location={folder / 'mlruns'}"]
            if tracking
            else ["tracking.enabled=false"]
        )  # fmt: skip
        loaded = load_config(path, [*store, *overrides])
        log(f"cost: {config}: one comparison with attribution, unjudged range and queries needed clocked ...")
        with clocked(EXTRA_STAGES, result):
            start = time.perf_counter()
            comparison = run_comparison(loaded, config_path=path, background_tracking=tracking)
            result.wall_seconds = time.perf_counter() - start
    result.timings = dict(comparison.timings)
    return result


def extra_stages_lines(result: ExtraStages) -> list[str]:
    """The bound in words, met or missed, with the seconds of each stage."""
    verdict = "met" if result.ratio < EXTRA_STAGES_GOAL else "MISSED"
    parts = ", ".join(f"{name} {seconds:.3f} s" for name, seconds in result.seconds.items())
    rest = result.wall_seconds - result.stage_seconds
    return [
        f"- {result.config}: attribution + unjudged range + queries needed add {100 * result.ratio:.1f}% to "
        f"the comparison ({result.stage_seconds:.2f} s on top of {rest:.2f} s without them; "
        f"{result.wall_seconds:.2f} s in all), under {EXTRA_STAGES_GOAL:.0%} — {verdict}",
        f"- per function: {parts}",
    ]
