"""The judgment rules: judged@k, condensed lists, and which queries are evaluated at any threshold."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from oracle_support import bm25_run, load_qrels, random_run
from support.environment import require_module

from abcompare.evaluation.batch import evaluate_run
from abcompare.evaluation.judgments import evaluated_queries, is_relevant


def test_judged_at_k_counts_hits_with_a_judgment_of_any_grade_over_the_list_returned():
    run = {"q": ["a", "x", "b", "y", "c"], "short": ["a"], "empty": []}
    annotations = {"q": {"a": 2, "b": 0, "c": 1}, "short": {"a": 0}, "empty": {"a": 1}}
    frame = evaluate_run(run, annotations, k=(1, 2, 4, 10))
    assert frame.loc["q", ["judged@1", "judged@2", "judged@4", "judged@10"]].tolist() == [1.0, 0.5, 0.5, 0.6]
    assert frame.loc["short", "judged@10"] == 1.0  # divided by min(k, hits returned), not by k
    assert frame.loc["empty", "judged@10"] == 0.0  # no hits: 0
    assert frame["judged_count"].tolist() == [3, 1, 0]


def test_judged_at_k_counts_a_repeated_key_each_time_in_ai4j_and_once_in_trec():
    run = {"q": ["a", "a", "x"]}
    annotations = {"q": {"a": 1}}
    assert evaluate_run(run, annotations, k=3).loc["q", "judged@3"] == pytest.approx(2 / 3)
    assert evaluate_run(run, annotations, k=3, convention="trec").loc["q", "judged@3"] == 0.5


def test_condensed_lists_drop_unjudged_hits_before_ranking():
    run = {"q": ["x", "a", "y", "b", "c"]}  # a relevant, b judged non-relevant, c relevant
    annotations = {"q": {"a": 1, "b": 0, "c": 1}}
    plain = evaluate_run(run, annotations, k=2).loc["q"]
    condensed = evaluate_run(run, annotations, k=2, unjudged="condensed").loc["q"]
    assert plain[["precision@2", "mrr@2", "true_positive_count@2"]].tolist() == [0.5, 0.5, 1]
    # condensed list: a, b, c -> top 2 is a, b
    assert condensed[["precision@2", "mrr@2", "true_positive_count@2"]].tolist() == [0.5, 1.0, 1]
    assert condensed["ndcg@2"] == pytest.approx(1 / (1 + 1 / np.log2(3)))
    # the diagnostics still describe the list as returned
    assert condensed["judged@2"] == plain["judged@2"] == 0.5
    assert condensed["retrieved_count"] == 5 and condensed["judged_count"] == 3
    trec = evaluate_run(run, annotations, k=5, convention="trec", unjudged="condensed").loc["q"]
    assert trec["precision@5"] == 2 / 5  # trec divides by k, as trec_eval -J does
    assert trec["recall@5"] == 1.0


def test_an_unknown_unjudged_policy_is_a_config_error_naming_the_field():
    from abcompare.core.errors import ConfigError

    with pytest.raises(ConfigError, match="unjudged"):
        evaluate_run({"q": ["a"]}, {"q": ["a"]}, unjudged="ignore")


def test_the_rule_functions():
    assert is_relevant(np.array([0, 1, 2, 3]), 2).tolist() == [False, False, True, True]
    assert evaluated_queries(np.array([2, 0, 2]), 4).tolist() == [True, False, True, False]


@pytest.mark.slow
@pytest.mark.parametrize("name", ["scifact", "cranfield", "cisi"])
def test_judged_at_k_equals_ir_measures_judged(datasets_dir, name):
    ir_measures = require_module("ir_measures")
    folder = datasets_dir / name
    qrels = load_qrels(folder)
    cutoffs = (1, 5, 10, 20, 100)
    runs = {"seeded": random_run(folder, qrels, seed=3)}
    if name != "scifact":
        runs["bm25"] = bm25_run(folder, qrels)
    for label, run in runs.items():
        # ir_measures breaks score ties by docno ascending, trec_eval descending: make scores distinct
        run = {
            qid: {doc: score + 1e-6 * rank for rank, (doc, score) in enumerate(sorted(docs.items()))}
            for qid, docs in run.items()
        }
        frame = evaluate_run(run, qrels, k=cutoffs, convention="trec")
        measures = [ir_measures.Judged @ k for k in cutoffs]
        expected = {
            (m.query_id, str(m.measure)): m.value for m in ir_measures.iter_calc(measures, qrels, run)
        }
        compared = [qid for qid in frame.index if qid in run and run[qid]]
        assert len(compared) > 50
        for k in cutoffs:
            got = frame.loc[compared, f"judged@{k}"].to_numpy()
            want = np.array([expected[(qid, f"Judged@{k}")] for qid in compared])
            np.testing.assert_allclose(got, want, rtol=0, atol=1e-12, err_msg=f"{name} {label} k={k}")
        assert (frame.loc[[q for q in frame.index if not run.get(q)], "judged@10"] == 0).all()


@given(st.lists(st.tuples(st.integers(0, 6), st.sampled_from([0.0, 1.0, 2.0, 3.0, -1.0])), max_size=40))
def test_each_judged_pair_keeps_its_best_grade(judgments: list[tuple[int, float]]) -> None:
    from abcompare.evaluation.judgments import best_grades

    pair = np.array([p for p, _ in judgments], dtype=np.int64)
    grade = np.array([g for _, g in judgments], dtype=np.float64)
    best_pair, best_grade = best_grades(pair, grade)
    expected: dict[int, float] = {}
    for p, g in judgments:
        expected[p] = max(g, expected.get(p, g))
    assert best_pair.tolist() == sorted(expected)
    assert best_grade.tolist() == [expected[p] for p in sorted(expected)]
