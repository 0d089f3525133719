"""The pool's decisive order: the unjudged hits whose judgment can move the primary delta most come first
(a hand case), ties keep today's stable order, and ``stable`` is today's order."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from abcompare.core.errors import DataError
from abcompare.data.pooling import pool_unjudged
from abcompare.evaluation.unjudged import decisiveness

QUERIES = pd.DataFrame({"query_id": ["q1", "q2"], "text": ["first", "second"]})


def _run(lists: dict[str, list[str]]) -> pd.DataFrame:
    rows = [(q, rank, key) for q, keys in lists.items() for rank, key in enumerate(keys, start=1)]
    return pd.DataFrame(rows, columns=["query_id", "rank", "key"])


RUNS = {
    "control": _run({"q1": ["a", "u1"], "q2": ["w", "r"]}),
    "treatment": _run({"q1": ["a", "v1"], "q2": ["r", "z"]}),
}
JUDGED = pd.DataFrame({"query_id": ["q1", "q2"], "key": ["a", "r"], "grade": [1, 1]})


def test_the_most_decisive_hit_comes_first_and_ties_keep_the_stable_order():
    """nDCG@2, ai4j, two queries (1/log2 3 = 0.631 is rank 2's discount).

    q2 today: control r at rank 2 scores 0.631, treatment r at rank 1 scores 1: +0.369. Judged relevant,
    w (the control's rank 1) makes the control 1 and the treatment 1 / 1.631 = 0.613 (its ideal now counts
    two hits): -0.387, a swing of the mean of (-0.387 - 0.369) / 2 = -0.378. z (treatment rank 2) makes
    the treatment 1 and the control 0.631 / 1.631 = 0.387: +0.613, a swing of +0.122.
    q1 today: both 1. u1 makes the control 1 and the treatment 0.613: a swing of -0.193; v1 +0.193.
    """
    weights = decisiveness(RUNS, JUDGED, metric="ndcg@2", convention="ai4j")
    by_key = dict(zip(weights["key"], weights["decisiveness"], strict=True))
    g = 1 / np.log2(3)
    assert by_key["w"] == pytest.approx(abs((1 / (1 + g) - 1) - (1 - g)) / 2)
    assert by_key["z"] == pytest.approx(((1 - g / (1 + g)) - (1 - g)) / 2)
    assert by_key["u1"] == pytest.approx(by_key["v1"]) == pytest.approx((1 - 1 / (1 + g)) / 2)

    stable = pool_unjudged(RUNS, JUDGED, QUERIES, depth=2, order="stable", decisiveness=weights)
    assert list(stable["key"]) == ["u1", "v1", "w", "z"]  # query by query, best rank, key
    decisive = pool_unjudged(RUNS, JUDGED, QUERIES, depth=2, decisiveness=weights)
    assert list(decisive["key"]) == ["w", "u1", "v1", "z"]  # w first; u1 and v1 tie: stable order
    assert sorted(decisive.columns) == sorted(stable.columns)


def test_hits_beyond_the_primary_cutoff_count_zero_and_keep_the_stable_order_after_the_decisive_ones():
    runs = {name: _run({q: keys + ["late"] for q, keys in lists.items()}) for name, lists in (
        ("control", {"q1": ["a", "u1"], "q2": ["w", "r"]}),
        ("treatment", {"q1": ["a", "v1"], "q2": ["r", "z"]}),
    )}  # fmt: skip
    weights = decisiveness(runs, JUDGED, metric="ndcg@2", convention="ai4j")
    pool = pool_unjudged(runs, JUDGED, QUERIES, depth=3, decisiveness=weights)
    assert list(pool["key"]) == ["w", "u1", "v1", "z", "late", "late"]
    assert list(pool["query_id"].iloc[-2:]) == ["q1", "q2"]


def test_an_unknown_order_is_a_located_error():
    with pytest.raises(DataError, match="unknown pool order"):
        pool_unjudged(RUNS, JUDGED, QUERIES, order="sideways")
