"""Batching of resamples: batch sizes that stay in cache, and single-threaded BLAS for the batch products."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from functools import lru_cache
from typing import Any

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


@lru_cache(maxsize=1)
def _controller() -> Any:
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:  # pragma: no cover - threadpoolctl comes with scikit-learn
        return None
    return ThreadpoolController()


@contextlib.contextmanager
def single_threaded_blas() -> Iterator[None]:
    """Run the thin (batch x queries) @ (queries x metrics) products on one BLAS thread.

    They are memory-bound: a second thread gains little on an idle machine and, measured on a loaded
    2-core one, made them 5-7x slower (threads waiting on each other). Results do not depend on it.
    """
    controller = _controller()
    if controller is None:
        yield
        return
    with controller.limit(limits=1, user_api="blas"):
        yield
