"""Integer codes of Arrow strings: ``encode`` numbers strings in first-seen order (null -1), and
``encode_blocks`` hashes one value per block and gives the same codes; both checked against plain Python."""

from __future__ import annotations

import itertools

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from abcompare.evaluation import codes

_VALUES = st.lists(st.one_of(st.sampled_from(["q1", "q2", "q3", "é", " q1"]), st.none()), max_size=60)


def _first_seen_codes(values: list[str | None]) -> tuple[list[int], list[str]]:
    """The oracle, in plain Python from the documented rule: each distinct string's code is the order in
    which it first appears, null is -1."""
    order: dict[str, int] = {}
    row_codes = [-1 if v is None else order.setdefault(v, len(order)) for v in values]
    return row_codes, list(order)


def _blocks_by_row(values: list[str | None]) -> tuple[list[int], list[int]]:
    """The oracle's codes of each run of equal neighbouring values, and the runs' lengths."""
    row_codes, _ = _first_seen_codes(values)
    runs = [(code, len(list(group))) for code, group in itertools.groupby(row_codes)]
    return [code for code, _ in runs], [length for _, length in runs]


@given(_VALUES)
def test_codes_are_first_seen_order_and_null_is_minus_one(values: list[str | None]) -> None:
    row_codes, labels = codes.encode(pa.array(values, type=pa.large_string()))
    expected_codes, expected_labels = _first_seen_codes(values)
    assert row_codes.tolist() == expected_codes
    assert labels.to_pylist() == expected_labels


@given(_VALUES, st.integers(1, 30))
def test_blocks_and_codes_equal_those_of_coding_every_row(values: list[str | None], repeat: int) -> None:
    values = [v for v in values for _ in range(repeat)]  # long blocks take the one-value-per-block way
    block_codes, labels, lengths = codes.encode_blocks(pa.array(values, type=pa.large_string()))
    expected_codes, expected_lengths = _blocks_by_row(values)
    assert block_codes.tolist() == expected_codes
    assert lengths.tolist() == expected_lengths
    assert labels.to_pylist() == _first_seen_codes(values)[1]
    decoded = [None if c < 0 else labels[c].as_py() for c in np.repeat(block_codes, lengths)]
    assert decoded == values


@given(st.lists(st.integers(-(2**40), 2**40), max_size=80))
def test_sorted_unique_is_the_distinct_values_ascending(values: list[int]) -> None:
    got = codes.sorted_unique(np.array(values, dtype=np.int64))
    assert got.dtype == np.int64
    assert got.tolist() == sorted(set(values))  # the oracle: Python's set, sorted


def test_a_query_in_two_blocks_keeps_one_code() -> None:
    block_codes, labels, lengths = codes.encode_blocks(pa.array(["a"] * 5 + ["b"] * 5 + ["a"] * 5))
    assert block_codes.tolist() == [0, 1, 0]
    assert labels.to_pylist() == ["a", "b"]
    assert lengths.tolist() == [5, 5, 5]


def test_no_strings_make_no_blocks() -> None:
    block_codes, labels, lengths = codes.encode_blocks(pa.array([], type=pa.large_string()))
    assert block_codes.size == lengths.size == len(labels) == 0


@given(st.lists(st.sampled_from(["d1", " d1", "d2 ", "\u00a0d3", "", "   ", "e\u2003", "f"]), max_size=40))
def test_stripping_in_parallel_slices_equals_the_id_rule(values: list[str]) -> None:
    """Long arrays are checked a slice per CPU; cut anywhere, every string is stripped as clean_id does."""
    from abcompare.core.hits import clean_id

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(codes, "_PARALLEL_FROM", 1)
        patch.setattr(codes.pa, "cpu_count", lambda: 3)
        cleaned = codes.clean_strings(pa.array(values, type=pa.large_string()))
    assert cleaned.to_pylist() == [clean_id(value) for value in values]
