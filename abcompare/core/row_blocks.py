"""Chunks of a table whose rows come in blocks (a query's hits side by side): bounds that never cut a block.

Several vectorised steps (the repeated-docno check of the run reader, the key coding of the batch
evaluator) work chunk by chunk, for small in-cache hash tables and parallel threads; each chunk must hold
whole queries. One rule for all of them, so a boundary case is fixed once.
"""

from __future__ import annotations

import numpy as np

__all__ = ["block_aligned_bounds", "bounds_between_blocks"]


def block_aligned_bounds(groups: np.ndarray, chunk: int) -> np.ndarray:
    """Row bounds ``[0, b1, ..., n]`` that split rows into chunks of about ``chunk`` rows, each bound at the
    start of a block (``groups`` holds equal values in contiguous blocks). A chunk holds at least one whole
    block, so a block longer than ``chunk`` is one chunk; no rows give ``[0]`` (no chunk)."""
    if chunk < 1:
        raise ValueError(f"chunk must be positive, got {chunk}")
    n = int(groups.size)
    if n == 0:
        return np.zeros(1, dtype=np.int64)
    starts = np.flatnonzero(np.concatenate(([True], groups[1:] != groups[:-1])))
    return bounds_between_blocks(starts, n, chunk)


def bounds_between_blocks(starts: np.ndarray, n: int, chunk: int) -> np.ndarray:
    """:func:`block_aligned_bounds` from the blocks' first rows (ascending, the first one 0) and the row
    count, for callers that hold blocks rather than one group per row."""
    if chunk < 1:
        raise ValueError(f"chunk must be positive, got {chunk}")
    if n == 0:
        return np.zeros(1, dtype=np.int64)
    # the first block start at or after each multiple of ``chunk``; past the last start, the last start
    first_at = np.minimum(np.searchsorted(starts, np.arange(0, n, chunk)), starts.size - 1)
    return np.append(np.unique(starts[first_at]), n).astype(np.int64)
