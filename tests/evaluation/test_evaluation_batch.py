"""evaluate_run's contract: inputs it accepts, rows and their order, columns, attrs, errors."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from support.frames import run_frame

from abcompare.core.errors import AbcompareWarning, ConfigError, DataError
from abcompare.core.hits import RagHit
from abcompare.evaluation.batch import evaluate_run


def test_reference_example_in_batch():
    frame = evaluate_run({"q": ["a", "b", "c", "d"]}, {"q": ["b", "d"]}, k=4)
    row = frame.loc["q"]
    assert row["precision@4"] == 0.5
    assert row["recall@4"] == 1.0
    assert row["mrr@4"] == 0.5
    expected = (1 / math.log2(3) + 1 / math.log2(5)) / (1 + 1 / math.log2(3))
    assert row["ndcg@4"] == pytest.approx(expected, abs=1e-15)


def test_columns_index_and_attrs():
    frame = evaluate_run({"q": ["a"]}, {"q": ["a"]}, k=(10, 1))
    assert list(frame.columns) == [
        "precision@1", "precision@10", "recall@1", "recall@10", "f1@1", "f1@10", "mrr@1", "mrr@10",
        "ndcg@1", "ndcg@10", "judged@1", "judged@10", "retrieved_count", "relevant_count", "judged_count",
        "true_positive_count@1", "true_positive_count@10",
    ]  # fmt: skip
    assert frame.index.name == "query_id"
    assert frame.attrs == {"convention": "ai4j", "unjudged": "nonrelevant", "queries_with_repeated_keys": 0}
    assert frame["retrieved_count"].dtype == np.int64
    assert frame["ndcg@1"].dtype == np.float64


def test_rows_are_judged_queries_in_annotation_order():
    run = {"q9": ["x"], "q1": ["a"], "q2": ["b"], "unannotated": ["a"]}
    annotations = {"q2": ["b"], "q0": {"z": 0, "y": 2}, "q1": ["a"], "only_zero": {"a": 0}, "q3": ["c"]}
    frame = evaluate_run(run, annotations, k=1)
    assert list(frame.index) == ["q2", "q0", "q1", "only_zero", "q3"]  # judged at any grade: evaluated
    assert frame.loc["only_zero"].eq(0).all()
    assert frame.loc["q3"].drop("relevant_count").eq(0).all()  # no hits: zeros, stays in the mean
    assert frame.loc["q3", "relevant_count"] == 1
    assert frame.loc["q0", "relevant_count"] == 1


def test_query_ids_become_strings_so_int_and_str_ids_meet():
    frame = evaluate_run({1: ["a"]}, pd.DataFrame({"query_id": ["1"], "key": ["a"], "grade": [1]}), k=1)
    assert list(frame.index) == ["1"]
    assert frame.loc["1", "precision@1"] == 1.0


def test_threshold_selects_relevance_not_rows():
    annotations = {"q": {"a": 1, "b": 2}, "p": {"a": 1}}
    run = {"q": ["a", "b"], "p": ["a"]}
    frame = evaluate_run(run, annotations, k=2, relevance_threshold=2)
    assert list(frame.index) == ["q", "p"]  # p has no judgment at the threshold but is judged: it stays
    assert frame.loc["q", "true_positive_count@2"] == 1
    assert frame.loc["p", ["precision@2", "recall@2", "mrr@2", "ndcg@2"]].eq(0).all()  # ai4j: binary gains
    trec = evaluate_run(run, annotations, k=2, convention="trec", relevance_threshold=2)
    assert trec.loc["p", ["precision@2", "recall@2", "mrr@2"]].eq(0).all()
    assert trec.loc["p", "ndcg@2"] == 1.0  # trec: the grades are the gains, whatever the threshold


def test_mapping_of_hit_objects_uses_stable_keys():
    run = {"q": [RagHit(document_id="d", chunk_index=1), None, {"content": " t "}]}
    frame = evaluate_run(run, {"q": ["d#1", "1", "t"]}, k=3)
    assert frame.loc["q", "true_positive_count@3"] == 3


def test_dataframe_inputs_equal_mapping_inputs():
    run = run_frame([("q1", 1, "a", 3.0), ("q1", 2, "b", 2.0), ("q2", 1, "c", 1.0), ("q2", 2, "a", 0.5)])
    annotations = pd.DataFrame({"query_id": ["q1", "q2", "q2"], "key": ["b", "c", "x"], "grade": [1, 2, 1]})
    from_frames = evaluate_run(run, annotations, k=(1, 2), convention="trec")
    from_maps = evaluate_run(
        {"q1": ["a", "b"], "q2": ["c", "a"]},
        {"q1": {"b": 1}, "q2": {"c": 2, "x": 1}},
        k=(1, 2),
        convention="trec",
    )
    pd.testing.assert_frame_equal(from_frames, from_maps)


def test_run_frame_order_ai4j_uses_rank_and_trec_uses_score_then_key_descending():
    # rank says b first; scores say a and c tie on top, c wins on key descending
    run = run_frame([("q", 2, "a", 5.0), ("q", 1, "b", 1.0), ("q", 3, "c", 5.0)])
    annotations = {"q": ["c"]}
    assert evaluate_run(run, annotations, k=1, convention="trec").loc["q", "precision@1"] == 1.0
    ai4j = evaluate_run(run, annotations, k=(1, 3), convention="ai4j").loc["q"]
    assert ai4j["precision@1"] == 0.0
    assert ai4j["mrr@3"] == pytest.approx(1 / 3)


def test_score_mappings_rank_by_score_in_both_conventions():
    run = {"q": {"a": 1.0, "b": 2.0, "c": 2.0}}
    for convention in ("ai4j", "trec"):
        frame = evaluate_run(run, {"q": ["c"]}, k=1, convention=convention)
        assert frame.loc["q", "precision@1"] == 1.0


def test_unscored_queries_in_a_trec_run_frame_keep_rank_order():
    run = run_frame([("q", 1, "b", np.nan), ("q", 2, "a", np.nan), ("p", 1, "a", 1.0), ("p", 2, "b", 2.0)])
    frame = evaluate_run(run, {"q": ["b"], "p": ["b"]}, k=1, convention="trec")
    assert frame["precision@1"].tolist() == [1.0, 1.0]


def test_partly_scored_query_is_an_error():
    run = run_frame([("q", 1, "b", np.nan), ("q", 2, "a", 1.0)])
    with pytest.raises(DataError) as err:
        evaluate_run(run, {"q": ["b"]}, convention="trec")
    assert err.value.field == "score"


def test_repeated_keys_are_counted_per_query_and_warned_about_in_ai4j():
    run = {"q1": ["a", "a"], "q2": ["b", "c", "b"], "q3": ["a"], "other": ["z", "z"]}
    annotations = {"q1": ["a"], "q2": ["b"], "q3": ["a"]}
    with pytest.warns(AbcompareWarning, match="2 queries"):
        ai4j = evaluate_run(run, annotations, k=3)
    assert ai4j.attrs["queries_with_repeated_keys"] == 2
    assert ai4j.loc["q1", "recall@3"] == 2.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        trec = evaluate_run(run, annotations, k=3, convention="trec")
    assert trec.attrs["queries_with_repeated_keys"] == 2
    assert trec.loc["q1", "recall@3"] == 1.0
    assert trec.loc["q2", "retrieved_count"] == 2


def test_ai4j_precision_divides_by_the_depth_trec_by_k():
    run, annotations = {"q": ["a", "b"]}, {"q": ["a"]}
    assert evaluate_run(run, annotations, k=10).loc["q", "precision@10"] == 0.5
    assert evaluate_run(run, annotations, k=10, convention="trec").loc["q", "precision@10"] == 0.1


def test_blank_relevant_ids_are_dropped_and_ids_stripped():
    frame = evaluate_run({"q": ["a"]}, {"q": [" a ", "", None, "  "]}, k=1)
    assert frame.loc["q", "relevant_count"] == 1
    assert frame.loc["q", "precision@1"] == 1.0


def test_empty_annotations_give_an_empty_table_with_the_columns():
    frame = evaluate_run({"q": ["a"]}, {}, k=5)
    assert len(frame) == 0
    assert "ndcg@5" in frame.columns


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [({"convention": "TREC-ish"}, "convention"), ({"k": 0}, "k"), ({"k": (5, -1)}, "k")],
)
def test_bad_settings_raise_config_errors(kwargs, field):
    with pytest.raises(ConfigError) as err:
        evaluate_run({"q": ["a"]}, {"q": ["a"]}, **kwargs)
    assert err.value.field == field


def test_bad_data_raises_data_errors():
    cases = [
        (pd.DataFrame({"query_id": ["q"], "rank": [1]}), {"q": ["a"]}, "key"),
        (run_frame([("q", 1, "a", "high")]), {"q": ["a"]}, "score"),
        (run_frame([("q", 1, "  ", 1.0)]), {"q": ["a"]}, "key"),
        ({"q": ["a"]}, pd.DataFrame({"query_id": ["q"], "key": ["a"], "grade": ["x"]}), "grade"),
        ({"q": {"a": "x"}}, {"q": ["a"]}, "score"),
        ({"q": "abc"}, {"q": ["a"]}, "run"),
        (["a"], {"q": ["a"]}, "run"),
    ]
    for run, judged, field in cases:
        with pytest.raises(DataError) as err:
            evaluate_run(run, judged, convention="trec")
        assert err.value.field == field, (run, judged)


def test_categorical_and_integer_id_columns_are_read_as_their_strings():
    run = pd.DataFrame(
        {
            "query_id": pd.Categorical(["1", "1", "2"]),
            "rank": [1, 2, 1],
            "key": pd.Categorical(["a", "b", "c"]),
            "score": [1.0, 2.0, 3.0],
        }
    )
    annotations = pd.DataFrame({"query_id": [1, 2], "key": ["b", "c"], "grade": [1, 1]})
    trec = evaluate_run(run, annotations, k=1, convention="trec")
    assert trec["precision@1"].to_dict() == {"1": 1.0, "2": 1.0}  # b outscores a
    ai4j = evaluate_run(run, annotations, k=1, convention="ai4j")
    assert ai4j["precision@1"].to_dict() == {"1": 0.0, "2": 1.0}  # rank order: a first
