"""trec_eval's hit order, written once: the per-query form, the whole-run sort and the counting form agree."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from abcompare.core.ranking import (
    first_occurrences,
    key_identity,
    padded_lists,
    ranked_above,
    repeated_within_queries,
    run_order,
    trec_order,
)

KEYS = ["a", "b", "B", "d#0", "z", "é", "10", "9"]
queries = st.dictionaries(
    st.integers(0, 4),
    st.dictionaries(st.sampled_from(KEYS), st.sampled_from([0.0, 0.5, 1.0, -2.0]), min_size=0, max_size=8),
    max_size=5,
)


def _flat(run: dict[int, dict[str, float]], shuffle_seed: int | None):
    rows = [(q, key, score) for q, scores in sorted(run.items()) for key, score in scores.items()]
    if shuffle_seed is not None:
        np.random.default_rng(shuffle_seed).shuffle(rows)
    query = np.array([r[0] for r in rows], dtype=np.int64)
    keys = pa.array([r[1] for r in rows], type=pa.large_string())
    score = np.array([r[2] for r in rows], dtype=np.float64)
    return query, keys, score


@settings(max_examples=200, deadline=None)
@given(queries, st.one_of(st.none(), st.integers(0, 3)))
def test_the_whole_run_sort_puts_each_query_in_its_trec_order(run, shuffle_seed):
    query, keys, score = _flat(run, shuffle_seed)
    order = run_order(query, score, None, keys)
    assert sorted(order.tolist()) == list(range(query.size))
    ordered_query, ordered_keys = query[order], keys.take(pa.array(order)).to_pylist()
    assert ordered_query.tolist() == sorted(ordered_query.tolist())
    for q, scores in run.items():
        assert [k for qq, k in zip(ordered_query, ordered_keys, strict=True) if qq == q] == trec_order(scores)


@settings(max_examples=200, deadline=None)
@given(queries)
def test_counting_the_hits_ranked_above_gives_each_hits_position(run):
    query, keys, score = _flat(run, None)
    lengths = np.bincount(query, minlength=max(run, default=-1) + 1)
    padded = padded_lists(score, lengths)
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    higher, tied = ranked_above(padded, query, score)
    key_list = keys.to_pylist()
    for row in range(query.size):
        q = query[row]
        same = range(starts[q], starts[q] + lengths[q])
        ties_above = sum(
            1 for other in same if score[other] == score[row] and key_list[other] > key_list[row]
        )
        position = higher[row] + (ties_above if tied[row] else 0)
        assert position == trec_order(run[q]).index(key_list[row])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.sampled_from(KEYS), max_size=9), max_size=6))
def test_a_repeat_is_a_key_seen_earlier_in_the_same_query(lists):
    query = np.array([q for q, keys in enumerate(lists) for _ in keys], dtype=np.int64)
    keys = pa.array([k for keys in lists for k in keys], type=pa.large_string())
    repeated = repeated_within_queries(query, key_identity(query, keys))
    expected = []
    for keys_of_query in lists:
        seen: set[str] = set()
        for key in keys_of_query:
            expected.append(key in seen)
            seen.add(key)
    assert repeated.tolist() == expected
    kept = [k for k, r in zip(keys.to_pylist(), repeated, strict=True) if not r]
    assert kept == [k for keys_of_query in lists for k in first_occurrences(keys_of_query)]


def test_a_list_without_scores_keeps_its_rank_order():
    query = np.array([0, 0, 1, 1, 1])
    rank = np.array([2.0, 1.0, 1.0, 3.0, 2.0])
    keys = pa.array(list("abcde"), type=pa.large_string())
    assert run_order(query, None, rank, keys).tolist() == [1, 0, 2, 4, 3]


@given(
    st.lists(
        st.lists(st.tuples(st.sampled_from([0.5, 1.0, 2.0]), st.sampled_from("abcd")), max_size=5),
        min_size=1,
        max_size=6,
    )
)
def test_lists_in_order_agrees_with_the_one_sort(lists: list[list[tuple[float, str]]]) -> None:
    """In order exactly when the run's one sort would leave the rows where they are (empty lists too)."""
    from abcompare.core.ranking import lists_in_order, reordering

    lists = [list({key: (score, key) for score, key in hits}.values()) for hits in lists]  # no repeats
    lengths = np.array([len(hits) for hits in lists], dtype=np.int64)
    score = np.array([s for hits in lists for s, _ in hits], dtype=np.float64)
    keys = pa.array([k for hits in lists for _, k in hits], type=pa.large_string())
    # README: "score descending, ties by key descending, as trec_eval" (keys here are single ASCII letters)
    expected = all(hits == sorted(hits, key=lambda hit: (-hit[0], -ord(hit[1]))) for hits in lists)
    assert lists_in_order(score, lengths, keys, most_ties=score.size) == expected
    query = np.repeat(np.arange(len(lists), dtype=np.int64), lengths)
    assert (reordering(query, score, None, keys) is None) == expected  # the run's one sort agrees


def test_lists_in_order_gives_up_on_more_ties_than_allowed() -> None:
    from abcompare.core.ranking import lists_in_order

    score, keys = np.array([1.0, 1.0, 1.0]), pa.array(["c", "b", "a"])
    assert lists_in_order(score, np.array([3]), keys, most_ties=2)
    assert not lists_in_order(score, np.array([3]), keys, most_ties=1)
