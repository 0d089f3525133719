"""The per-query trec convention (TrecEvaluator, trec_order): each rule against hand-computed values."""

from __future__ import annotations

import math

import pytest

from abcompare.core.errors import DataError
from abcompare.evaluation import TrecEvaluator, trec_order


def d(rank: int) -> float:
    """The DCG discount of a 1-based rank."""
    return 1 / math.log2(rank + 1)


def evaluate(hits, annotations, top_k, threshold=1):
    return TrecEvaluator(relevance_threshold=threshold).evaluate(hits, annotations, top_k)


def test_precision_divides_by_k_even_when_fewer_hits_were_retrieved():
    result = evaluate(["a", "b"], {"a": 1}, 10)
    assert result.precision_at_k == 0.1
    assert result.evaluated_at_k == 10


def test_repeated_keys_count_once_at_their_first_rank_and_later_hits_move_up():
    result = evaluate(["a", "a", "b"], {"a": 1, "b": 1}, 2)
    assert result.true_positive_count == 2  # "b" moved up to rank 2
    assert result.recall_at_k == 1.0
    assert result.retrieved_count == 2
    assert evaluate(["a", "a", "a"], {"a": 1}, 3).recall_at_k == 1.0


def test_graded_ndcg_uses_grades_as_gains_and_the_ideal_over_the_top_k_judged_grades():
    # ranked c(1) a(3) x b(2); judged grades 3, 2, 1, 0
    grades = {"a": 3, "b": 2, "c": 1, "z": 0}
    result = evaluate(["c", "a", "x", "b"], grades, 3)
    dcg = 1 * d(1) + 3 * d(2)
    ideal = 3 * d(1) + 2 * d(2) + 1 * d(3)
    assert result.ndcg == pytest.approx(dcg / ideal, abs=1e-15)
    assert result.relevant_count == 3
    assert result.true_positive_count == 2


def test_threshold_decides_binary_relevance_but_not_the_gains():
    grades = {"a": 1, "b": 2}
    result = evaluate(["a", "b"], grades, 2, threshold=2)
    assert result.relevant_count == 1
    assert result.true_positive_count == 1
    assert result.precision_at_k == 0.5
    assert result.mrr == 0.5
    assert result.ndcg == pytest.approx((1 * d(1) + 2 * d(2)) / (2 * d(1) + 1 * d(2)), abs=1e-15)


def test_negative_grades_give_no_gain_and_are_not_relevant():
    result = evaluate(["n", "a"], {"n": -1, "a": 1}, 2)
    assert result.true_positive_count == 1
    assert result.ndcg == pytest.approx(d(2) / d(1), abs=1e-15)


def test_unjudged_hits_are_never_relevant_even_at_threshold_zero():
    result = evaluate(["x", "z"], {"z": 0, "a": 1}, 2, threshold=0)
    assert result.true_positive_count == 1  # z: judged with grade 0 >= 0
    assert result.relevant_count == 2


def test_reciprocal_rank_is_cut_at_k():
    assert evaluate(["x", "y", "a"], {"a": 1}, 2).mrr == 0.0
    assert evaluate(["x", "y", "a"], {"a": 1}, 3).mrr == pytest.approx(1 / 3)


def test_iterable_annotations_mean_grade_one():
    assert evaluate(["a", "b"], [" a ", None, ""], 2).ndcg == 1.0


def test_empty_inputs_give_zeros():
    result = evaluate([], {}, 5)
    assert (result.precision_at_k, result.recall_at_k, result.mrr, result.ndcg) == (0, 0, 0, 0)
    assert evaluate(None, {"a": 1}, None).precision_at_k == 0.0


def test_trec_order_is_score_descending_then_key_descending():
    assert trec_order({"a": 1.0, "c": 2.0, "b": 1.0, "B": 1.0}) == ["c", "b", "a", "B"]


def test_trec_order_rejects_missing_scores():
    with pytest.raises(DataError):
        trec_order({"a": float("nan")})
