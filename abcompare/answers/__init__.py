"""Answers, judged and compared: each variant's answers to the queries (from a generator handed over from
Python, an answers file, or a generator abcompare ships: the extractive baseline or a local model), scored
per query (faithfulness, answer relevance, citation precision and recall), tested paired against the control
with the retrieval verdict's own machinery, and traced in MLflow with the judge's assessments."""

from __future__ import annotations

from abcompare.answers.answers_file import read_answers, write_answers
from abcompare.answers.errors import AnswerError
from abcompare.answers.extractive import ExtractiveGenerator
from abcompare.answers.generation import (
    ANSWER_COLUMNS,
    Answers,
    GenerationCost,
    Generator,
    answer_problem,
    generate_answers,
)
from abcompare.answers.hits import Hit, Query, hits_from_run

__all__ = [
    "ANSWER_COLUMNS",
    "AnswerError",
    "Answers",
    "ExtractiveGenerator",
    "GenerationCost",
    "Generator",
    "Hit",
    "Query",
    "answer_problem",
    "generate_answers",
    "hits_from_run",
    "read_answers",
    "write_answers",
]
