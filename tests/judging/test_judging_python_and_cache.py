"""The judge machinery with a Python callable as the model: grades read from answers (garbage, empty and
off-scale answers count as not judged, with the count said), the persistent cache keyed by query text, hit
text, judge and prompt version, the max_pairs bound in the order given, cost counting, and file labels."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from abcompare.core.errors import DataError
from abcompare.judging import (
    GradeCache,
    JudgeError,
    cache_key,
    judge_pairs,
    make_judge,
    read_grade,
    read_judge_labels,
)
from abcompare.judging.python_judge import PythonJudge


@pytest.mark.parametrize(
    ("answer", "grade", "problem"),
    [("##final score: 2", 2, None), ("3", 3, None), (" 1. ", 1, None),
     ("M: 2, T: 1\n##final score: 0", 0, None),
     ("", None, "empty answer"), ("   ", None, "empty answer"), ("the passage is relevant", None, "no grade"),
     ("##final score: 7", None, "outside the scale"), ("-1", None, "outside the scale"),
     ("2.5", None, "outside the scale"), (None, None, "empty answer")],
)  # fmt: skip
def test_a_grade_is_read_only_from_an_answer_that_states_one_on_the_scale(answer, grade, problem) -> None:
    got, why = read_grade(answer)
    assert got == grade
    assert (why is None) if problem is None else (problem in why)


PAIRS = pd.DataFrame(
    {
        "query_id": ["q1", "q1", "q2", "q2", "q3"],
        "key": ["d1", "d2", "d1", "d3", "d4"],
        "query_text": ["cats", "cats", "dogs", "dogs", "birds"],
        "hit_text": ["cats purr", "tax law", "dogs bark", "", "birds fly"],
    }
)


def answering(answers: dict[str, object], seen: list[tuple[str, str]] | None = None):
    def judge(query_text: str, hit_text: str):
        if seen is not None:
            seen.append((query_text, hit_text))
        return answers[hit_text]

    return judge


def test_unusable_answers_are_counted_as_not_judged_and_said(tmp_path: Path) -> None:
    answers = {"cats purr": "##final score: 3", "tax law": "banana", "dogs bark": 2, "": "", "birds fly": 9}
    judge = PythonJudge(answering(answers), "fixed", cache=GradeCache(tmp_path / "c.sqlite"))
    judged = judge_pairs(judge, PAIRS, max_pairs=10)
    assert judged.labels["grade"].tolist() == [3, pd.NA, 2, pd.NA, pd.NA]
    assert (judged.judged, judged.unusable, judged.over_budget) == (2, 3, 0)
    assert judge.cost.calls == 5 and judge.cost.unusable == 3
    line = judged.summary()
    assert "judged 2 of 5 pairs" in line and "3 answers unusable, counted as not judged" in line
    assert "no grade in the answer" in line and "empty answer" in line and "outside the scale" in line
    assert set(judged.labels["judge"]) == {"python:fixed"} and set(judged.labels["source"]) == {"judge"}
    assert set(judged.labels["prompt_version"]) == {"umbrela-0.1"}


def test_the_judge_sees_only_the_two_texts() -> None:
    seen: list[tuple[str, str]] = []
    judge = PythonJudge(answering(dict.fromkeys(PAIRS["hit_text"], 1), seen), "spy")
    judge_pairs(judge, PAIRS, max_pairs=5)
    assert seen == list(zip(PAIRS["query_text"], PAIRS["hit_text"], strict=True))


def test_max_pairs_asks_the_first_pairs_in_the_order_given_and_says_how_many_were_not_asked() -> None:
    seen: list[tuple[str, str]] = []
    judge = PythonJudge(answering(dict.fromkeys(PAIRS["hit_text"], 1), seen), "bounded")
    judged = judge_pairs(judge, PAIRS, max_pairs=2)
    assert seen == [("cats", "cats purr"), ("cats", "tax law")]
    assert judged.over_budget == 3 and "3 not asked (judge.max_pairs = 2)" in judged.summary()


def test_the_cache_answers_the_same_question_to_the_same_judge_and_prompt_across_runs(tmp_path: Path) -> None:
    answers = dict.fromkeys(PAIRS["hit_text"], 2) | {"tax law": "nonsense"}
    first_seen: list[tuple[str, str]] = []
    first = PythonJudge(answering(answers, first_seen), "cached", cache=GradeCache(tmp_path / "c.sqlite"))
    judge_pairs(first, PAIRS, max_pairs=5)
    assert len(first_seen) == 5 and len(first.cache) == 4  # the unusable answer is not kept

    again_seen: list[tuple[str, str]] = []
    again = PythonJudge(answering(answers, again_seen), "cached", cache=GradeCache(tmp_path / "c.sqlite"))
    judged = judge_pairs(again, PAIRS, max_pairs=5)
    assert again_seen == [("cats", "tax law")]  # only the pair without a usable grade is asked again
    assert (again.cost.calls, again.cost.cache_hits) == (1, 4)
    assert judged.labels["cached"].tolist() == [True, False, True, True, True]

    other_seen: list[tuple[str, str]] = []
    other = PythonJudge(answering(answers, other_seen), "another", cache=GradeCache(tmp_path / "c.sqlite"))
    judge_pairs(other, PAIRS, max_pairs=5)
    assert len(other_seen) == 5  # another judge is never answered from this one's grades


def test_the_cache_key_changes_with_each_of_its_four_parts() -> None:
    base = ("q", "h", "judge", "v1")
    keys = {cache_key(*base)}
    for i, changed in enumerate(["q2", "h2", "judge2", "v2"]):
        parts = list(base)
        parts[i] = changed
        keys.add(cache_key(*parts))
    assert len(keys) == 5
    assert cache_key("a b", "c", "j", "v") != cache_key("a", "b c", "j", "v")  # no ambiguous joining


def test_a_python_judge_that_was_not_passed_is_a_located_error() -> None:
    class Settings:
        provider, name, prompt_version = "python", "missing", "umbrela-0.1"

    with pytest.raises(JudgeError) as info:
        make_judge(Settings(), None, {})
    assert info.value.field == "judge.name" and info.value.exit_code == 2


def test_file_labels_are_the_judges_with_their_source_and_checked(tmp_path: Path) -> None:
    qrels = tmp_path / "labels.qrels"
    qrels.write_text("q1 0 d1 3\nq1 0 d2 0\nq2 0 d1 1\n")
    labels = read_judge_labels(qrels, "gpt-judge", queries=["q1", "q2"])
    assert labels[["query_id", "key", "grade"]].values.tolist() == [
        ["q1", "d1", 3],
        ["q1", "d2", 0],
        ["q2", "d1", 1],
    ]
    assert set(labels["source"]) == {"gpt-judge"} and set(labels["judge"]) == {"file:gpt-judge"}

    with pytest.raises(DataError, match="not in the query set"):
        read_judge_labels(qrels, "gpt-judge", queries=["q1"])
    off = tmp_path / "off.jsonl"
    off.write_text('{"query_id": "q1", "relevant": {"d1": 5}}\n')
    with pytest.raises(DataError, match="off the judge's scale"):
        read_judge_labels(off, "gpt-judge")
