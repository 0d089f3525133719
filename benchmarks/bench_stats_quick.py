"""Quick speed check of abcompare.stats against scipy.stats.permutation_test / bootstrap on the same data.

Run: python benchmarks/bench_stats_quick.py [--queries 10000] [--resamples 10000] [--scipy-columns 1]
Prints wall-clock seconds (best of --repeat) for the whole paired_comparison on 15 metric columns
(5 measures x 3 cutoffs), for each of its parts, and for scipy's resampling on --scipy-columns columns,
with the results side by side. Not a test: nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np
import pandas as pd
from scipy import stats

from abcompare.stats import paired_bootstrap, paired_comparison, paired_ttest, sign_flip_test, wilcoxon_test

MEASURES = ("precision", "recall", "f1", "mrr", "ndcg")
CUTOFFS = (5, 10, 20)


def make_runs(n_queries: int, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Discrete, tied per-query scores like a real run's, and a treatment that is slightly better."""
    rng = np.random.default_rng(seed)
    columns = [f"{m}@{k}" for m in MEASURES for k in CUTOFFS]
    ids = pd.Index([f"q{i}" for i in range(n_queries)], name="query_id")
    base = rng.integers(0, 11, size=(n_queries, len(columns))) / 10
    control = pd.DataFrame(base, index=ids, columns=columns)
    step = rng.choice([-0.1, 0.0, 0.0, 0.0, 0.1, 0.1], size=base.shape)
    treatment = pd.DataFrame(np.clip(base + step, 0, 1), index=ids, columns=columns)
    for frame in (control, treatment):
        frame["retrieved_count"] = 10
        frame["relevant_count"] = 3
    return control, treatment


def best_of(repeat: int, fn: Callable[[], object]) -> tuple[float, object]:
    """Best wall-clock time of ``repeat`` runs (also kept: best CPU time, in ``best_of.cpu``)."""
    times, cpu, result = [], [], None
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        result = fn()
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    best_of.cpu = min(cpu)  # type: ignore[attr-defined]
    return min(times), result


def blas_info() -> str:
    try:
        from threadpoolctl import threadpool_info

        return "; ".join(f"{i.get('internal_api')} {i.get('architecture')} x{i.get('num_threads')}"
                         for i in threadpool_info() if i.get("user_api") == "blas")  # fmt: skip
    except ImportError:
        return "unknown (threadpoolctl not installed)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--scipy-columns", type=int, default=1, help="columns to run through scipy (0: skip)")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    n, b = args.queries, args.resamples
    control, treatment = make_runs(n)
    d = (treatment - control)[[c for c in control.columns if "@" in c]].to_numpy()
    print(f"queries={n} metric columns={d.shape[1]} resamples={b} blas: {blas_info()}")

    total, table = best_of(args.repeat, lambda: paired_comparison(control, treatment, n_resamples=b))
    print(f"paired_comparison, all four tests + Holm: {total:.3f} s wall, {best_of.cpu:.3f} s CPU")
    rng = np.random.default_rng(0)
    parts = {
        "t-test": lambda: paired_ttest(d),
        "sign-flip permutation": lambda: sign_flip_test(d, b, rng),
        "bootstrap (pct, BCa, studentized p)": lambda: paired_bootstrap(d, b, rng),
        "wilcoxon (scipy, per column)": lambda: wilcoxon_test(d),
    }
    for name, fn in parts.items():
        wall = best_of(args.repeat, fn)[0]
        print(f"  {name:38s} {wall:.3f} s wall, {best_of.cpu:.3f} s CPU")

    k = min(args.scipy_columns, d.shape[1])
    if k == 0:
        return
    cols = d[:, :k]
    perm_s, perm = best_of(1, lambda: [
        stats.permutation_test((cols[:, j],), lambda x, axis: np.mean(x, axis=axis), vectorized=True,
                               permutation_type="samples", n_resamples=b, rng=np.random.default_rng(1))
        for j in range(k)])  # fmt: skip
    boot_s, boot = best_of(1, lambda: [
        stats.bootstrap((cols[:, j],), np.mean, n_resamples=b, method="BCa", rng=np.random.default_rng(1))
        for j in range(k)])  # fmt: skip
    ours_perm_s, ours_perm = best_of(1, lambda: sign_flip_test(cols, b, np.random.default_rng(1)))
    ours_boot_s, ours_boot = best_of(1, lambda: paired_bootstrap(cols, b, np.random.default_rng(1)))
    print(f"\nscipy on {k} column(s) vs ours on the same column(s):")
    print(f"  permutation: scipy {perm_s:.3f} s   ours {ours_perm_s:.3f} s")
    print(f"  bootstrap  : scipy {boot_s:.3f} s (BCa only)   ours {ours_boot_s:.3f} s (pct + BCa + p)")
    print(f"  scipy extrapolated to {d.shape[1]} columns: {(perm_s + boot_s) / k * d.shape[1]:.1f} s")
    for j in range(k):
        ci = boot[j].confidence_interval
        print(f"  column {j}: p perm scipy {perm[j].pvalue:.4f} ours {ours_perm.pvalue[j]:.4f}; "
              f"BCa scipy [{ci.low:.5f}, {ci.high:.5f}] ours [{ours_boot.bca_low[j]:.5f}, "
              f"{ours_boot.bca_high[j]:.5f}]")  # fmt: skip
    print(table[["metric", "delta", "ci_low", "ci_high", "p_permutation", "p_adjusted", "verdict"]].head(3))


if __name__ == "__main__":
    main()
