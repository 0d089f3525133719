"""The judge's stage of ``abcompare run`` on a small hand-made comparison, with a Python judge that grades by
the hit's text: the pool asked decisive-first within ``max_pairs``, the agreement sample of whole queries,
kappa from the grades it gave (by hand), and the corrected delta against a hand computation of PPI from
precision@2 counted by hand."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats as scipy_stats

from abcompare.config.judge import JudgeSettings
from abcompare.config.models import EvaluationSettings
from abcompare.evaluation.per_query import per_query_metrics
from abcompare.judging.stage import LABELS_TABLE, judge_comparison

QUERIES = [f"q{i}" for i in range(1, 9)]
#: What the judge reads in a hit's text, and the grade it gives for it.
SAYS = {"on topic": 3, "off topic": 0, "tangent": 1}
#: People's grades: the control's first hit is relevant (2) and its second not (0); the treatment's second
#: hit (c) nobody judged: the holes.
PEOPLE = {(q, k): g for q in QUERIES for k, g in ((f"{q}-a", 2), (f"{q}-b", 0))}


def text(query: str, key: str) -> str:
    """a: on topic; b: off topic, except on q1-q3 where the judge takes it as on topic (a disagreement);
    c: on topic on q1-q5 (a hole the judge fills as relevant), a tangent elsewhere."""
    n, kind = int(query[1:]), key[-1]
    if kind == "a" or (kind == "b" and n <= 3) or (kind == "c" and n <= 5):
        return f"{key}: on topic"
    return f"{key}: tangent" if kind == "c" else f"{key}: off topic"


def grade_by_text(query_text: str, hit_text: str) -> int:
    return next(grade for said, grade in SAYS.items() if hit_text.endswith(said))


def run(keys: str) -> pd.DataFrame:
    rows = [
        {"query_id": q, "key": f"{q}-{k}", "rank": r, "score": 1.0 / r, "content": text(q, f"{q}-{k}")}
        for q in QUERIES
        for r, k in enumerate(keys, start=1)
    ]
    return pd.DataFrame(rows)


@pytest.fixture
def setup():
    runs = {"control": run("ab"), "treatment": run("ac")}
    annotations = pd.DataFrame(
        [{"query_id": q, "key": k, "grade": g} for (q, k), g in PEOPLE.items()]
    )  # fmt: skip
    queries = pd.DataFrame({"query_id": QUERIES, "text": [f"question {q}" for q in QUERIES]})
    evaluation = EvaluationSettings(cutoffs=[2], metrics=["precision"], primary_metric="precision@2")
    per_query = {
        n: per_query_metrics(r, annotations, QUERIES, **evaluation.scoring_options()) for n, r in runs.items()
    }
    return runs, annotations, queries, evaluation, per_query


def stage(setup, **settings):
    runs, annotations, queries, evaluation, per_query = setup
    judge = JudgeSettings(provider="python", name="by_text", **settings)
    return judge_comparison(
        judge, runs=runs, annotations=annotations, queries=queries, query_ids=QUERIES, per_query=per_query,
        evaluation=evaluation, judges={"by_text": grade_by_text}, n_resamples=200,
    )  # fmt: skip


def precision_at_2(keys: list[str], relevant: set[str]) -> float:
    return sum(k in relevant for k in keys[:2]) / 2


def test_the_pool_is_asked_within_max_pairs_and_the_sample_is_whole_queries(setup) -> None:
    outcome = stage(setup, max_pairs=3, agreement_pairs=5, min_agreement=None)
    pool = outcome.labels[outcome.labels["purpose"] == "pool"]
    assert len(pool) == 3 and set(pool["key"].str[-1]) == {"c"}  # only holes, three of the eight
    assert "judged 3 of 8 pairs" in outcome.summary and "5 not asked (judge.max_pairs = 3)" in outcome.summary
    sample = outcome.labels[outcome.labels["purpose"] == "agreement"]
    assert len(sample) == 4 and sample.groupby("query_id").size().eq(2).all()  # two whole queries fit in 5
    pairs = list(zip(sample["query_id"], sample["key"], strict=True))
    assert sample["human_grade"].tolist() == [PEOPLE[pair] for pair in pairs]
    assert (outcome.labels["source"] == "judge").all() and (outcome.labels["judge"] == "python:by_text").all()
    assert LABELS_TABLE in outcome.tables()


def test_agreement_is_the_kappa_of_the_grades_it_gave_and_ppi_corrects_the_judges_view(setup) -> None:
    outcome = stage(setup, max_pairs=100, agreement_pairs=6, min_agreement=0.9)
    sample = outcome.labels[outcome.labels["purpose"] == "agreement"]
    labelled = list(dict.fromkeys(sample["query_id"]))
    assert len(labelled) == 3
    # kappa by hand, linear weights |i - j| on 0-3: people's grades against the judge's
    human, said = sample["human_grade"].to_numpy(int), sample["grade"].to_numpy(int)
    pairs = list(zip(sample["query_id"], sample["key"], strict=True))
    assert said.tolist() == [grade_by_text("", text(q, k)) for q, k in pairs]
    observed = np.mean(np.abs(human - said))
    expected = np.mean(np.abs(human[:, None] - said[None, :]))
    assert outcome.agreement.kappa.value == pytest.approx(1 - observed / expected)
    # the deltas by hand: the judge's view relevant = a (judge 3 -> 2), c where on topic, b where the judge
    # took it as on topic on a sampled query; the reference = people's own a and b, the judge's c
    relevant_judge, relevant_ref = {}, {}
    for q in QUERIES:
        on = {k for k in (f"{q}-a", f"{q}-c") if grade_by_text("", text(q, k)) >= 1}
        b = f"{q}-b"
        relevant_judge[q] = on | ({b} if q in labelled and grade_by_text("", text(q, b)) >= 1 else set())
        relevant_ref[q] = on  # people: a relevant, b not; c from the judge (a tangent is grade 1: relevant)
    delta = {
        q: precision_at_2([f"{q}-a", f"{q}-c"], rel) - precision_at_2([f"{q}-a", f"{q}-b"], rel)
        for q, rel in relevant_judge.items()
    }
    y = np.array([precision_at_2([f"{q}-a", f"{q}-c"], relevant_ref[q])
                  - precision_at_2([f"{q}-a", f"{q}-b"], relevant_ref[q]) for q in labelled])  # fmt: skip
    yhat = np.array([delta[q] for q in labelled])
    unlabelled = np.array([delta[q] for q in QUERIES if q not in labelled])
    estimate = unlabelled.mean() + (y - yhat).mean()
    se = np.sqrt(unlabelled.var() / len(unlabelled) + (y - yhat).var() / len(y))
    z = scipy_stats.norm.ppf(0.975)
    ppi = outcome.verdicts["treatment"].ppi
    assert ppi.estimate == pytest.approx(estimate)
    assert (ppi.low, ppi.high) == pytest.approx((estimate - z * se, estimate + z * se))
    assert ppi.judge_only == pytest.approx(np.mean(list(delta.values())))
    # the refusal: the floor 0.9 is above the kappa measured
    assert outcome.agreement.kappa.value < 0.9 and outcome.verdicts["treatment"].refused
    lines = "\n".join(outcome.lines())
    assert "refused: the corrected verdict for treatment does not stand" in lines
    assert f"weighted kappa {outcome.agreement.kappa.value:.2f}" in lines
    assert outcome.as_json()["verdicts"]["treatment"]["refused"] is True


def test_no_floor_lets_the_corrected_verdict_stand(setup) -> None:
    outcome = stage(setup, max_pairs=100, agreement_pairs=6, min_agreement=None)
    assert not outcome.verdicts["treatment"].refused and "refused" not in "\n".join(outcome.lines())


def test_too_few_labelled_queries_leave_no_corrected_verdict_and_say_why(setup) -> None:
    outcome = stage(setup, max_pairs=100, agreement_pairs=2, min_agreement=None)
    assert outcome.verdicts == {} and "at least two labelled" in outcome.not_computed["treatment"]
    assert any("no corrected verdict" in line for line in outcome.lines())


def test_unusable_answers_are_counted_as_not_judged(setup) -> None:
    runs, annotations, queries, evaluation, per_query = setup
    judge = JudgeSettings(provider="python", name="garbage", max_pairs=100, agreement_pairs=0)
    outcome = judge_comparison(
        judge, runs=runs, annotations=annotations, queries=queries, query_ids=QUERIES, per_query=per_query,
        evaluation=evaluation, judges={"garbage": lambda q, h: "I cannot say"}, n_resamples=50,
    )  # fmt: skip
    assert outcome.labels["grade"].isna().all() and outcome.agreement is None
    assert "8 answers unusable, counted as not judged (8 no grade in the answer)" in outcome.summary
    assert "not measured" in outcome.agreement_line()


def test_a_file_of_model_made_labels_is_read_as_the_judges_not_peoples(setup, tmp_path) -> None:
    runs, annotations, queries, evaluation, per_query = setup
    pairs = [(q, f"{q}-{k}") for q in QUERIES for k in "abc" if (q, k) != ("q8", "c")]  # q8-c unlabelled
    path = tmp_path / "llm.qrels"
    path.write_text("".join(f"{q} 0 {key} {grade_by_text('', text(q, key))}\n" for q, key in pairs))
    judge = JudgeSettings(provider="file", path=path, source="gpt-x", max_pairs=100, agreement_pairs=6)
    outcome = judge_comparison(
        judge, runs=runs, annotations=annotations, queries=queries, query_ids=QUERIES, per_query=per_query,
        evaluation=evaluation, n_resamples=50,
    )  # fmt: skip
    python = stage(setup, max_pairs=100, agreement_pairs=6, min_agreement=None)
    assert (outcome.labels["source"] == "gpt-x").all() and outcome.judge == "file:gpt-x"
    unlabelled = outcome.labels["key"] == "q8-c"
    assert outcome.labels.loc[unlabelled, "problem"].tolist() == ["no label in the file"]
    assert "1 answers unusable, counted as not judged (1 no label in the file)" in outcome.summary
    same = ~unlabelled.to_numpy()
    assert outcome.labels["grade"][same].tolist() == python.labels["grade"][same].tolist()
    assert outcome.agreement.kappa.value == pytest.approx(python.agreement.kappa.value)
    assert outcome.cost.calls == 0
