"""Per-query answer scores against hand calculations: citation precision and recall (exact), faithfulness
as the share of judged statements found supported (a Python judge answering fixed grades; an unusable grade
counted, not scored), answer relevance as the judge's grade; people's answer ratings read with located
errors and the judge's agreement with them on the answers both rated."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest

from abcompare.answers import AnswerError, Answers, Hit
from abcompare.answers.ratings import answer_agreement, read_answer_ratings
from abcompare.answers.scores import (
    citation_scores,
    relevant_ids,
    score_answers,
    statements,
)
from abcompare.answers.support import SUPPORT_PROMPT_VERSION
from abcompare.judging import GradeCache
from abcompare.judging.python_judge import PythonJudge


def test_citation_precision_and_recall_by_hand() -> None:
    # cited {d1, d2, d5}, relevant {d1, d5, d7, d9}: 2 cited are relevant; 2/3 precise, 2/4 recalled
    assert citation_scores(["d1", "d2", "d5"], {"d1", "d5", "d7", "d9"}) == (2 / 3, 0.5)
    assert citation_scores([], {"d1"}) == (0.0, 0.0)  # nothing cited: no credit
    precision, recall = citation_scores(["d1"], set())
    assert precision == 0.0 and math.isnan(recall)  # no relevant id: recall undefined, not 0


def test_relevant_ids_are_the_keys_at_or_above_the_threshold() -> None:
    annotations = pd.DataFrame(
        {"query_id": ["q1", "q1", "q1", "q2"], "key": ["a", "b", "c", "d"], "grade": [0, 1, 2, 0]}
    )
    assert relevant_ids(annotations) == {"q1": {"b", "c"}}
    assert relevant_ids(annotations, 2) == {"q1": {"c"}}


def test_statements_are_the_sentences_without_citations_that_state_something() -> None:
    answer = "Cats eat meat [1]. Cats fly [1, 2]! It is. Cats purr."
    assert statements(answer) == ["Cats eat meat.", "Cats fly!", "Cats purr."]  # "It is." is all stopwords


CONTEXT_HITS = [Hit("d1", "Cats eat  meat.", 1), Hit("d2", "Birds fly.", 2)]
QUESTION = "What do cats eat?"


def fixed_judge(seen: list[tuple[str, str]], cache: GradeCache | None = None) -> PythonJudge:
    grades = {"Cats eat meat.": 3, "Cats fly!": 1, "Cats purr.": "no idea", QUESTION: "##final score: 2"}

    def judge(first: str, second: str):
        seen.append((first, second))
        return grades[first]

    return PythonJudge(judge, "fixed", cache=cache)


def test_faithfulness_and_relevance_from_the_judge_and_citations_exact() -> None:
    seen: list[tuple[str, str]] = []
    table = pd.DataFrame(
        {"query_id": ["q1"], "answer": ["Cats eat meat [1]. Cats fly [1, 2]! It is. Cats purr."],
         "cited_ids": [("d1", "d2")]}
    )  # fmt: skip
    answers = Answers(table, {"q1": CONTEXT_HITS}, "test")
    judge = fixed_judge(seen)
    scores = score_answers(answers, {"q1": QUESTION}, {"q1": {"d1", "d7"}}, judge)
    row = scores.table.loc["q1"]
    # statements: supported (3), not supported (1 < 2), unusable ("no idea"): 1 of the 2 judged
    assert row["faithfulness"] == 0.5
    assert (row["statements"], row["statements_supported"], row["statements_unjudged"]) == (3, 1, 1)
    assert row["answer_relevance"] == 2.0
    assert (row["citation_precision"], row["citation_recall"]) == (0.5, 0.5)
    context = "[1] Cats eat meat.\n[2] Birds fly."
    assert seen[:3] == [(s, context) for s in ("Cats eat meat.", "Cats fly!", "Cats purr.")]
    assert seen[3] == (QUESTION, "Cats eat meat [1]. Cats fly [1, 2]! It is. Cats purr.")
    assert judge.cost.calls == 4 and judge.cost.unusable == 1  # the support view counts on the judge
    verdicts = [s.supported for s in scores.judgments["q1"].statements]
    assert verdicts == [True, False, None]
    assert {s.grade.prompt_version for s in scores.judgments["q1"].statements} == {SUPPORT_PROMPT_VERSION}
    assert scores.unscored() == {"faithfulness": 0, "answer_relevance": 0, "citation_precision": 0,
                                 "citation_recall": 0}  # fmt: skip


def test_an_answer_the_judge_cannot_score_is_nan_and_counted_never_zero(tmp_path: Path) -> None:
    table = pd.DataFrame({"query_id": ["q1"], "answer": ["Cats purr."], "cited_ids": [()]})
    judge = PythonJudge(lambda a, b: "banana", "garbage", cache=GradeCache(tmp_path / "c.sqlite"))
    scores = score_answers(Answers(table, {"q1": CONTEXT_HITS}, "t"), {"q1": QUESTION}, {"q1": {"d1"}}, judge)
    assert math.isnan(scores.table.at["q1", "faithfulness"]) and math.isnan(
        scores.table.at["q1", "answer_relevance"]
    )
    assert scores.unscored()["faithfulness"] == 1 and scores.unscored()["answer_relevance"] == 1


def test_the_support_grades_are_cached_apart_from_the_relevance_grades(tmp_path: Path) -> None:
    seen: list[tuple[str, str]] = []
    cache = GradeCache(tmp_path / "c.sqlite")
    table = pd.DataFrame({"query_id": ["q1"], "answer": ["Cats eat meat."], "cited_ids": [("d1",)]})
    answers = Answers(table, {"q1": CONTEXT_HITS}, "t")
    score_answers(answers, {"q1": QUESTION}, {}, fixed_judge(seen, cache))
    again = fixed_judge(seen, cache)
    score_answers(answers, {"q1": QUESTION}, {}, again)
    assert len(seen) == 2 and again.cost.cache_hits == 2 and len(cache) == 2


def test_without_a_judge_only_the_citation_scores_are_given() -> None:
    table = pd.DataFrame({"query_id": ["q1"], "answer": ["Cats eat meat."], "cited_ids": [("d1",)]})
    scores = score_answers(Answers(table, {}, "t"), {"q1": QUESTION}, {"q1": {"d1"}})
    assert list(scores.table.columns) == ["citation_precision", "citation_recall", "statements"]


def _ratings(tmp_path: Path, *records: dict) -> Path:
    path = tmp_path / "ratings.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


@pytest.mark.parametrize(
    ("bad", "says"),
    [({"query_id": "q9", "variant": "control", "rating": 1}, "query 'q9' is not in the query set"),
     ({"query_id": "q1", "variant": "nope", "rating": 1}, "variant 'nope' is not compared"),
     ({"query_id": "q1", "variant": "control", "rating": 4}, "rating 4 is off the scale 0-3"),
     ({"query_id": "q1", "variant": "control", "rating": True}, "rating True is off the scale"),
     ({"query_id": "q1", "variant": "control", "rating": 2}, "a second rating of variant 'control'"),
     ({"query_id": "q1"}, "with query_id, variant and rating")],
)  # fmt: skip
def test_a_bad_rating_is_one_error_at_its_line(tmp_path: Path, bad, says) -> None:
    path = _ratings(tmp_path, {"query_id": "q1", "variant": "control", "rating": 3}, bad)
    with pytest.raises(AnswerError) as info:
        read_answer_ratings(path, ["q1", "q2"], ["control", "new"])
    assert str(info.value).startswith(f"{path}:2: ") and says in str(info.value)


def test_the_judges_agreement_with_people_uses_the_answers_both_rated(tmp_path: Path) -> None:
    from abcompare.answers.scores import AnswerScores

    judged = {
        "control": AnswerScores(pd.DataFrame({"answer_relevance": [3.0, 0.0]}, index=["q1", "q2"])),
        "new": AnswerScores(pd.DataFrame({"answer_relevance": [2.0, math.nan]}, index=["q1", "q2"])),
    }
    path = _ratings(
        tmp_path,
        {"query_id": "q1", "variant": "control", "rating": 3},
        {"query_id": "q2", "variant": "control", "rating": 0},
        {"query_id": "q1", "variant": "new", "rating": 2},
        {"query_id": "q2", "variant": "new", "rating": 1},  # the judge gave no grade: left out, counted
    )
    ratings = read_answer_ratings(path, ["q1", "q2"], ["control", "new"])
    result, unjudged = answer_agreement(ratings, judged, n_resamples=50)
    assert unjudged == 1 and result.n_pairs == 3 and result.n_queries == 2
    assert result.kappa.value == 1.0  # the three both rated agree exactly
    assert [int(result.confusion.loc[g, g]) for g in (0, 2, 3)] == [1, 1, 1]
