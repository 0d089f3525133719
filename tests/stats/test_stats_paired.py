"""Pairing control and treatment by query_id, and refusing inputs a paired test cannot use."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from abcompare.core.errors import StatisticsError
from abcompare.stats.paired import compared_columns, paired_differences


def frame(scores: dict[str, list[float]], ids: list[str]) -> pd.DataFrame:
    return pd.DataFrame(scores, index=pd.Index(ids, name="query_id"))


def test_default_metric_columns_are_measure_at_k_and_skip_counts():
    f = frame(
        {
            "ndcg@10": [0.1, 0.2],
            "retrieved_count": [10, 10],
            "precision@5": [0.2, 0.4],
            "true_positive_count@10": [1, 2],
            "relevant_count": [3, 3],
            "mrr@10": [1.0, 0.5],
            "recall@100": [0.5, 0.5],
            "f1@3": [0.1, 0.1],
        },
        ["a", "b"],
    )
    assert compared_columns(f) == ["ndcg@10", "precision@5", "mrr@10", "recall@100", "f1@3"]


def test_rows_are_paired_by_query_id_not_by_position():
    control = frame({"ndcg@10": [0.1, 0.5, 0.9]}, ["a", "b", "c"])
    treatment = frame({"ndcg@10": [1.0, 0.2, 0.6]}, ["c", "a", "b"])
    pairs = paired_differences(control, treatment)
    assert list(pairs.query_ids) == ["a", "b", "c"]
    np.testing.assert_allclose(pairs.d[:, 0], [0.1, 0.1, 0.1])


def test_query_id_column_is_accepted_as_the_key():
    control = pd.DataFrame({"query_id": ["a", "b"], "ndcg@10": [0.1, 0.5]})
    treatment = pd.DataFrame({"query_id": ["b", "a"], "ndcg@10": [0.7, 0.4]})
    np.testing.assert_allclose(paired_differences(control, treatment).d[:, 0], [0.3, 0.2])


def test_query_missing_from_treatment_is_an_error_naming_it():
    control = frame({"ndcg@10": [0.1, 0.5, 0.9]}, ["a", "b", "q-lost"])
    treatment = frame({"ndcg@10": [0.1, 0.5, 0.2]}, ["a", "b", "q-new"])
    with pytest.raises(StatisticsError, match="q-lost") as info:
        paired_differences(control, treatment, treatment_name="rerank")
    assert "q-new" in str(info.value) and "rerank" in str(info.value)


def test_many_unpaired_queries_are_summarised_not_all_listed():
    control = frame({"ndcg@10": np.zeros(50)}, [f"q{i}" for i in range(50)])
    treatment = frame({"ndcg@10": np.zeros(50)}, [f"x{i}" for i in range(50)])
    with pytest.raises(StatisticsError, match="and 45 more"):
        paired_differences(control, treatment)


def test_nan_score_is_an_error_naming_query_and_metric():
    control = frame({"ndcg@10": [0.1, 0.5, 0.9], "recall@10": [0.1, np.nan, 0.2]}, ["a", "b", "c"])
    treatment = frame({"ndcg@10": [0.1, 0.5, 0.9], "recall@10": [0.1, 0.2, 0.2]}, ["a", "b", "c"])
    with pytest.raises(StatisticsError, match=r"'b'.*'recall@10'") as info:
        paired_differences(control, treatment)
    assert info.value.field == "control.recall@10"


def test_nan_in_treatment_names_the_treatment():
    control = frame({"ndcg@10": [0.1, 0.5]}, ["a", "b"])
    treatment = frame({"ndcg@10": [np.nan, 0.5]}, ["a", "b"])
    with pytest.raises(StatisticsError, match=r"hybrid.*'a'"):
        paired_differences(control, treatment, treatment_name="hybrid")


@pytest.mark.parametrize("n", [0, 1])
def test_fewer_than_two_queries_is_a_clear_error(n):
    ids = [f"q{i}" for i in range(n)]
    control = frame({"ndcg@10": [0.5] * n}, ids)
    with pytest.raises(StatisticsError, match="at least 2 queries"):
        paired_differences(control, control.copy())


def test_duplicated_query_id_is_an_error():
    control = frame({"ndcg@10": [0.1, 0.5, 0.9]}, ["a", "a", "c"])
    with pytest.raises(StatisticsError, match="more than one row"):
        paired_differences(control, control.copy())


def test_missing_metric_column_in_treatment_is_an_error():
    control = frame({"ndcg@10": [0.1, 0.5], "mrr@10": [1.0, 0.5]}, ["a", "b"])
    treatment = frame({"ndcg@10": [0.1, 0.5]}, ["a", "b"])
    with pytest.raises(StatisticsError, match="mrr@10"):
        paired_differences(control, treatment)


def test_explicit_metrics_select_any_numeric_column():
    control = frame({"ndcg@10": [0.1, 0.5], "map": [0.2, 0.3]}, ["a", "b"])
    pairs = paired_differences(control, control + 0.25, metrics=["map"])
    assert pairs.metrics == ("map",)
    np.testing.assert_allclose(pairs.d[:, 0], [0.25, 0.25])


def test_frame_without_metric_columns_is_an_error():
    control = frame({"retrieved_count": [1, 2]}, ["a", "b"])
    with pytest.raises(StatisticsError, match="no metric columns"):
        paired_differences(control, control.copy())
