"""Metric names: canonical ``measure@k``, parsing, the MLflow form, cutoffs and column order."""

from __future__ import annotations

import pytest

from abcompare.core.errors import ConfigError
from abcompare.evaluation.measures import (
    MEASURES,
    metric_name,
    mlflow_key,
    normalise_cutoffs,
    parse_metric,
    per_query_columns,
)


def test_measures_tuple():
    assert MEASURES == ("precision", "recall", "f1", "mrr", "ndcg")


def test_metric_name_and_parse_round_trip():
    assert metric_name("ndcg", 10) == "ndcg@10"
    assert parse_metric("ndcg@10") == ("ndcg", 10)
    for measure in MEASURES:
        assert parse_metric(metric_name(measure, 3)) == (measure, 3)


def test_parse_accepts_case_and_the_mlflow_form():
    assert parse_metric("nDCG@5") == ("ndcg", 5)
    assert parse_metric("recall_at_100") == ("recall", 100)


@pytest.mark.parametrize("bad", ["ndcg", "ndcg@", "ndcg@0", "map@10", "@10", "ndcg@-1", "ndcg@1.5", 3])
def test_bad_names_raise_a_config_error(bad):
    with pytest.raises(ConfigError):
        parse_metric(bad)


def test_mlflow_key_replaces_the_at_sign():
    assert mlflow_key("ndcg@10") == "ndcg_at_10"
    assert mlflow_key("true_positive_count@5") == "true_positive_count_at_5"
    assert mlflow_key("retrieved_count") == "retrieved_count"


def test_cutoffs_are_sorted_distinct_positive_ints():
    assert normalise_cutoffs((10, 1, 5, 5)) == (1, 5, 10)
    assert normalise_cutoffs(3) == (3,)
    for bad in ((0,), (-1,), (True,), (2.5,), ()):
        with pytest.raises(ConfigError):
            normalise_cutoffs(bad)


def test_per_query_columns_order():
    assert per_query_columns((5, 1)) == [
        "precision@1", "precision@5", "recall@1", "recall@5", "f1@1", "f1@5", "mrr@1", "mrr@5",
        "ndcg@1", "ndcg@5", "judged@1", "judged@5", "retrieved_count", "relevant_count", "judged_count",
        "true_positive_count@1", "true_positive_count@5",
    ]  # fmt: skip
