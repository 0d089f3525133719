"""Answer scores through the retrieval verdict's machinery: the paired tests see answer metrics as metric
columns (an answer metric may be primary), queries without a score in some variant are left out of every
variant and counted, retrieval metrics join as secondary on the same queries, and the attribution splits
each answer delta by whether the top-k hits changed. Expected values by hand (the exact permutation p of 8
all-positive deltas is 2 / 2**8)."""

from __future__ import annotations

import math

import pandas as pd

from abcompare.answers import Hit
from abcompare.answers.compare import answer_attribution, compare_answers, top_k_changed
from abcompare.answers.scores import AnswerScores

IDS = [f"q{i}" for i in range(8)]
FAITH = [0.2, 0.5, 0.1, 0.7, 0.4, 0.3, 0.6, 0.2]
RELEVANCE = [1.0, 2.0, 0.0, 3.0, 1.0, 2.0, 2.0, 1.0]


def scores(faith, relevance) -> AnswerScores:
    table = pd.DataFrame({"faithfulness": faith, "answer_relevance": relevance}, index=IDS)
    return AnswerScores(table.rename_axis("query_id"))


def test_an_answer_metric_is_the_primary_metric_of_the_same_paired_tests() -> None:
    better = [f + 0.1 for f in FAITH]
    result = compare_answers(
        {"control": scores(FAITH, RELEVANCE), "new": scores(better, RELEVANCE)}, n_resamples=999, seed=0
    )
    primary = result.comparison.set_index("metric").loc["faithfulness"]
    assert primary["role"] == "primary" and primary["n_queries"] == 8
    assert primary["p_permutation"] == 2 / 2**8 and primary["verdict"] == "better"
    assert math.isclose(primary["delta"], 0.1)
    secondary = result.comparison.set_index("metric").loc["answer_relevance"]
    assert secondary["role"] == "secondary" and secondary["delta"] == 0.0
    assert result.summary() == "answers compared on 8 queries"


def test_a_query_without_a_score_in_one_variant_is_left_out_of_all_and_said() -> None:
    relevance = RELEVANCE[:3] + [math.nan] + RELEVANCE[4:]
    result = compare_answers(
        {"control": scores(FAITH, RELEVANCE), "new": scores(FAITH, relevance)},
        primary_metric="answer_relevance",
        n_resamples=99,
    )
    assert result.queries == tuple(q for q in IDS if q != "q3")
    assert result.left_out == {"faithfulness": 0, "answer_relevance": 1}
    assert set(result.comparison["n_queries"]) == {7}
    assert result.comparison.set_index("metric").loc["answer_relevance", "role"] == "primary"
    assert result.summary() == "answers compared on 7 queries (left out: 1 without answer_relevance)"


def test_retrieval_metrics_join_as_secondary_on_the_same_queries() -> None:
    retrieval = {
        "control": pd.DataFrame({"ndcg@10": [0.5] * 8}, index=pd.Index(IDS, name="query_id")),
        "new": pd.DataFrame({"ndcg@10": [0.5] * 7 + [0.9]}, index=pd.Index(IDS, name="query_id")),
    }
    result = compare_answers(
        {"control": scores(FAITH, RELEVANCE), "new": scores(FAITH, RELEVANCE)},
        retrieval=retrieval,
        retrieval_metrics=["ndcg@10"],
        n_resamples=99,
    )
    row = result.comparison.set_index("metric").loc["ndcg@10"]
    assert row["role"] == "secondary" and math.isclose(row["delta"], 0.4 / 8)


def test_the_attribution_splits_answer_deltas_by_a_change_of_the_top_k() -> None:
    control = {"q1": [Hit("a", "", 1), Hit("b", "", 2)], "q2": [Hit("c", "", 1)], "q3": [Hit("d", "", 1)],
               "q4": [Hit("e", "", 1)]}  # fmt: skip
    treatment = {"q1": [Hit("b", "", 1), Hit("a", "", 2)], "q2": [Hit("x", "", 1)], "q3": [Hit("d", "", 1)],
                 "q4": [Hit("y", "", 1)]}  # fmt: skip
    assert top_k_changed(control, treatment).tolist() == [False, True, False, True]  # a reorder is no change
    index = pd.Index(["q1", "q2", "q3", "q4"], name="query_id")
    tables = {
        "control": pd.DataFrame({"faithfulness": [0.5, 0.0, 0.75, 0.5]}, index=index),
        "new": pd.DataFrame({"faithfulness": [0.5, 0.5, 0.5, 0.75]}, index=index),
    }
    row = answer_attribution(tables, {"control": control, "new": treatment}, ["faithfulness"]).iloc[0]
    # deltas 0, +0.5, -0.25, +0.25: changed q2 + q4 = 0.75, same q1 + q3 = -0.25, total 0.5
    assert (row["queries_top_k_changed"], row["queries_top_k_same"]) == (2, 2)
    assert (row["delta_sum_top_k_changed"], row["delta_sum_top_k_same"]) == (0.75, -0.25)
    assert row["share_with_retrieval_change"] == 1.5
