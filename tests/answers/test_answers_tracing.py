"""Each judged answer written as an MLflow trace to a real SQLite store and read back: the retrieval span
holds the hits as documents, the generation span the answer, and the judge's scores are assessments on it
(faithfulness with each statement's verdict as its rationale); a score the judge could not give is an
assessment error, never a value; the traces belong to the comparison's run. The answers stage describes
them (``answers.tracing.trace_records``, plain records); the tracking writer writes them
(``tracking.traces.write_traces``)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from abcompare.answers import Answers, Hit
from abcompare.answers.scores import score_answers
from abcompare.answers.tracing import QUERY_TAG, VARIANT_TAG, trace_records
from abcompare.judging.python_judge import PythonJudge
from abcompare.tracking.traces import write_traces

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
    records = trace_records("control", answers, QUESTIONS, scores, relevant)
    with mlflow.start_run() as run:
        ids = write_traces(mlflow.get_tracking_uri(), experiment_id, run.info.run_id, records)
    traced = dict(zip(["q1", "q2"], ids, strict=True))

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


def test_a_trace_record_is_plain_data_with_each_score_and_its_reason() -> None:
    """The record the writer gets (it may be another process): by hand, q1's answer has two statements, one
    graded 3 (supported) and one 0, so faithfulness 1/2; it cites d1 of the relevant {d1, d2}: precision
    1/1, recall 1/2; q2's answer the judge could not grade: errors, not values."""
    table = pd.DataFrame(
        {"query_id": ["q1", "q2"], "answer": ["Cats eat meat [1]. Cats fly.", "Bread is baked."],
         "cited_ids": [("d1",), ()]}
    )  # fmt: skip
    answers = Answers(table, HITS, "generator:test")
    judge = PythonJudge(lambda first, second: GRADES[first], "fixed")
    relevant = {"q1": {"d1", "d2"}, "q2": {"d3"}}
    records = trace_records(
        "t", answers, QUESTIONS, score_answers(answers, QUESTIONS, relevant, judge), relevant
    )
    first, second = records
    assert first["name"] == "answer · t" and first["tags"] == {VARIANT_TAG: "t", QUERY_TAG: "q1"}
    assert first["documents"] == [{"id": "d1", "text": "Cats eat meat.", "rank": 1},
                                  {"id": "d2", "text": "Birds fly.", "rank": 2}]  # fmt: skip
    assert first["generation"]["context"] == "[1] Cats eat meat.\n[2] Birds fly."
    said = {a["name"]: (a["value"], a["source"], a["on_generation"]) for a in first["assessments"]}
    assert said == {
        "faithfulness": (0.5, "LLM_JUDGE", True), "answer_relevance": (2.0, "LLM_JUDGE", True),
        "citation_precision": (1.0, "CODE", False), "citation_recall": (0.5, "CODE", False),
    }  # fmt: skip
    errors = {a["name"]: a["error_code"] for a in second["assessments"] if a["value"] is None}
    assert errors == {"faithfulness": "NOT_JUDGED", "answer_relevance": "NOT_JUDGED"}
