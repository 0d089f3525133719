"""The resampling's memory at large n: peak bytes the sign-flip test, the bootstrap and the whole
``paired_comparison`` allocate above their input, at 100k and 1M queries, for two numbers of resamples.

The resamples are drawn in batches of about ``stats._chunks.BATCH_BYTES`` (one resample per batch from
~500k queries on), so the peak above the input should not grow with B, and should stay a small multiple
of one query column (n × 8 bytes). Measured with ``tracemalloc`` (numpy reports its buffers to it), in this
process, one measurement at a time; not timed for a ratio (the seconds are printed for orientation only).

    python -m benchmarks.bench_resampling_memory --sizes 100000 1000000 --resamples 200 1000 \
        --record benchmarks/resampling_memory_latest.json

``--record`` writes the figures docs/statistics.md quotes; ``tests/benchmarks`` checks the quote against it.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import time
import tracemalloc
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

METRICS = 4  # metric columns: the resampling multiplies every column of a batch at once
MIB = 1024 * 1024


def _peak_above(work: Callable[[], object]) -> tuple[float, float]:
    """The peak bytes ``work`` allocates above what was allocated when it started, and its seconds."""
    gc.collect()
    tracemalloc.start()
    start, _ = tracemalloc.get_traced_memory()
    began = time.perf_counter()
    work()
    seconds = time.perf_counter() - began
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return float(peak - start), seconds


def _frames(n_queries: int, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A control and a treatment per-query table of ``n_queries`` × ``METRICS`` scores in [0, 1]."""
    rng = np.random.default_rng(seed)
    ids = pd.Index(np.char.add("q", np.arange(n_queries).astype(str)), name="query_id")
    columns = [f"ndcg@{k}" for k in (1, 5, 10, 100)][:METRICS]
    control = rng.uniform(0.2, 0.8, (n_queries, METRICS))
    treatment = np.clip(control + rng.normal(0.002, 0.05, control.shape), 0.0, 1.0)
    return pd.DataFrame(control, index=ids, columns=columns), pd.DataFrame(
        treatment, index=ids, columns=columns
    )


def measure(n_queries: int, n_resamples: int, seed: int = 0) -> list[dict[str, Any]]:
    """One record per part (``sign flips``, ``bootstrap``, ``paired_comparison``) at this size and B."""
    from abcompare.stats.bootstrap import paired_bootstrap
    from abcompare.stats.comparison import paired_comparison
    from abcompare.stats.permutation import sign_flip_test

    control, treatment = _frames(n_queries, seed)
    d = (treatment - control).to_numpy()
    parts: dict[str, Callable[[], object]] = {
        "sign flips": lambda: sign_flip_test(d, n_resamples, np.random.default_rng(seed)),
        "bootstrap": lambda: paired_bootstrap(d, n_resamples, np.random.default_rng(seed)),
        "paired_comparison": lambda: paired_comparison(
            control, {"treatment": treatment}, primary_metric="ndcg@10", n_resamples=n_resamples, seed=seed
        ),
    }
    records = []
    for part, work in parts.items():
        peak, seconds = _peak_above(work)
        records.append({
            "part": part, "n_queries": n_queries, "metrics": METRICS, "n_resamples": n_resamples,
            "input_mib": round(d.nbytes / MIB, 1), "peak_above_input_mib": round(peak / MIB, 1),
            "columns_of_n": round(peak / (8 * n_queries), 1), "seconds": round(seconds, 1),
        })  # fmt: skip
    return records


def table(records: Sequence[dict[str, Any]]) -> str:
    """The records as a markdown table."""
    head = "| part | queries | B | input (d) | peak above it | in query columns (n × 8 B) | seconds |"
    rows = [head, "|---|---:|---:|---:|---:|---:|---:|"]
    for r in records:
        rows.append(
            f"| {r['part']} | {r['n_queries']:,} | {r['n_resamples']:,} | {r['input_mib']} MiB | "
            f"{r['peak_above_input_mib']} MiB | {r['columns_of_n']} | {r['seconds']} |"
        )
    return "\n".join(rows)


def memory_sentence(record: dict[str, Any]) -> str:
    """The sentence docs/statistics.md quotes from a record: the largest size's peak above the input, per
    part, over the numbers of resamples measured (one figure when they agree, else their range)."""
    rows = record["records"]
    n = max(r["n_queries"] for r in rows)
    largest = [r for r in rows if r["n_queries"] == n]
    resamples = sorted({r["n_resamples"] for r in largest})

    def peak(part: str) -> str:
        values = sorted({r["peak_above_input_mib"] for r in largest if r["part"] == part})
        return f"{values[0]} MiB" if len(values) == 1 else f"{values[0]}–{values[-1]} MiB"

    bs = " and ".join(f"B = {b:,}" for b in resamples)
    return (
        f"At {n:,} queries × {largest[0]['metrics']} metrics (their differences: {largest[0]['input_mib']} "
        f"MiB), the sign flips allocate at most {peak('sign flips')} above their input, the bootstrap "
        f"{peak('bootstrap')} and the whole paired_comparison {peak('paired_comparison')}, at {bs} "
        f"(load average {record['load_average'][0]:.2f})."
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--resamples", type=int, nargs="+", default=[200, 1_000])
    parser.add_argument("--record", type=Path, help="write the records (and the command, the load) as JSON")
    args = parser.parse_args(argv)
    records = [r for n in args.sizes for b in args.resamples for r in measure(n, b)]
    print(table(records))
    print(memory_sentence({"records": records, "load_average": os.getloadavg()}))
    if args.record is not None:
        load = os.getloadavg()
        args.record.write_text(
            json.dumps(
                {
                    "command": "python -m benchmarks.bench_resampling_memory --sizes "
                    + " ".join(map(str, args.sizes))
                    + " --resamples "
                    + " ".join(map(str, args.resamples)),
                    "load_average": [round(x, 2) for x in load],
                    "records": records,
                },
                indent=1,
            )
            + "\n"
        )


if __name__ == "__main__":
    main()
