"""Chunked algorithms never cut a query's block and never fall off the end, wherever a chunk boundary lands
(the run reader's repeated-docno check, the batch evaluator's key coding); a million-line run reads."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from abcompare.core import ranking
from abcompare.core.errors import DataError
from abcompare.core.row_blocks import block_aligned_bounds
from abcompare.data import read_run
from abcompare.evaluation import batch as batch_module
from abcompare.evaluation import evaluate_run

BLOCK_SIZES = st.lists(st.integers(1, 12), min_size=0, max_size=30)


def grouped(sizes: list[int]) -> np.ndarray:
    return np.repeat(np.arange(len(sizes)), sizes)


@settings(max_examples=300, deadline=None)
@given(sizes=BLOCK_SIZES, chunk=st.integers(1, 40))
def test_bounds_cover_every_row_once_and_only_cut_between_blocks(sizes: list[int], chunk: int) -> None:
    groups = grouped(sizes)
    bounds = block_aligned_bounds(groups, chunk)
    block_starts = set(np.concatenate(([0], np.cumsum(sizes))).tolist())
    assert bounds[0] == 0 and bounds[-1] == groups.size
    assert np.all(np.diff(bounds) > 0), "no empty chunk"
    assert set(bounds.tolist()) <= block_starts, "a bound inside a block"
    assert len(bounds) - 1 <= -(-groups.size // chunk), "no more chunks than rows / chunk"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(sizes=st.lists(st.integers(1, 9), min_size=1, max_size=25), chunk=st.integers(1, 30), data=st.data())
def test_repeated_docno_check_is_right_at_every_chunk_boundary(
    sizes: list[int], chunk: int, data, monkeypatch: pytest.MonkeyPatch
) -> None:
    qcodes = grouped(sizes)
    docs = [f"d{i}" for size in sizes for i in range(size)]
    repeat_in = data.draw(
        st.one_of(st.none(), st.sampled_from([i for i, s in enumerate(sizes) if s > 1] or [None]))
    )
    if repeat_in is not None:
        start = int(np.sum(sizes[:repeat_in]))
        docs[start + 1] = docs[start]
    with monkeypatch.context() as patch:
        patch.setattr(ranking, "_IDENTITY_CHUNK", chunk)
        identity = ranking.key_identity(qcodes, pa.array(docs, type=pa.large_string()))
        found = ranking.repeated_within_queries(qcodes, identity)
    assert found.any() == (repeat_in is not None)
    if repeat_in is not None:
        assert np.flatnonzero(found).tolist() == [int(np.sum(sizes[:repeat_in])) + 1]


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(sizes=st.lists(st.integers(1, 9), min_size=1, max_size=25), chunk=st.integers(1, 30))
def test_batch_evaluation_does_not_depend_on_the_chunk_size(
    sizes: list[int], chunk: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = pd.DataFrame(
        {
            "query_id": [f"q{q}" for q, size in enumerate(sizes) for _ in range(size)],
            "rank": [r + 1 for size in sizes for r in range(size)],
            "key": [f"d{(q * 7 + r) % 11}" for q, size in enumerate(sizes) for r in range(size)],
        }
    )
    annotations = pd.DataFrame(
        {"query_id": [f"q{q}" for q in range(len(sizes))], "key": ["d3"] * len(sizes), "grade": 1}
    )
    expected = evaluate_run(run, annotations, k=(1, 5))
    with monkeypatch.context() as patch:
        patch.setattr(batch_module, "_CHUNK", chunk)
        pd.testing.assert_frame_equal(evaluate_run(run, annotations, k=(1, 5)), expected)


def write_trec(path, n_queries: int, per_query: int) -> None:
    q = np.repeat(np.arange(n_queries), per_query)
    r = np.tile(np.arange(per_query), n_queries)
    lines = pd.Series(["q"] * q.size).str.cat(
        [pd.Series(q).astype(str), pd.Series([" Q0 d"] * q.size), pd.Series(r).astype(str),
         pd.Series([" "] * q.size), pd.Series(r + 1).astype(str), pd.Series([" "] * q.size),
         pd.Series(per_query - r).astype(str), pd.Series([" sys"] * q.size)]
    )  # fmt: skip
    path.write_text("\n".join(lines) + "\n")


def test_a_chunk_boundary_inside_the_last_query_of_a_long_run(tmp_path) -> None:
    # 57,000 lines, six queries of 9,500 (within the 10,000 hits a query core.limits allows): the multiple
    # 50,000 falls inside the last query's block (lines 47,501 to 57,000)
    path = tmp_path / "run.trec"
    write_trec(path, 6, 9_500)
    run = read_run(path)
    assert len(run) == 57_000
    per_query = evaluate_run(
        run, pd.DataFrame({"query_id": ["q0", "q1"], "key": ["d5", "d7"], "grade": [1, 1]})
    )
    assert per_query.loc["q0", "mrr@10"] == pytest.approx(1 / 6)


def test_a_repeated_docno_in_the_last_query_of_a_long_run_is_located(tmp_path) -> None:
    path = tmp_path / "run.trec"
    write_trec(path, 2, 30_000)
    with path.open("a") as handle:
        handle.write("q1 Q0 d17 30001 0.5 sys\n")
    with pytest.raises(DataError, match="duplicate document 'd17' for query 'q1'") as info:
        read_run(path)
    assert info.value.line == 60_001


def test_a_million_line_run_reads_and_evaluates(tmp_path) -> None:
    path = tmp_path / "run.trec"
    write_trec(path, 10_000, 100)
    run = read_run(path)
    assert len(run) == 1_000_000
    annotations = pd.DataFrame({"query_id": [f"q{i}" for i in range(10_000)], "key": "d0", "grade": 1})
    per_query = evaluate_run(run, annotations, k=(10,))
    assert (per_query["mrr@10"] == 1.0).all()


@settings(max_examples=300, deadline=None)
@given(n_resamples=st.integers(0, 50_000), n_queries=st.integers(0, 2_000_000), batch=st.integers(1, 10**7))
def test_resample_batches_add_up_whatever_the_sizes(n_resamples: int, n_queries: int, batch: int) -> None:
    from abcompare.stats._chunks import chunk_sizes

    sizes = list(chunk_sizes(n_resamples, n_queries, batch))
    assert sum(sizes) == n_resamples
    assert all(size >= 1 for size in sizes)
