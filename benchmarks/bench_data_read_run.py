"""How long read_run takes on a large TREC run (default 10M lines: 10,000 queries x 1,000 hits).

Usage: python benchmarks/bench_data_read_run.py [lines] — writes a synthetic run to a temp folder,
then times read_run (TREC) and write_run. Not a test: numbers depend on the machine.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from abcompare.data import read_run, write_run


def synthetic_run(path: Path, lines: int, per_query: int = 1000, seed: int = 0) -> None:
    """A TREC run with random scores, written with numpy/pandas (no Python per-line loop)."""
    rng = np.random.default_rng(seed)
    queries = np.arange(lines) // per_query
    frame = pd.DataFrame(
        {
            "q": queries.astype(str),
            "iter": "Q0",
            "doc": rng.integers(0, 5_000_000, lines).astype(str),
            "rank": np.arange(lines) % per_query + 1,
            "score": rng.random(lines).round(6),
            "tag": "bench",
        }
    )
    frame["doc"] = "D" + frame["doc"] + "-" + frame["rank"].astype(str)  # unique within a query
    frame.to_csv(path, sep=" ", header=False, index=False)


def main(lines: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.trec"
        start = time.perf_counter()
        synthetic_run(path, lines)
        size = path.stat().st_size / 1e6
        print(f"generated {lines:,} lines ({size:.0f} MB) in {time.perf_counter() - start:.1f}s")
        start = time.perf_counter()
        run = read_run(path)
        seconds = time.perf_counter() - start
        print(f"read_run:  {seconds:.1f}s ({len(run):,} rows, {run['query_id'].nunique():,} queries)")
        start = time.perf_counter()
        write_run(run, Path(tmp) / "out.trec")
        print(f"write_run: {time.perf_counter() - start:.1f}s")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 10_000_000)
