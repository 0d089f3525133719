"""Each judged answer as an MLflow trace, as the reference library's online evaluator writes its judgment
into the request's trace: a root span per (variant, query) with a retrieval span (the hits, as documents)
and a generation span (the answer and the ids it cites), and the scores attached as assessments (MLflow 3's
feedback API): the judge's faithfulness (with each statement's support grade as the rationale) and answer
relevance on the generation span, the exact citation scores as code feedback. A score the judge could not
give is logged as an assessment error, not as a value. The traces belong to the comparison's run when one
is given, so the run's traces view lists them."""

from __future__ import annotations

import math
from collections.abc import Mapping

from abcompare.answers.generation import Answers
from abcompare.answers.scores import (
    ANSWER_RELEVANCE,
    CITATION_PRECISION,
    CITATION_RECALL,
    FAITHFULNESS,
    AnswerScores,
    QueryJudgment,
)
from abcompare.answers.support import SUPPORTED_FROM, context_text

#: Trace tags that say which comparison, variant and query a trace is.
VARIANT_TAG = "abcompare.variant"
QUERY_TAG = "abcompare.query_id"
CODE_SOURCE = "abcompare"


def _faithfulness_rationale(judgment: QueryJudgment) -> str:
    lines = []
    for s in judgment.statements:
        if s.grade.value is None:
            mark = f"not judged ({s.grade.problem})"
        else:
            mark = f"{'supported' if s.supported else 'not supported'} (grade {s.grade.value})"
        lines.append(f"- {mark}: {s.statement}")
    supported = sum(bool(s.supported) for s in judgment.statements)
    judged = sum(s.supported is not None for s in judgment.statements)
    head = f"{supported} of {judged} judged statements supported by the context (grade >= {SUPPORTED_FROM})"
    return "\n".join([head, *lines])


def trace_answers(
    variant: str,
    answers: Answers,
    question: Mapping[str, str],
    scores: AnswerScores,
    relevant: Mapping[str, set[str]] | None = None,
    *,
    run_id: str | None = None,
    experiment_id: str | None = None,
) -> dict[str, str]:
    """Write one trace per answer of ``variant`` (in ``experiment_id``, or the active experiment; belonging
    to ``run_id`` when given) with its assessments; returns ``query_id -> trace_id``."""
    import mlflow
    from mlflow.entities import AssessmentError, AssessmentSource, AssessmentSourceType, Document, SpanType

    destination = None
    if experiment_id is not None:
        from mlflow.entities.trace_location import MlflowExperimentLocation

        destination = MlflowExperimentLocation(experiment_id)
    traced: dict[str, str] = {}
    spans: dict[str, str] = {}
    for query_id, answer, cited in answers.table[["query_id", "answer", "cited_ids"]].itertuples(index=False):
        hits = answers.hits.get(query_id, [])
        text = question[query_id]
        with mlflow.start_span(
            f"answer · {variant}", span_type=SpanType.CHAIN, run_id=run_id, trace_destination=destination
        ) as root:
            root.set_inputs({"query_id": query_id, "question": text})
            mlflow.update_current_trace(
                tags={VARIANT_TAG: variant, QUERY_TAG: query_id},
                request_preview=text,
                response_preview=answer,
            )
            with mlflow.start_span("retrieval", span_type=SpanType.RETRIEVER) as retrieval:
                retrieval.set_inputs({"query": text})
                retrieval.set_outputs(
                    [
                        Document(page_content=h.text, metadata={"doc_uri": h.id, "rank": h.rank}, id=h.id)
                        for h in hits
                    ]
                )
            with mlflow.start_span("generation", span_type=SpanType.LLM) as generation:
                generation.set_inputs({"question": text, "context": context_text(hits)})
                generation.set_attributes({"generator": answers.source})
                generation.set_outputs({"answer": answer, "cited_ids": list(cited)})
            root.set_outputs({"answer": answer, "cited_ids": list(cited)})
            trace_id, span_id = root.trace_id, generation.span_id
        traced[query_id] = trace_id
        spans[query_id] = span_id
    mlflow.flush_trace_async_logging()  # the traces are stored before assessments are attached to them
    for query_id, cited in answers.table[["query_id", "cited_ids"]].itertuples(index=False):
        trace_id, span_id = traced[query_id], spans[query_id]
        row = scores.table.loc[query_id]
        judgment = scores.judgments.get(query_id)
        if judgment is not None:
            judge = judgment.relevance.judge if judgment.relevance is not None else "judge"
            source = AssessmentSource(source_type=AssessmentSourceType.LLM_JUDGE, source_id=judge)
            for name, rationale in (
                (FAITHFULNESS, _faithfulness_rationale(judgment)),
                (ANSWER_RELEVANCE, _relevance_rationale(judgment)),
            ):
                value = float(row[name])
                if math.isnan(value):
                    error = AssessmentError(error_code="NOT_JUDGED", error_message=rationale[:1000])
                    mlflow.log_feedback(
                        trace_id=trace_id, name=name, error=error, source=source, span_id=span_id
                    )
                else:
                    mlflow.log_feedback(
                        trace_id=trace_id,
                        name=name,
                        value=value,
                        source=source,
                        rationale=rationale,
                        span_id=span_id,
                    )
        code = AssessmentSource(source_type=AssessmentSourceType.CODE, source_id=CODE_SOURCE)
        wanted = sorted((relevant or {}).get(query_id, set()))
        why = f"cited: {', '.join(cited) or 'none'}; annotated relevant: {', '.join(wanted) or 'none'}"
        for name in (CITATION_PRECISION, CITATION_RECALL):
            value = float(row[name])
            if math.isnan(value):
                error = AssessmentError(error_code="UNDEFINED", error_message=f"{name} is undefined: {why}")
                mlflow.log_feedback(trace_id=trace_id, name=name, error=error, source=code)
            else:
                mlflow.log_feedback(trace_id=trace_id, name=name, value=value, source=code, rationale=why)
    return traced


def _relevance_rationale(judgment: QueryJudgment) -> str:
    grade = judgment.relevance
    if grade is None:
        return "not asked"
    if grade.value is None:
        return f"not judged: {grade.problem}; the judge said {grade.answer!r}"
    return (
        f"grade {grade.value} of 0-3 for the answer against the question (prompt {grade.prompt_version}); "
        f"the judge said {grade.answer!r}"
    )
