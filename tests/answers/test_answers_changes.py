"""Which queries' answers got better or worse, and how much of the answer change comes with a retrieval
change: the largest wins and losses on the primary answer metric (both answers side by side), the
attribution line, the records the view carries to ``result.json`` and ``report.html``. Four queries built
by hand, deltas and sums by hand."""

from __future__ import annotations

import json

import pandas as pd

from abcompare.answers import Answers, Hit
from abcompare.answers.changes import attribution_lines, attribution_records, largest_answer_changes
from abcompare.answers.compare import answer_attribution, compare_answers
from abcompare.answers.scores import AnswerScores
from abcompare.outcome.html import page
from abcompare.outcome.view import ComparisonView, ExperimentView
from abcompare.stats.comparison import paired_test

IDS = ["q1", "q2", "q3", "q4"]
QUESTIONS = {"q1": "Who?", "q2": "What?", "q3": "Where?", "q4": "When?"}
#: control: q1 [a, b], q2 [c], q3 [d], q4 [e]; treatment reorders q1 (no change), keeps q3, changes q2, q4
CONTROL_HITS = {"q1": [Hit("a", "A.", 1), Hit("b", "B.", 2)], "q2": [Hit("c", "C.", 1)],
                "q3": [Hit("d", "D.", 1)], "q4": [Hit("e", "E.", 1)]}  # fmt: skip
TREATMENT_HITS = {"q1": [Hit("b", "B.", 1), Hit("a", "A.", 2)], "q2": [Hit("x", "X.", 1)],
                  "q3": [Hit("d", "D.", 1)], "q4": [Hit("y", "Y.", 1)]}  # fmt: skip
#: faithfulness deltas: q1 0, q2 +0.5, q3 -0.25, q4 +0.25
CONTROL_FAITH = [0.5, 0.0, 0.75, 0.5]
TREATMENT_FAITH = [0.5, 0.5, 0.5, 0.75]


def _answers(prefix: str, hits: dict[str, list[Hit]]) -> Answers:
    table = pd.DataFrame(
        {"query_id": IDS, "answer": [f"{prefix} answer to {q}." for q in IDS],
         "cited_ids": [(hits[q][0].id,) for q in IDS]}
    )  # fmt: skip
    return Answers(table, hits, f"generator:{prefix}")


def _scores(faith: list[float]) -> AnswerScores:
    return AnswerScores(pd.DataFrame({"faithfulness": faith}, index=pd.Index(IDS, name="query_id")))


def _compared():
    answers = {"control": _answers("old", CONTROL_HITS), "new": _answers("new", TREATMENT_HITS)}
    scores = {"control": _scores(CONTROL_FAITH), "new": _scores(TREATMENT_FAITH)}
    comparison = compare_answers(scores, n_resamples=99, seed=0)
    hits = {n: a.hits for n, a in answers.items()}
    attribution = answer_attribution(comparison.tables, hits, ["faithfulness"])
    return answers, comparison, attribution


def test_the_largest_wins_and_losses_hold_both_answers_and_whether_the_hits_changed() -> None:
    answers, comparison, _ = _compared()
    records = largest_answer_changes(comparison, answers, QUESTIONS, n=5)
    # wins largest first (q2 +0.5, q4 +0.25), then the loss (q3 -0.25); q1 did not change
    assert [(r["change"], r["query_id"], r["delta"]) for r in records] == [
        ("win", "q2", 0.5), ("win", "q4", 0.25), ("loss", "q3", -0.25)
    ]  # fmt: skip
    first = records[0]
    assert first["treatment"] == "new" and first["metric"] == "faithfulness" and first["question"] == "What?"
    assert (first["control_score"], first["treatment_score"]) == (0.0, 0.5)
    assert first["control_answer"] == "old answer to q2." and first["control_cited_ids"] == ["c"]
    assert first["treatment_answer"] == "new answer to q2." and first["treatment_cited_ids"] == ["x"]
    assert [r["top_k_changed"] for r in records] == [True, True, False]  # q3 kept its hit
    assert json.loads(json.dumps(records)) == records  # plain data: result.json stores it as is
    one_each = largest_answer_changes(comparison, answers, QUESTIONS, n=1)
    assert [r["query_id"] for r in one_each] == ["q2", "q3"]


