"""Speed of the selection-aware statistics: tuned_comparison and max-T across a grid of candidates.

Run: python benchmarks/bench_stats_selection.py [--queries 300] [--candidates 50] [--resamples 10000]
Prints CPU and wall seconds (best of --repeat) of ``tuned_comparison`` from per-query tables (the call a
sweep makes), of its array core, and of ``paired_comparison`` with ``correction="maxt"`` over every
candidate and 15 metric columns. Not a test: nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np
import pandas as pd

from abcompare.stats import paired_comparison, tuned_comparison, tuned_selection_test
from abcompare.stats.tuning import fold_assignment

METRICS = [f"{m}@{k}" for m in ("precision", "recall", "f1", "mrr", "ndcg") for k in (1, 5, 10)]


def grid(n_queries: int, n_candidates: int, seed: int = 0) -> tuple[pd.DataFrame, dict[str, pd.DataFrame]]:
    """A control and candidates sharing per-query difficulty, discrete scores, one slightly better."""
    rng = np.random.default_rng(seed)
    ids = pd.Index([f"q{i}" for i in range(n_queries)], name="query_id")
    base = rng.integers(0, 11, size=(n_queries, len(METRICS))) / 10
    control = pd.DataFrame(base, index=ids, columns=METRICS)
    candidates = {}
    for c in range(n_candidates):
        step = rng.choice([-0.1, 0.0, 0.0, 0.0, 0.1, 0.1 if c == 7 else 0.0], size=base.shape)
        candidates[f"fusion.k={c}"] = pd.DataFrame(np.clip(base + step, 0, 1), index=ids, columns=METRICS)
    return control, candidates


def best_of(repeat: int, fn: Callable[[], object]) -> tuple[float, float, object]:
    best_cpu, best_wall, out = np.inf, np.inf, None
    for _ in range(repeat):
        cpu, wall = time.process_time(), time.perf_counter()
        out = fn()
        best_cpu = min(best_cpu, time.process_time() - cpu)
        best_wall = min(best_wall, time.perf_counter() - wall)
    return best_cpu, best_wall, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--candidates", type=int, default=50)
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    control, candidates = grid(args.queries, args.candidates)
    size = f"{args.queries} queries x {args.candidates} candidates, B = {args.resamples}"
    cpu, wall, result = best_of(
        args.repeat, lambda: tuned_comparison(control, candidates, n_resamples=args.resamples)
    )
    print(f"tuned_comparison from tables ({size}): {cpu:.3f} s CPU, {wall:.3f} s wall")
    interval = f"[{result.ci_low:.4f}, {result.ci_high:.4f}]"
    print(f"  delta {result.delta:+.4f} {interval}, p = {result.p_value:.4f}, chosen {result.choices}")
    d = np.column_stack([frame["ndcg@10"] - control["ndcg@10"] for frame in candidates.values()])
    fold = fold_assignment(args.queries, 5, np.random.default_rng(0))
    cpu, wall, _ = best_of(
        args.repeat,
        lambda: tuned_selection_test(d, fold, n_resamples=args.resamples, rng=np.random.default_rng(1)),
    )
    print(f"tuned_selection_test on the array ({size}): {cpu:.3f} s CPU, {wall:.3f} s wall")
    cpu, wall, table = best_of(
        1,
        lambda: paired_comparison(
            control, candidates, correction="maxt", n_resamples=args.resamples, tests=["t", "permutation"]
        ),
    )
    columns = args.candidates * len(METRICS)
    print(
        f"paired_comparison, max-T over {columns} columns (t + permutation, {size}): "
        f"{cpu:.3f} s CPU, {wall:.3f} s wall; {int((table['verdict'] != 'no significant difference').sum())} "
        "rows significant"
    )


if __name__ == "__main__":
    main()
