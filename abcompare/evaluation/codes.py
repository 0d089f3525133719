"""Factorise ids and keys to integer codes with pyarrow: C-speed hashing, stripping and sorting of strings.

Used by the batch evaluator so that millions of hits never pass through a Python loop.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from abcompare.core.arrow_memory import prefer_system_pool
from abcompare.core.codes import encode, encode_blocks, encode_grouped, lookup, sorted_unique
from abcompare.core.hits import clean_id

__all__ = ["as_strings", "clean_labels", "clean_strings", "encode", "encode_blocks", "encode_grouped",
           "joined_strings", "lookup", "sorted_unique"]  # fmt: skip

prefer_system_pool()  # before the first large Arrow buffer (abcompare.core.arrow_memory says why)


def as_strings(values: Iterable[object]) -> pa.Array:
    """``values`` as an Arrow string array, each value as the id rule writes it (``str(value)``, integral
    floats as integers); missing stays null."""
    try:
        array = pa.array(values, from_pandas=True)
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError):
        array = None
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    if array is not None and pa.types.is_dictionary(array.type):  # a pandas categorical
        array = array.dictionary_decode()
    if array is not None and (pa.types.is_string(array.type) or pa.types.is_large_string(array.type)):
        return array
    if array is not None and (pa.types.is_integer(array.type) or pa.types.is_null(array.type)):
        return pc.cast(array, pa.large_string())
    return pa.array([_text(v) for v in values], type=pa.large_string())


def _text(value: object) -> str | None:
    """A value as the id rule writes it before stripping (``abcompare.core.hits.clean_id``): None for missing
    or NaN, an integral float as its integer."""
    if value is None:
        return None
    if isinstance(value, float):
        if value != value:
            return None
        if value.is_integer() and abs(value) < 2**53:
            return str(int(value))
    return str(value)


def joined_strings(values: Callable[[], Iterable[object]], count: int) -> pa.Array | None:
    """``count`` Python strings from the iterable ``values`` as one Arrow string array, built by joining
    them once (C speed) instead of converting object by object; None when they are not all ASCII
    ``str`` (the caller then takes the general path). ``values`` is a callable returning a fresh
    iterator, since the strings are walked twice: to join them and to measure them."""
    try:
        joined = "".join(values())
    except TypeError:  # a non-str key (an int, None): the general path converts each one
        return None
    if not joined.isascii():  # then characters are not bytes: lengths would not be byte offsets
        return None
    lengths = np.fromiter(map(len, values()), dtype=np.int64, count=count)
    offsets = np.zeros(count + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    data = pa.py_buffer(joined.encode("ascii"))
    return pa.LargeStringArray.from_buffers(count, pa.py_buffer(offsets), data)


def clean_labels(codes: np.ndarray, labels: pa.Array) -> tuple[np.ndarray, pa.Array]:
    """Strip the labels as ``clean_id`` does and merge the ones that become equal; blank labels become -1.

    Only labels that may have whitespace at an edge (or are empty) go through Python.
    """
    flagged = np.flatnonzero(_edge_candidates(labels))
    if flagged.size == 0:
        return codes, labels
    values = labels.to_pylist()
    for i in flagged:
        values[i] = clean_id(values[i])
    merged, merged_labels = encode(pa.array(values, type=pa.large_string()))
    remap = np.append(merged, -1)  # code -1 stays -1
    return remap[codes], merged_labels


def clean_strings(strings: pa.Array) -> pa.Array:
    """Every string stripped as ``clean_id`` does, blank ones null. Only strings whose first or last byte
    could belong to a whitespace character (or that are empty) go through Python."""
    flagged = np.flatnonzero(_edge_candidates(strings))
    if flagged.size == 0:
        return strings
    before = strings.take(pa.array(flagged)).to_pylist()
    after = [clean_id(value) for value in before]
    changed = np.array([a != b for a, b in zip(after, before, strict=True)], dtype=bool)
    if not changed.any():
        return strings
    mask = np.zeros(len(strings), dtype=bool)
    mask[flagged[changed]] = True
    replacements = pa.array([a for a, c in zip(after, changed, strict=True) if c], type=strings.type)
    return pc.replace_with_mask(strings, pa.array(mask), replacements)


def _byte_table(*ranges: tuple[int, int]) -> np.ndarray:
    table = np.zeros(256, dtype=bool)
    for low, high in ranges:
        table[low : high + 1] = True
    return table


# UTF-8 bytes that can start / end a character for which str.isspace() is true: ASCII 09-0D, 1C-20;
# U+0085, U+00A0 (C2 ..); U+1680 (E1 ..); U+2000-200A, 2028, 2029, 202F, 205F (E2 ..); U+3000 (E3 ..).
_FIRST_BYTE = _byte_table((0x09, 0x0D), (0x1C, 0x20), (0xC2, 0xC2), (0xE1, 0xE3))
_LAST_BYTE = _byte_table((0x09, 0x0D), (0x1C, 0x20), (0x80, 0x8A), (0x85, 0x85), (0x9F, 0x9F), (0xA0, 0xA0),
                         (0xA8, 0xA9), (0xAF, 0xAF))  # fmt: skip


_PARALLEL_FROM = 1_000_000  # strings: below this, one thread is as fast


def _edge_candidates(strings: pa.Array) -> np.ndarray:
    """Strings that are empty or null, or whose first or last byte could be part of whitespace; a long
    array in one slice per CPU, on threads (numpy's gathers release the GIL)."""
    n, pieces = len(strings), pa.cpu_count()
    if n < _PARALLEL_FROM or pieces < 2:
        return _edge_candidates_in(strings)
    bounds = np.linspace(0, n, pieces + 1).astype(np.int64)
    with ThreadPoolExecutor(max_workers=pieces) as pool:
        slices = [strings.slice(low, high - low) for low, high in zip(bounds[:-1], bounds[1:], strict=True)]
        return np.concatenate(list(pool.map(_edge_candidates_in, slices)))


def _edge_candidates_in(strings: pa.Array) -> np.ndarray:
    """:func:`_edge_candidates` of one slice, in this thread."""
    if len(strings) == 0:
        return np.zeros(0, dtype=bool)
    offset_type = np.int64 if pa.types.is_large_string(strings.type) else np.int32
    buffers = strings.buffers()
    offsets = np.frombuffer(buffers[1], dtype=offset_type)[strings.offset : strings.offset + len(strings) + 1]
    if buffers[2] is None or buffers[2].size == 0:
        return np.ones(len(strings), dtype=bool)
    data = np.frombuffer(buffers[2], dtype=np.uint8)
    start, end = offsets[:-1], offsets[1:]  # views: no copies of millions of offsets
    empty = end <= start
    first = np.take(data, start, mode="clip")  # an empty last string points past the data: clipped
    last = np.take(data, end - 1, mode="clip")
    return empty | _FIRST_BYTE[first] | _LAST_BYTE[last]
