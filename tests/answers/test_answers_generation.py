"""Answers per variant: the extractive baseline against hand-picked sentences, a Python generator's answers
checked by the one rule (raises, None, a non-string, an empty answer, a citation of a hit it was not given:
one located line naming the generator and the query), and the answers file read and written, every bad line
located at file:line (a line that is not a JSON object, in the answers or the ratings file, by the one JSONL
rule's own error)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from abcompare.answers import (
    AnswerError,
    ExtractiveGenerator,
    Hit,
    Query,
    generate_answers,
    read_answers,
    write_answers,
)
from abcompare.answers.extractive import NO_HITS_ANSWER
from abcompare.answers.ratings import read_answer_ratings
from abcompare.answers.text import sentences, terms
from abcompare.core.errors import DataError

D1 = Hit("d1", "Cats are carnivores: they eat meat, such as mice, birds and fish. They sleep a lot.", 1)
D2 = Hit("d2", "Dogs eat anything.  Cats purr.", 2)
D3 = Hit("d3", "Tax law changed.", 3)
CATS = Query("q1", "What do cats eat?")


def test_sentences_and_terms_follow_their_rules() -> None:
    assert sentences("One. Two!  Three?\nFour") == ["One.", "Two!", "Three?", "Four"]
    assert sentences("Dr.Who is 3.5 m tall.") == ["Dr.Who is 3.5 m tall."]  # no space after the dot: no cut
    assert terms("What do cats eat? Cats, a cat.") == {"cats", "eat", "cat"}


def test_the_extractive_baseline_picks_the_sentences_sharing_most_question_terms() -> None:
    # question terms {cats, eat}: D1's first sentence has both (2), D2's two sentences one each (1), the
    # rest none; two sentences: D1's first, then the better-ranked of the ties (D2's first, "eat")
    answer, cited = ExtractiveGenerator(2)(CATS, [D1, D2, D3])
    assert answer == "Cats are carnivores: they eat meat, such as mice, birds and fish. Dogs eat anything."
    assert cited == ["d1", "d2"]
    answer, cited = ExtractiveGenerator(3)(CATS, [D1, D2, D3])
    assert answer.endswith("Dogs eat anything. Cats purr.") and cited == ["d1", "d2"]
    answer, cited = ExtractiveGenerator(1)(CATS, [D1, D2, D3])
    assert answer == sentences(D1.text)[0] and cited == ["d1"]


def test_the_picked_sentences_are_given_in_rank_order_and_the_fallbacks_hold() -> None:
    answer, cited = ExtractiveGenerator(2)(CATS, [D2, D1])  # D2 first now: its tie wins, and leads
    assert answer == "Dogs eat anything. Cats are carnivores: they eat meat, such as mice, birds and fish."
    assert cited == ["d2", "d1"]
    answer, cited = ExtractiveGenerator(2)(Query("q2", "quantum physics"), [D3, D1])
    assert (answer, cited) == ("Tax law changed.", ["d3"])  # nothing shares a term: the top hit's first
    assert ExtractiveGenerator()(CATS, []) == (NO_HITS_ANSWER, [])


def test_generated_answers_are_one_row_per_query_with_the_hits_they_were_given() -> None:
    queries = [CATS, Query("q2", "tax")]
    hits = {"q1": [D1, D2], "q2": [D3]}
    answers = generate_answers(ExtractiveGenerator(1), "extractive", queries, hits)
    assert answers.table["query_id"].tolist() == ["q1", "q2"]
    assert answers.table["cited_ids"].tolist() == [("d1",), ("d3",)]
    assert answers.hits == hits and answers.source == "generator:extractive" and answers.cost.calls == 2


def _generator(result):
    def generate(query: Query, hits: list[Hit]):
        if isinstance(result, Exception):
            raise result
        return result

    return generate


@pytest.mark.parametrize(
    ("result", "says"),
    [(RuntimeError("model crashed"), "raised on query 'q1': RuntimeError: model crashed"),
     (None, "the answer is a NoneType, not a string"),
     (42, "the answer is a int, not a string"),
     (("  ", []), "the answer is empty"),
     ({"answer": "cats eat meat", "cited_ids": ["d9"]}, "it cites 'd9', which is not among the hits"),
     (("cats eat meat", "d1"), "cited_ids must be a list of strings"),
     (("cats eat meat", ["d1", "d1"]), "lists an id twice")],
)  # fmt: skip
def test_a_generator_that_fails_or_gives_an_unusable_answer_is_one_located_line(result, says) -> None:
    with pytest.raises(AnswerError) as info:
        generate_answers(_generator(result), "mine", [CATS], {"q1": [D1]})
    message = str(info.value)
    assert says in message and "'mine'" in message and "'q1'" in message and "\n" not in message


def test_answers_written_and_read_back_are_the_same(tmp_path: Path) -> None:
    hits = {"q1": [D1, D2], "q2": [D3]}
    made = generate_answers(ExtractiveGenerator(2), "x", [CATS, Query("q2", "tax")], hits)
    path = write_answers(made, tmp_path / "a.jsonl")
    back = read_answers(path, ["q1", "q2"], hits)
    assert back.table.equals(made.table) and back.source == "file:a.jsonl" and back.hits == hits


def _lines(tmp_path: Path, *records: object) -> Path:
    path = tmp_path / "answers.jsonl"
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in records) + "\n")
    return path


GOOD = {"query_id": "q1", "answer": "Cats eat meat.", "cited_ids": ["d1"]}


@pytest.mark.parametrize(
    ("second", "line", "says"),
    [({"query_id": "q9", "answer": "x", "cited_ids": []}, 2, "query 'q9' is not in the query set"),
     (GOOD, 2, "a second answer to query 'q1' (the first is on line 1)"),
     ({"query_id": "q2", "answer": " ", "cited_ids": []}, 2, "query 'q2': the answer is empty"),
     ({"query_id": "q2", "answer": "Tax.", "cited_ids": ["d1"]}, 2, "it cites 'd1', which is not among"),
     ({"query_id": "q2"}, 2, "no 'answer'")],
)  # fmt: skip
def test_a_bad_answers_line_is_one_error_at_its_file_and_line(tmp_path: Path, second, line, says) -> None:
    path = _lines(tmp_path, GOOD, second)
    with pytest.raises(AnswerError) as info:
        read_answers(path, ["q1", "q2"], {"q1": [D1], "q2": [D3]})
    assert str(info.value).startswith(f"{path}:{line}: ") and says in str(info.value)


@pytest.mark.parametrize(
    ("second", "says"),
    [("{not json", "malformed line: not JSON (Expecting property name enclosed in double quotes)"),
     ("[1, 2]", "malformed line: expected a JSON object")],
)  # fmt: skip
@pytest.mark.parametrize("reader", ["answers", "ratings"])
def test_a_line_that_is_not_a_json_object_is_the_one_jsonl_rules_error_at_its_line(
    tmp_path: Path, second: str, says: str, reader: str
) -> None:
    """Both answers inputs read their lines by abcompare.data._jsonl (as queries, corpora and JSONL runs):
    the same located error, blank lines not counted as content but counted in the line numbers."""
    first = GOOD if reader == "answers" else {"query_id": "q1", "variant": "control", "rating": 2}
    path = _lines(tmp_path, first, "", second)
    with pytest.raises(DataError) as info:
        if reader == "answers":
            read_answers(path, ["q1", "q2"])
        else:
            read_answer_ratings(path, ["q1", "q2"], ["control"])
    assert str(info.value).startswith(f"{path}:3: {says}")


@pytest.mark.parametrize("reader", ["answers", "ratings"])
def test_a_missing_answers_input_is_located(tmp_path: Path, reader: str) -> None:
    path = tmp_path / "nowhere.jsonl"
    with pytest.raises(DataError) as info:
        read_answers(path, ["q1"]) if reader == "answers" else read_answer_ratings(path, ["q1"], ["control"])
    what = "answers" if reader == "answers" else "answer ratings"
    assert str(info.value).startswith(f"{path}: {what} file not found")


def test_a_query_without_an_answer_is_refused(tmp_path: Path) -> None:
    with pytest.raises(AnswerError, match=r"no answer for 1 of the 2 queries \(first: 'q2'\)"):
        read_answers(_lines(tmp_path, GOOD), ["q1", "q2"])
