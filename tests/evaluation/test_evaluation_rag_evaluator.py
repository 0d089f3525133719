"""RagEvaluator (the "ai4j" convention): the reference example and every rule of the issue, values by hand."""

from __future__ import annotations

import math

import pytest

from abcompare.core.hits import RagHit
from abcompare.evaluation import RagEvaluation, RagEvaluator


def _hits(*keys):
    return [RagHit(id=key) for key in keys]


def evaluate(hits, relevant, top_k=None) -> RagEvaluation:
    return RagEvaluator().evaluate(hits, relevant, top_k)


def test_reference_example():
    result = evaluate(_hits("a", "b", "c", "d"), {"b", "d"}, 4)
    assert result.evaluated_at_k == 4
    assert result.retrieved_count == 4
    assert result.relevant_count == 2
    assert result.true_positive_count == 2
    assert result.precision_at_k == 0.5
    assert result.recall_at_k == 1.0
    assert result.f1_at_k == pytest.approx(2 / 3, abs=1e-15)
    assert result.mrr == 0.5
    expected = (1 / math.log2(3) + 1 / math.log2(5)) / (1 + 1 / math.log2(3))
    assert result.ndcg == pytest.approx(expected, abs=1e-15)
    assert round(result.ndcg, 4) == 0.6509
    assert round(result.f1_at_k, 4) == 0.6667


def test_result_is_importable_from_the_package_root():
    import abcompare

    assert abcompare.RagEvaluator is RagEvaluator
    assert abcompare.RagEvaluation is RagEvaluation
    from abcompare.evaluation.batch import evaluate_run

    assert abcompare.evaluate_run is evaluate_run


@pytest.mark.parametrize(
    ("hits", "relevant"),
    [([], []), (None, None), ([], ["a"]), (_hits("a"), []), ([None, None], None)],
)
def test_empty_inputs_give_zeros_and_never_raise(hits, relevant):
    result = evaluate(hits, relevant, 5)
    assert (result.precision_at_k, result.recall_at_k, result.f1_at_k, result.mrr, result.ndcg) == (
        0,
        0,
        0,
        0,
        0,
    )
    assert result.true_positive_count == 0


@pytest.mark.parametrize(("top_k", "limit"), [(None, 4), (0, 4), (-3, 4), (2, 2), (4, 4), (50, 4)])
def test_top_k_is_clamped_to_the_hit_count_and_non_positive_means_all(top_k, limit):
    result = evaluate(_hits("a", "b", "c", "d"), {"d"}, top_k)
    assert result.evaluated_at_k == limit
    hit = limit == 4
    assert result.precision_at_k == (1 / limit if hit else 0.0)


def test_precision_divides_by_the_evaluated_depth_not_by_k():
    result = evaluate(_hits("a", "b"), {"a"}, 10)
    assert result.evaluated_at_k == 2
    assert result.precision_at_k == 0.5


def test_relevant_ids_drop_none_and_blank_strip_and_deduplicate():
    result = evaluate(_hits("a", "b"), [None, "", "  ", " a ", "a", "a\t", "z"], 2)
    assert result.relevant_count == 2  # {"a", "z"}
    assert result.true_positive_count == 1
    assert result.recall_at_k == 0.5


def test_matching_is_exact_and_case_sensitive():
    result = evaluate(_hits("Doc1", "doc-1"), {"doc1"}, 2)
    assert result.true_positive_count == 0


def test_repeated_key_counts_each_time_so_recall_can_exceed_one():
    result = evaluate(_hits("a", "a", "b"), {"a"}, 3)
    assert result.true_positive_count == 2
    assert result.recall_at_k == 2.0
    assert result.precision_at_k == pytest.approx(2 / 3, abs=1e-15)
    # DCG counts both positions; the ideal has min(3, 1) = 1 position
    assert result.ndcg == pytest.approx(1 + 1 / math.log2(3), abs=1e-15)
    assert result.f1_at_k == pytest.approx(2 * (2 / 3) * 2 / (2 / 3 + 2), abs=1e-15)


def test_none_hits_take_their_index_as_key():
    result = evaluate([None, RagHit(id="x"), None], {"2"}, 3)
    assert result.true_positive_count == 1
    assert result.mrr == pytest.approx(1 / 3)
    assert result.retrieved_count == 3


def test_keys_use_the_stable_key_fallbacks():
    hits = [RagHit(document_id="d1", chunk_index=0), RagHit(content=" text "), {"source_path": "p"}]
    result = evaluate(hits, {"d1#0", "text", "p#-"}, None)
    assert result.true_positive_count == 3
    assert result.ndcg == 1.0


def test_plain_strings_are_hit_ids_and_blank_ones_fall_back_to_the_index():
    result = evaluate([" a ", "", "c"], {"a", "1"}, None)
    assert result.true_positive_count == 2


def test_mrr_is_the_first_relevant_rank_within_the_depth():
    assert evaluate(_hits("a", "b", "c"), {"c"}, 2).mrr == 0.0
    assert evaluate(_hits("a", "b", "c"), {"c", "b"}, 3).mrr == 0.5


def test_ideal_dcg_uses_min_of_depth_and_relevant_count():
    # 3 relevant, depth 2, both hits relevant: DCG equals the ideal over 2 positions
    assert evaluate(_hits("a", "b", "c"), {"a", "b", "z"}, 2).ndcg == 1.0
    # depth 3, 1 relevant at rank 2: DCG 1/log2(3), ideal 1
    assert evaluate(_hits("a", "b", "c"), {"b"}, 3).ndcg == pytest.approx(1 / math.log2(3), abs=1e-15)


def test_f1_is_zero_when_precision_and_recall_are_zero():
    assert evaluate(_hits("a"), {"b"}, 1).f1_at_k == 0.0
