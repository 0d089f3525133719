"""Per-query answer scores (definitions in docs/answers.md): faithfulness (the share of the answer's
statements the judge finds supported by the context it was given), answer relevance (the judge's 0-3 grade
of the answer for the question), citation precision and recall (cited ids against the annotated relevant
ids: exact, no model). A score the judge could not give is NaN and counted, never a silent 0."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import pandas as pd

from abcompare.answers.generation import Answers
from abcompare.answers.support import SUPPORTED_FROM, context_text, support_judge
from abcompare.answers.text import sentences, terms, without_citations
from abcompare.core.vocabulary import ANSWER_METRICS
from abcompare.judging.base import Judge
from abcompare.judging.grades import Grade

FAITHFULNESS, ANSWER_RELEVANCE, CITATION_PRECISION, CITATION_RECALL = ANSWER_METRICS
JUDGED_METRICS: tuple[str, ...] = (FAITHFULNESS, ANSWER_RELEVANCE)


def statements(answer: str) -> list[str]:
    """The answer's statements: its sentences, citation markers taken out, keeping those with at least one
    term (a sentence of stopwords and punctuation states nothing)."""
    return [s for s in sentences(without_citations(answer)) if terms(s)]


def citation_scores(cited: Iterable[str], relevant: Iterable[str]) -> tuple[float, float]:
    """``(precision, recall)`` of the cited ids against the relevant ids: precision is the share of cited
    ids that are relevant (0 when nothing is cited: no citation earns nothing, as trec_eval's precision of
    an empty list), recall the share of relevant ids cited (NaN when the query has no relevant id)."""
    cited, relevant = set(cited), set(relevant)
    hits = len(cited & relevant)
    precision = hits / len(cited) if cited else 0.0
    recall = hits / len(relevant) if relevant else math.nan
    return precision, recall


def relevant_ids(annotations: pd.DataFrame, threshold: int = 1) -> dict[str, set[str]]:
    """Each query's annotated relevant keys (``grade >= threshold``) from an annotations table."""
    relevant = annotations[annotations["grade"] >= threshold]
    return {str(q): set(map(str, keys)) for q, keys in relevant.groupby("query_id")["key"]}


@dataclass(frozen=True)
class StatementJudgment:
    """One statement, the judge's support grade for it (None: unusable) and whether that means supported."""

    statement: str
    grade: Grade

    @property
    def supported(self) -> bool | None:
        return None if self.grade.value is None else self.grade.value >= SUPPORTED_FROM


@dataclass(frozen=True)
class QueryJudgment:
    """What the judge said of one answer: each statement's support, and the answer's relevance grade."""

    statements: tuple[StatementJudgment, ...]
    relevance: Grade | None


@dataclass
class AnswerScores:
    """One variant's scores: ``table`` indexed by ``query_id`` with :data:`ANSWER_METRICS` (the judged ones
    only when a judge scored them) and the counts ``statements``, ``statements_supported``,
    ``statements_unjudged``; ``judgments`` per query for the traces."""

    table: pd.DataFrame
    judgments: dict[str, QueryJudgment] = field(default_factory=dict)

    def unscored(self) -> dict[str, int]:
        """Per metric, the queries with no score (NaN): counted and said, never scored 0."""
        return {m: int(self.table[m].isna().sum()) for m in ANSWER_METRICS if m in self.table}


def faithfulness(judged: Iterable[StatementJudgment]) -> float:
    """The share of the judged statements found supported (NaN when none could be judged)."""
    verdicts = [j.supported for j in judged if j.supported is not None]
    return sum(verdicts) / len(verdicts) if verdicts else math.nan


def score_answers(
    answers: Answers,
    question: Mapping[str, str],
    relevant: Mapping[str, set[str]],
    judge: Judge | None = None,
) -> AnswerScores:
    """Score every answer of ``answers``: citations against ``relevant`` (query id -> relevant ids), and,
    with a ``judge``, faithfulness to the hits each answer was given and relevance to ``question`` (query
    id -> text). The judge sees the texts only."""
    support = support_judge(judge) if judge is not None else None
    rows, judgments = [], {}
    for query_id, answer, cited in answers.table[["query_id", "answer", "cited_ids"]].itertuples(index=False):
        precision, recall = citation_scores(cited, relevant.get(query_id, ()))
        row = {"query_id": query_id, CITATION_PRECISION: precision, CITATION_RECALL: recall}
        said = statements(answer)
        row["statements"] = len(said)
        if judge is not None and support is not None:
            context = context_text(answers.hits.get(query_id, ()))
            judged = tuple(StatementJudgment(s, support.grade(s, context)) for s in said)
            relevance = judge.grade(question[query_id], answer)
            judgments[query_id] = QueryJudgment(judged, relevance)
            row[FAITHFULNESS] = faithfulness(judged)
            row[ANSWER_RELEVANCE] = math.nan if relevance.value is None else float(relevance.value)
            row["statements_supported"] = sum(bool(j.supported) for j in judged)
            row["statements_unjudged"] = sum(j.supported is None for j in judged)
        rows.append(row)
    table = pd.DataFrame(rows).set_index("query_id")
    ordered = [m for m in ANSWER_METRICS if m in table.columns]
    table = table[ordered + [c for c in table.columns if c not in ordered]]
    return AnswerScores(table, judgments)
