"""Each judged answer as an MLflow trace, as the reference library's online evaluator writes its judgment
into the request's trace: a root span per (variant, query) with a retrieval span (the hits, as documents)
and a generation span (the answer and the ids it cites), and the scores attached as assessments (MLflow 3's
feedback API): the judge's faithfulness (with each statement's support grade as the rationale) and answer
relevance on the generation span, the exact citation scores as code feedback. A score the judge could not
give is an assessment error, not a value.

This module only describes the traces, as plain records (picklable: the tracking writer may run in another
process); :func:`abcompare.tracking.traces.write_traces` writes them under the comparison's run when
``logger.log_comparison`` sends them."""

from __future__ import annotations

import math
from collections.abc import Mapping

from abcompare.answers.generation import Answers
from abcompare.answers.hits import Hit
from abcompare.answers.scores import (
    ANSWER_RELEVANCE,
    CITATION_PRECISION,
    CITATION_RECALL,
    FAITHFULNESS,
    AnswerScores,
    QueryJudgment,
)
from abcompare.answers.support import SUPPORTED_FROM, context_text

#: Trace tags that say which variant and query a trace is.
VARIANT_TAG = "abcompare.variant"
QUERY_TAG = "abcompare.query_id"
#: Who gave the exact (code) assessments.
CODE_SOURCE = "abcompare"
#: The assessment sources, as MLflow's ``AssessmentSourceType`` names them.
LLM_JUDGE, CODE = "LLM_JUDGE", "CODE"


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


def _feedback(name: str, value: float, rationale: str, source: str, source_id: str, error: str) -> dict:
    """One assessment: its value and rationale, or (NaN) an error code with the rationale as its message."""
    if math.isnan(value):
        return {"name": name, "value": None, "error_code": error, "rationale": rationale[:1000],
                "source": source, "source_id": source_id}  # fmt: skip
    return {"name": name, "value": value, "error_code": None, "rationale": rationale,
            "source": source, "source_id": source_id}  # fmt: skip


def _assessments(
    query_id: str, cited: tuple[str, ...], scores: AnswerScores, relevant: Mapping[str, set[str]]
) -> list[dict]:
    """The judge's two scores (on the generation span) and the two exact citation scores of one answer."""
    row, judgment = scores.table.loc[query_id], scores.judgments.get(query_id)
    out = []
    if judgment is not None:
        judge = judgment.relevance.judge if judgment.relevance is not None else "judge"
        for name, rationale in (
            (FAITHFULNESS, _faithfulness_rationale(judgment)),
            (ANSWER_RELEVANCE, _relevance_rationale(judgment)),
        ):
            said = _feedback(name, float(row[name]), rationale, LLM_JUDGE, judge, "NOT_JUDGED")
            out.append({**said, "on_generation": True})
    wanted = sorted(relevant.get(query_id, set()))
    why = f"cited: {', '.join(cited) or 'none'}; annotated relevant: {', '.join(wanted) or 'none'}"
    for name in (CITATION_PRECISION, CITATION_RECALL):
        value = float(row[name])
        rationale = f"{name} is undefined: {why}" if math.isnan(value) else why
        out.append(
            {**_feedback(name, value, rationale, CODE, CODE_SOURCE, "UNDEFINED"), "on_generation": False}
        )
    return out


def _documents(hits: list[Hit]) -> list[dict]:
    return [{"id": h.id, "text": h.text, "rank": h.rank} for h in hits]


def trace_records(
    variant: str,
    answers: Answers,
    question: Mapping[str, str],
    scores: AnswerScores,
    relevant: Mapping[str, set[str]],
) -> list[dict]:
    """One plain record per answer of ``variant``: the root span's name, tags, inputs and outputs, the
    retrieval span's documents, the generation span's inputs and outputs, and the assessments."""
    records = []
    for query_id, answer, cited in answers.table[["query_id", "answer", "cited_ids"]].itertuples(index=False):
        hits, text, said = answers.hits.get(query_id, []), question[query_id], {"answer": answer}
        said["cited_ids"] = list(cited)
        records.append(
            {
                "name": f"answer · {variant}",
                "tags": {VARIANT_TAG: variant, QUERY_TAG: query_id},
                "inputs": {"query_id": query_id, "question": text},
                "outputs": said,
                "documents": _documents(hits),
                "generation": {"question": text, "context": context_text(hits)},
                "attributes": {"generator": answers.source},
                "assessments": _assessments(query_id, tuple(cited), scores, relevant),
            }
        )
    return records
