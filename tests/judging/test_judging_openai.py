"""The openai judge against a real OpenAI-compatible server (``transformers serve`` on 127.0.0.1 serving
SmolLM2-135M-Instruct), and against endpoints that are down, refuse or never answer: one located error after
a bounded number of tries, never a silent grade. Machinery, not the model's quality, is asserted."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import pandas as pd
import pytest
from support.environment import require_module
from support.llm_server import llm_server  # noqa: F401 - the fixture
from support.servers import free_port

from abcompare.judging import JudgeError, judge_pairs

PAIRS = pd.DataFrame(
    {
        "query_id": ["q1", "q2"],
        "key": ["d1", "d2"],
        "query_text": ["what do cats eat", "how is bread baked"],
        "hit_text": [
            "Cats are carnivores: they eat meat, such as mice, birds and fish.",
            "The French tax reform of 2019 changed the income brackets.",
        ],
    }
)


def openai_judge(base_url: str, model: str = "m", **settings):
    require_module("openai")
    from abcompare.judging.openai_judge import OpenAIJudge

    return OpenAIJudge(base_url, model, **settings)


@pytest.mark.server
@pytest.mark.slow
def test_a_real_server_grades_pairs_or_counts_them_unusable_and_reports_its_tokens(llm_server) -> None:  # noqa: F811
    judge = openai_judge(llm_server.base_url, llm_server.model, timeout_seconds=300, retries=1, max_tokens=12)
    judged = judge_pairs(judge, PAIRS, max_pairs=2)
    assert judge.cost.calls == 2 and judge.cost.prompt_tokens > 100 and judge.cost.completion_tokens > 0
    for row in judged.labels.itertuples():
        # whatever the small model said, the label is exactly what the one answer rule reads from it
        assert (row.grade is pd.NA) == (row.problem is not None)
    assert judged.judged + judged.unusable == 2
    assert set(judged.labels["judge"]) == {f"openai:{llm_server.model}@{llm_server.base_url}"}


@pytest.mark.server
@pytest.mark.slow
def test_a_wrong_path_on_a_real_server_is_refused_at_once(llm_server) -> None:  # noqa: F811
    judge = openai_judge(llm_server.base_url.replace("/v1", "/nothing/v1"), llm_server.model, retries=3)
    with pytest.raises(JudgeError) as info:
        judge.grade("q", "h")
    assert "refused the request (HTTP 404)" in str(info.value) and info.value.field == "judge.base_url"
    assert judge.cost.retries == 0  # a 4xx is not retried


def test_an_endpoint_that_is_down_is_one_error_after_the_bounded_tries() -> None:
    judge = openai_judge(f"http://127.0.0.1:{free_port()}/v1", timeout_seconds=5, retries=2)
    with pytest.raises(JudgeError) as info:
        judge.grade("q", "h")
    assert "did not answer after 3 tries" in str(info.value) and "APIConnectionError" in str(info.value)
    assert info.value.field == "judge.base_url" and info.value.exit_code == 2 and judge.cost.retries == 2


@pytest.fixture
def silent_endpoint() -> Iterator[str]:
    """A TCP listener on 127.0.0.1 that accepts connections and never answers (a hung server)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(listener.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
    stop.set()
    thread.join(timeout=5)
    for conn in held:
        conn.close()
    listener.close()


def test_an_endpoint_that_times_out_is_one_error_after_the_bounded_tries(silent_endpoint: str) -> None:
    judge = openai_judge(silent_endpoint, timeout_seconds=0.5, retries=1)
    with pytest.raises(JudgeError) as info:
        judge.grade("q", "h")
    # bounded: the two tries (one retry) are counted in the message; no clock is read (suite rules)
    assert "did not answer after 2 tries" in str(info.value) and "Timeout" in str(info.value)


def test_an_unset_key_variable_is_a_located_error(monkeypatch) -> None:
    monkeypatch.delenv("ABCOMPARE_TEST_UNSET_KEY", raising=False)
    with pytest.raises(JudgeError) as info:
        openai_judge("http://127.0.0.1:9/v1", api_key_env="ABCOMPARE_TEST_UNSET_KEY")
    assert info.value.field == "judge.api_key_env" and "ABCOMPARE_TEST_UNSET_KEY" in str(info.value)


@pytest.mark.server
@pytest.mark.slow
def test_answers_are_judged_through_a_real_server_with_the_support_prompt(llm_server) -> None:  # noqa: F811
    """The answers' faithfulness and relevance asked of the openai judge: one call per statement (the support
    prompt) and one per answer (relevance), each score what the grades it gave say."""
    from abcompare.answers import Answers, Hit
    from abcompare.answers.scores import FAITHFULNESS, score_answers
    from abcompare.answers.support import SUPPORT_PROMPT_VERSION, support_judge

    judge = openai_judge(llm_server.base_url, llm_server.model, timeout_seconds=300, retries=1, max_tokens=12)
    assert support_judge(judge).chat("s", "c")[1]["content"].endswith("##final score: score")
    assert support_judge(judge).prompt_version == SUPPORT_PROMPT_VERSION
    hits = {"q1": [Hit("d1", PAIRS["hit_text"][0], 1)], "q2": [Hit("d2", PAIRS["hit_text"][1], 1)]}
    table = pd.DataFrame(
        {"query_id": ["q1", "q2"], "answer": ["Cats eat meat. They eat mice.", "Bread is baked in an oven."],
         "cited_ids": [("d1",), ()]}
    )  # fmt: skip
    questions = dict(zip(PAIRS["query_id"], PAIRS["query_text"], strict=True))
    scores = score_answers(Answers(table, hits, "file"), questions, {"q1": {"d1"}, "q2": {"d2"}}, judge)
    assert judge.cost.calls == 3 + 2, "two statements of q1 and one of q2, and one relevance grade per answer"
    for query_id, judged in scores.judgments.items():
        grades = [j.grade.value for j in judged.statements if j.grade.value is not None]
        expected = sum(g >= 2 for g in grades) / len(grades) if grades else None
        found = scores.table.loc[query_id, FAITHFULNESS]
        assert (expected is None and pd.isna(found)) or found == pytest.approx(expected)
