"""Chunking of resamples so a batch of (resamples x queries) stays small enough to live in cache."""

from __future__ import annotations

from collections.abc import Iterator

#: Bytes of one float64 batch of (resamples x queries); ~4 MB measured fastest at 10k queries on 2 cores.
BATCH_BYTES = 4 * 1024 * 1024


def chunk_sizes(n_resamples: int, n_queries: int, batch_bytes: int = BATCH_BYTES) -> Iterator[int]:
    """Yield batch sizes that add up to ``n_resamples``; each batch holds about ``batch_bytes`` of float64."""
    size = max(1, min(n_resamples, batch_bytes // (8 * max(n_queries, 1))))
    done = 0
    while done < n_resamples:
        step = min(size, n_resamples - done)
        yield step
        done += step
