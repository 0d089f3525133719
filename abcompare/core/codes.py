"""Integer codes for string columns (Arrow's hash kernel): each id is hashed once, then every join, dedupe
and group of the data and evaluation paths works on the codes, never on Python strings (issue 38)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["encode", "encode_blocks", "encode_grouped", "lookup", "sorted_unique"]


def encode(strings: pa.Array) -> tuple[np.ndarray, pa.Array]:
    """``(codes, labels)``: codes in first-seen order, -1 for null, with ``labels[code]`` the string."""
    encoded = pc.dictionary_encode(strings)
    codes = encoded.indices.to_numpy(zero_copy_only=False)
    if encoded.indices.null_count:
        codes = np.where(pd.isna(codes), -1, codes)
    return codes.astype(np.int64), encoded.dictionary


def encode_grouped(strings: pa.Array) -> tuple[np.ndarray, pa.Array]:
    """Like ``encode``, but hashes one value per block of equal neighbours: fast for a run table, whose
    query ids come in blocks. Falls back to ``encode`` when values are not grouped."""
    block_codes, labels, lengths = encode_blocks(strings)
    return np.repeat(block_codes, lengths), labels


def encode_blocks(strings: pa.Array) -> tuple[np.ndarray, pa.Array, np.ndarray]:
    """``(block codes, labels, block lengths)``: the strings as blocks of equal neighbours, each block's
    code as ``encode`` gives it (first-seen order, -1 for null). Only one value per block is hashed when
    the values come in blocks (a run table's query ids); otherwise every value is, and the blocks are read
    from the codes."""
    n = len(strings)
    if n >= 2 and not strings.null_count:
        change = pc.not_equal(strings.slice(1), strings.slice(0, n - 1)).to_numpy(zero_copy_only=False)
        starts = np.flatnonzero(np.concatenate(([True], change)))
        if starts.size * 4 <= n:
            block_codes, labels = encode(strings.take(pa.array(starts)))
            return block_codes, labels, np.diff(np.append(starts, n))
    row_codes, labels = encode(strings)
    if n == 0:
        return row_codes, labels, np.zeros(0, dtype=np.int64)
    starts = np.flatnonzero(np.concatenate(([True], row_codes[1:] != row_codes[:-1])))
    return row_codes[starts], labels, np.diff(np.append(starts, n))


def lookup(strings: pa.Array, labels: pa.Array) -> np.ndarray:
    """The code of each string among ``labels``, -1 when it is not there (or null)."""
    found = pc.index_in(strings, value_set=labels)
    return found.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)


def sorted_unique(values: np.ndarray) -> np.ndarray:
    """``np.unique(values)`` of an integer array, by one sort: numpy 2.4's ``np.unique`` without
    ``return_*`` hashes, which measured 14x slower than sorting on 2M codes with 1.5M distinct."""
    ordered = np.sort(np.asarray(values).ravel())
    if ordered.size < 2:
        return ordered
    keep = np.empty(ordered.size, dtype=bool)
    keep[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=keep[1:])
    return ordered[keep]
