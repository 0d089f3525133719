"""The run table's shared rules: order by score (trec_eval's rule) or by rank, number ranks, refuse
non-finite scores. Every run reader ends with these, so every format gives the same table."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa

from abcompare.core.errors import DataError
from abcompare.core.hits import KEY_RULE
from abcompare.core.ranking import run_order
from abcompare.data._lines import (
    first_true,
)
from abcompare.data.hit_lists import (
    RUN_COLUMNS,
)


def order_by_score(frame: pd.DataFrame) -> pd.DataFrame:
    """Sort by query (first appearance), score descending, key descending (trec_eval); number ranks from 1."""
    qcodes, _ = pd.factorize(frame["query_id"], sort=False)
    score = frame["score"].to_numpy(dtype=float, na_value=np.nan)
    order = run_order(
        qcodes.astype(np.int64), score, None, pa.array(frame["key"].astype("str"), type=pa.large_string())
    )
    out = frame.iloc[order].reset_index(drop=True)
    out.insert(1, "rank", ranks_within(qcodes[order]))
    return out


def ranks_within(sorted_codes: np.ndarray) -> np.ndarray:
    """1-based position within each run of equal codes (the codes are already grouped)."""
    n = len(sorted_codes)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    starts = np.flatnonzero(np.r_[True, sorted_codes[1:] != sorted_codes[:-1]])
    if n % starts.size == 0 and np.all(np.diff(starts) == n // starts.size):  # equal blocks (100 hits each)
        return np.tile(np.arange(1, n // starts.size + 1, dtype=np.int64), starts.size)
    ranks = np.ones(n, dtype=np.int64)  # +1 a row, and at each group start a step back to 1
    ranks[starts[1:]] = 1 - np.diff(starts)
    return np.cumsum(ranks, out=ranks)


def rank_problem(sorted_ranks: Sequence[int]) -> str:
    for position, r in enumerate(sorted_ranks, start=1):
        if position > 1 and r == sorted_ranks[position - 2]:
            return f"duplicate rank {r}"
        if r != position:
            return f"rank gap: expected rank {position}, found {r}"
    return "bad ranks"  # pragma: no cover


def finite_scores(frame: pd.DataFrame, path: str | Path | None) -> pd.DataFrame:
    bad = first_true(np.isinf(frame["score"].to_numpy(dtype=float)))
    if bad is not None:
        raise DataError(
            f"score is inf for query {frame.at[bad, 'query_id']!r}, rank {frame.at[bad, 'rank']}",
            file=path,
            field="score",
            hint="scores must be finite",
        )
    return frame


def column_order(frame: pd.DataFrame) -> pd.DataFrame:
    extra = [c for c in frame.columns if c not in RUN_COLUMNS]
    return frame[[*RUN_COLUMNS, *extra]]


def _set(frame: pd.DataFrame, name: str) -> np.ndarray:
    """Whether each row's ``name`` is set (present, not NA, not blank): the id rule's ``clean_id``."""
    if name not in frame:
        return np.zeros(len(frame), dtype=bool)
    column = frame[name]
    return (column.notna() & (column.astype("str").str.strip() != "")).to_numpy(dtype=bool)


def nameless_hits(frame: pd.DataFrame) -> np.ndarray:
    """Rows that name their hit by an id column (``key`` or ``id``) left blank while no other hit field
    gives a key (``core.hits.KEY_RULE``): the hit would be matched by its position in the list alone, so a
    blank id is refused where it is written, not left to match an annotated ``"3"``."""
    id_columns = [name for name in ("key", "id") if name in frame]
    if not id_columns:
        return np.zeros(len(frame), dtype=bool)
    keyed = _set(frame, "key").copy()
    for fields, _ in KEY_RULE:
        keyed |= np.logical_and.reduce([_set(frame, name) for name in fields])
    return ~keyed
