"""Traces of a comparison's run, from plain records (a stage describes them; this module writes them): each
record is one MLflow trace of a root span with a retrieval span (its documents) and a generation span, and
its assessments logged with MLflow 3's feedback API, so the run's Traces tab shows per query the answer,
its context and why each score was given. The record's shape is :func:`abcompare.answers.tracing
.trace_records`'; the writer calls :func:`write_traces` with the run it belongs to."""

from __future__ import annotations

from collections.abc import Mapping, Sequence


def _span(record: Mapping, run_id: str, experiment_id: str) -> tuple[str, str]:
    """Write one record's spans; returns its trace id and its generation span's id."""
    import mlflow  # MLflow loads in the writer only (about 1.2 s of CPU: see tracking.writer)
    from mlflow.entities import Document, SpanType
    from mlflow.entities.trace_location import MlflowExperimentLocation

    where = MlflowExperimentLocation(experiment_id)
    with mlflow.start_span(
        record["name"], span_type=SpanType.CHAIN, run_id=run_id, trace_destination=where
    ) as root:
        root.set_inputs(record["inputs"])
        mlflow.update_current_trace(
            tags=dict(record["tags"]),
            request_preview=str(record["inputs"].get("question", "")),
            response_preview=str(record["outputs"].get("answer", "")),
        )
        with mlflow.start_span("retrieval", span_type=SpanType.RETRIEVER) as retrieval:
            retrieval.set_inputs({"query": record["inputs"].get("question", "")})
            retrieval.set_outputs(
                [
                    Document(
                        page_content=d["text"], metadata={"doc_uri": d["id"], "rank": d["rank"]}, id=d["id"]
                    )
                    for d in record["documents"]
                ]
            )
        with mlflow.start_span("generation", span_type=SpanType.LLM) as generation:
            generation.set_inputs(record["generation"])
            generation.set_attributes(record["attributes"])
            generation.set_outputs(record["outputs"])
        root.set_outputs(record["outputs"])
        return root.trace_id, generation.span_id


def _assess(trace_id: str, span_id: str, assessment: Mapping) -> None:
    """One assessment: a value with its rationale, or an error (a score that could not be given)."""
    import mlflow
    from mlflow.entities import AssessmentError, AssessmentSource

    source = AssessmentSource(source_type=assessment["source"], source_id=assessment["source_id"])
    on = {"span_id": span_id} if assessment.get("on_generation") else {}
    if assessment["value"] is None:
        error = AssessmentError(error_code=assessment["error_code"], error_message=assessment["rationale"])
        mlflow.log_feedback(trace_id=trace_id, name=assessment["name"], error=error, source=source, **on)
    else:
        mlflow.log_feedback(
            trace_id=trace_id, name=assessment["name"], value=assessment["value"], source=source,
            rationale=assessment["rationale"], **on,
        )  # fmt: skip


def write_traces(uri: str, experiment_id: str, run_id: str, records: Sequence[Mapping]) -> list[str]:
    """Write ``records`` as traces of ``run_id`` in the store at ``uri``; returns their trace ids. The
    assessments are attached once every trace is stored (MLflow logs spans asynchronously)."""
    import mlflow

    previous = mlflow.get_tracking_uri()
    mlflow.set_tracking_uri(uri)
    try:
        written = [_span(record, run_id, experiment_id) for record in records]
        mlflow.flush_trace_async_logging()
        for (trace_id, span_id), record in zip(written, records, strict=True):
            for assessment in record["assessments"]:
                _assess(trace_id, span_id, assessment)
        return [trace_id for trace_id, _ in written]
    finally:
        mlflow.set_tracking_uri(previous)