def test_the_attribution_line_splits_the_summed_delta_by_a_retrieval_change() -> None:
    _, comparison, attribution = _compared()
    # changed q2 + q4 = +0.75, same q1 + q3 = -0.25, total +0.5: 150% comes with a retrieval change
    assert attribution_lines(attribution, {"new": "faithfulness"}) == [
        "answers new vs control, faithfulness by retrieval: summed delta +0.500, +0.750 on the 2 queries "
        "whose top-k hits changed, -0.250 on the 2 queries with the same hits (150% of it with a retrieval "
        "change)"
    ]
    assert attribution_lines(attribution, {"new": "answer_relevance"}) == []  # the primary metric's only
    (record,) = attribution_records(attribution)
    assert record["queries_top_k_changed"] == 2 and record["share_with_retrieval_change"] == 1.5
    flat = attribution.assign(delta_sum_top_k_changed=0.0, delta_sum_top_k_same=0.0)
    flat["share_with_retrieval_change"] = float("nan")
    assert attribution_records(flat)[0]["share_with_retrieval_change"] is None  # JSON null, not NaN
    assert attribution_lines(flat, {"new": "faithfulness"})[0].endswith("(no change to attribute)")
    # no query's hits changed (the same retrieval, another generator): the whole delta is on the same hits
    same = attribution.assign(queries_top_k_changed=0, queries_top_k_same=4, delta_sum_top_k_changed=0.0,
                              delta_sum_top_k_same=0.5, share_with_retrieval_change=0.0)  # fmt: skip
    assert attribution_lines(same, {"new": "faithfulness"}) == [
        "answers new vs control, faithfulness by retrieval: summed delta +0.500, all on the 4 queries with "
        "the same top-k hits (no query's hits changed)"
    ]


def test_the_view_carries_the_changes_to_result_json_and_the_page() -> None:
    answers, compared, _ = _compared()
    records = largest_answer_changes(compared, answers, QUESTIONS)
    index = pd.Index(IDS, name="query_id")  # the retrieval comparison the page is about
    per_query = {"control": pd.DataFrame({"ndcg@10": [0.5, 0.2, 0.4, 0.3]}, index=index),
                 "new": pd.DataFrame({"ndcg@10": [0.5, 0.6, 0.4, 0.3]}, index=index)}  # fmt: skip
    tested = paired_test(per_query["control"], {"new": per_query["new"]}, metrics=["ndcg@10"],
                         primary_metric="ndcg@10", n_resamples=99)  # fmt: skip
    comparison = tested.table
    view = ComparisonView(
        name="n", description="", dataset="d", n_queries=4, level="document", convention="trec",
        comparison=comparison, settings=tested.settings, per_query=per_query, queries=pd.DataFrame(),
        answer_changes=records,
    )  # fmt: skip
    data = json.loads(json.dumps(view.to_json()))
    back = ComparisonView.from_json(
        data,
        comparison=comparison,
        settings=tested.settings,
        per_query=per_query,
        queries=pd.DataFrame(),
        hits={},
    )
    assert list(back.answer_changes) == records
    html = page(ExperimentView.shown(back))
    section = html.split("<h2>Answers: the largest wins and losses</h2>", 1)[1].split("</section>", 1)[0]
    assert "new vs control: the largest answer changes on faithfulness" in section
    wins, losses = section.split("<h4>Largest losses</h4>")
    assert wins.index("<b>q2</b>") < wins.index("<b>q4</b>") and "<b>q3</b>" in losses
    assert "old answer to q2." in wins and "new answer to q2." in wins and "cites x" in wins
    assert "+0.500" in wins and "top-k hits changed" in wins and "same top-k hits" in losses
