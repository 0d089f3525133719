"""Each judged answer written as an MLflow trace to a real SQLite store and read back: the retrieval span
holds the hits as documents, the generation span the answer, and the judge's scores are assessments on it
(faithfulness with each statement's verdict as its rationale); a score the judge could not give is an
assessment error, never a value; the traces belong to the comparison's run."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from abcompare.answers import Answers, Hit
from abcompare.answers.scores import score_answers
from abcompare.answers.tracing import QUERY_TAG, VARIANT_TAG, trace_answers
from abcompare.judging.python_judge import PythonJudge

HITS = {"q1": [Hit("d1", "Cats eat meat.", 1), Hit("d2", "Birds fly.", 2)], "q2": [Hit("d3", "Bread.", 1)]}
QUESTIONS = {"q1": "What do cats eat?", "q2": "How is bread baked?"}
GRADES = {
    "Cats eat meat.": 3,
    "Cats fly.": 0,
    "Bread is baked.": "no idea",
    QUESTIONS["q1"]: 2,
    QUESTIONS["q2"]: "?",
}


@pytest.fixture
def store(tmp_path: Path):
    import mlflow

    previous = mlflow.get_tracking_uri()
    mlflow.set_tracking_uri(f"sqlite:///{tmp_path / 'mlflow.db'}")
    experiment = mlflow.set_experiment("answers")
    yield mlflow, experiment.experiment_id
    mlflow.set_tracking_uri(previous)


def test_answers_are_traced_with_the_judges_assessments_and_read_back(store) -> None:
    mlflow, experiment_id = store
    table = pd.DataFrame(
        {"query_id": ["q1", "q2"], "answer": ["Cats eat meat [1]. Cats fly.", "Bread is baked."],
         "cited_ids": [("d1",), ()]}
    )  # fmt: skip
    answers = Answers(table, HITS, "generator:test")
    judge = PythonJudge(lambda first, second: GRADES[first], "fixed")
    relevant = {"q1": {"d1", "d2"}, "q2": {"d3"}}
    scores = score_answers(answers, QUESTIONS, relevant, judge)
    with mlflow.start_run() as run:
        traced = trace_answers("control", answers, QUESTIONS, scores, relevant, run_id=run.info.run_id)
    assert set(traced) == {"q1", "q2"}

    found = mlflow.search_traces(locations=[experiment_id], run_id=run.info.run_id, return_type="list")
    assert {t.info.trace_id for t in found} == set(traced.values())
    trace = mlflow.get_trace(traced["q1"])
    assert trace.info.tags[VARIANT_TAG] == "control" and trace.info.tags[QUERY_TAG] == "q1"
    spans = {s.name: s for s in trace.data.spans}
    assert set(spans) == {"answer · control", "retrieval", "generation"}
    assert [d["id"] for d in spans["retrieval"].outputs] == ["d1", "d2"]
    assert spans["generation"].outputs == {"answer": "Cats eat meat [1]. Cats fly.", "cited_ids": ["d1"]}
    feedback = {a.name: a for a in trace.info.assessments}
    assert feedback["faithfulness"].value == 0.5  # "Cats eat meat." supported (3), "Cats fly." not (0)
    assert feedback["faithfulness"].span_id == spans["generation"].span_id
    assert feedback["faithfulness"].source.source_id == "python:fixed"
    assert "- supported (grade 3): Cats eat meat." in feedback["faithfulness"].rationale
    assert "- not supported (grade 0): Cats fly." in feedback["faithfulness"].rationale
    assert feedback["answer_relevance"].value == 2.0
    assert (feedback["citation_precision"].value, feedback["citation_recall"].value) == (1.0, 0.5)
    assert feedback["citation_precision"].source.source_type == "CODE"

    unjudged = {a.name: a for a in mlflow.get_trace(traced["q2"]).info.assessments}
    for name in ("faithfulness", "answer_relevance"):  # the judge gave no usable grade: an error, no value
        assert unjudged[name].value is None and unjudged[name].feedback.error.error_code == "NOT_JUDGED"
    assert unjudged["citation_precision"].value == 0.0  # nothing cited
