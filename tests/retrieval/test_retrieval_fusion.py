"""Fusion: the issue's worked example, each fallback, weights, ties and merge-by-stable-key."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

import abcompare
from abcompare.core.errors import RetrievalError
from abcompare.core.hits import RagHit
from abcompare.retrieval.fusion import fuse


def hits(pairs, source=None):
    return [RagHit(id=i, score=s, retriever_source=source) for i, s in pairs]


DENSE = hits([("a", 0.95), ("b", 0.90), ("c", 0.70)], "dense")
BM25 = hits([("b", 12.0), ("d", 11.0), ("a", 8.0)], "bm25")


def ids(fused):
    return [h.id for h in fused]


def scores(fused):
    return {h.id: h.fusion_score for h in fused}


def test_fuse_is_exported_at_package_level():
    assert abcompare.fuse is fuse


@pytest.mark.parametrize("method", ["rrf", "rsf", "dbsf", "dbsf-3sigma"])
def test_issue_example_orders_b_a_d_c_for_every_method(method):
    fused = fuse([DENSE, BM25], method=method)
    assert ids(fused) == ["b", "a", "d", "c"]
    assert [h.rank for h in fused] == [1, 2, 3, 4]
    assert all(h.score == h.fusion_score for h in fused)


def test_rrf_sums_reciprocal_ranks_with_k_60():
    s = scores(fuse([DENSE, BM25]))
    assert s["b"] == pytest.approx(1 / 62 + 1 / 61)
    assert s["a"] == pytest.approx(1 / 61 + 1 / 63)
    assert s["d"] == pytest.approx(1 / 62)
    assert s["c"] == pytest.approx(1 / 63)


@pytest.mark.parametrize("k", [0, -5])
def test_rrf_non_positive_k_means_60(k):
    assert scores(fuse([DENSE, BM25], k=k)) == scores(fuse([DENSE, BM25], k=60))


def test_rrf_custom_k_and_weights():
    s = scores(fuse([DENSE, BM25], k=1, weights=[2.0, 1.0]))
    assert s["a"] == pytest.approx(2 / 2 + 1 / 4)
    assert s["d"] == pytest.approx(1 / 3)


def test_rsf_matches_the_issue_numbers():
    s = scores(fuse([DENSE, BM25], method="rsf"))
    assert s == pytest.approx({"b": 1.8, "a": 1.0, "d": 0.75, "c": 0.0})


def test_dbsf_matches_the_issue_numbers():
    s = scores(fuse([DENSE, BM25], method="dbsf"))
    assert s == pytest.approx({"b": 1.3409, "a": 0.9184, "d": 0.5968, "c": 0.1996}, abs=1e-4)


def test_dbsf_3sigma_uses_sample_sd_unclipped():
    # dense: mean .85, sample sd .132288; bm25: mean 31/3, sample sd 2.081666 (computed by hand)
    def norm(s, mean, sd):
        return (s - (mean - 3 * sd)) / (6 * sd)

    dsd, bsd = math.sqrt(0.035 / 2), math.sqrt((26 / 3) / 2)
    s = scores(fuse([DENSE, BM25], method="dbsf-3sigma"))
    assert s["b"] == pytest.approx(norm(0.90, 0.85, dsd) + norm(12, 31 / 3, bsd))
    assert s["c"] == pytest.approx(norm(0.70, 0.85, dsd))
    assert s["b"] == pytest.approx(1.19645, abs=1e-4)


def test_dbsf_3sigma_is_not_clipped_for_outliers():
    many = hits([(str(i), 0.0) for i in range(20)] + [("top", 100.0)])
    s = scores(fuse([many], method="dbsf-3sigma"))
    assert s["top"] > 1.0


@pytest.mark.parametrize("method", ["rsf", "dbsf"])
def test_missing_score_falls_back_to_reciprocal_rank(method):
    with_gap = [RagHit(id="x", score=3.0), RagHit(id="y", score=None), RagHit(id="z", score=1.0)]
    assert scores(fuse([with_gap], method=method)) == pytest.approx({"x": 1.0, "y": 0.5, "z": 1 / 3})


@pytest.mark.parametrize("method", ["rsf", "dbsf"])
def test_nan_score_counts_as_missing(method):
    with_nan = [RagHit(id="x", score=float("nan")), RagHit(id="y", score=1.0)]
    assert scores(fuse([with_nan], method=method)) == pytest.approx({"x": 1.0, "y": 0.5})


@pytest.mark.parametrize("method", ["rsf", "dbsf"])
def test_single_hit_and_no_spread_fall_back_to_reciprocal_rank(method):
    assert scores(fuse([hits([("x", 7.0)])], method=method)) == {"x": 1.0}
    flat = hits([("x", 2.0), ("y", 2.0), ("z", 2.0)])
    assert scores(fuse([flat], method=method)) == pytest.approx({"x": 1.0, "y": 0.5, "z": 1 / 3})


def test_dbsf_3sigma_single_hit_or_no_spread_gives_one_half():
    assert scores(fuse([hits([("x", 7.0)])], method="dbsf-3sigma")) == {"x": 0.5}
    flat = hits([("x", 2.0), ("y", 2.0)])
    assert scores(fuse([flat], method="dbsf-3sigma")) == {"x": 0.5, "y": 0.5}


def test_dbsf_3sigma_missing_score_falls_back_to_reciprocal_rank():
    gap = [RagHit(id="x", score=None), RagHit(id="y", score=1.0)]
    assert scores(fuse([gap], method="dbsf-3sigma")) == pytest.approx({"x": 1.0, "y": 0.5})


def test_fallback_applies_per_list_only():
    flat = hits([("a", 1.0), ("b", 1.0)])
    # flat list -> 1/rank (a 1, b .5); DENSE -> min-max (a 1, b .8, c 0)
    assert scores(fuse([flat, DENSE], method="rsf")) == pytest.approx({"a": 2.0, "b": 1.3, "c": 0.0})


def test_weights_by_retriever_source_and_default_one():
    s = scores(fuse([DENSE, BM25], method="rsf", weights={"bm25": 0.5}))
    assert s == pytest.approx({"a": 1.0, "b": 0.8 + 0.5, "c": 0.0, "d": 0.375})


def test_equal_fused_scores_keep_first_seen_order():
    left = hits([("p", 1.0)])
    right = hits([("q", 1.0)])
    assert ids(fuse([left, right])) == ["p", "q"]
    assert ids(fuse([right, left])) == ["q", "p"]


def test_hits_merge_by_stable_key_and_keep_first_seen_fields():
    dense = [
        RagHit(document_id="doc", chunk_index=2, score=0.9, content="from dense", retriever_source="dense")
    ]
    bm25 = [RagHit(document_id="doc", chunk_index=2, score=5.0, content="from bm25", retriever_source="bm25")]
    (hit,) = fuse([dense, bm25])
    assert hit.content == "from dense"
    assert hit.retriever_source == "dense+bm25"
    assert hit.fusion_score == pytest.approx(2 / 61)


def test_duplicate_key_within_a_list_counts_once_at_its_best_rank():
    dup = hits([("a", 3.0), ("a", 2.0), ("b", 1.0)])
    assert scores(fuse([dup])) == pytest.approx({"a": 1 / 61, "b": 1 / 62})


def test_empty_lists_are_ignored():
    assert fuse([]) == []
    assert ids(fuse([[], DENSE])) == ["a", "b", "c"]


def test_bad_method_and_weight_count_are_retrieval_errors():
    with pytest.raises(RetrievalError, match="fusion method"):
        fuse([DENSE], method="combsum")
    with pytest.raises(RetrievalError, match="weights"):
        fuse([DENSE, BM25], weights=[1.0])


score_lists = st.lists(
    st.lists(st.tuples(st.sampled_from("abcdefgh"), st.floats(-100, 100)), max_size=8), max_size=4
)


@given(score_lists, st.sampled_from(["rrf", "rsf", "dbsf", "dbsf-3sigma"]))
def test_fused_list_is_sorted_unique_and_covers_every_key(lists, method):
    fused = fuse([hits(pairs) for pairs in lists], method=method)
    keys = [h.id for h in fused]
    assert len(keys) == len(set(keys))
    assert set(keys) == {i for pairs in lists for i, _ in pairs}
    values = [h.fusion_score for h in fused]
    assert values == sorted(values, reverse=True)
    assert [h.rank for h in fused] == list(range(1, len(fused) + 1))
