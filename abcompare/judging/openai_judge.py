"""The ``openai`` provider: any OpenAI-compatible chat endpoint (a hosted API, vLLM, Ollama, llama.cpp's
server, ``transformers serve``) through the ``openai`` client. The key is read from the environment variable
the config names, never from the file; a failed call is retried a bounded number of times, then the run
stops with one line naming the endpoint."""

from __future__ import annotations

import os
import time

from abcompare.judging.base import Answer, JudgeError, ModelJudge
from abcompare.judging.cache import GradeCache
from abcompare.judging.grades import read_grade
from abcompare.judging.prompt import PROMPT_VERSION, messages

#: A local server (vLLM, Ollama, transformers serve) takes any key; the client needs one all the same.
NO_KEY = "no-key"


class OpenAIJudge(ModelJudge):
    """A chat model behind ``base_url`` as a judge, asked at temperature 0 for a short answer."""

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key_env: str | None = None,
        timeout_seconds: float = 60.0,
        retries: int = 2,
        max_tokens: int = 32,
        prompt_version: str = PROMPT_VERSION,
        cache: GradeCache | None = None,
    ) -> None:
        super().__init__(f"openai:{model}@{base_url}", prompt_version, cache)
        key = NO_KEY
        if api_key_env is not None:
            key = os.environ.get(api_key_env, "")
            if not key:
                raise JudgeError(
                    f"the environment variable {api_key_env} (the judge's API key) is not set",
                    field="judge.api_key_env",
                )
        try:
            from openai import OpenAI
        except ImportError:
            raise JudgeError(
                "the openai judge needs the openai package",
                field="judge.provider",
                hint='pip install "abcompare[judge]"',
            ) from None
        self.base_url, self.model_name = base_url, model
        self.retries, self.max_tokens = retries, max_tokens
        self.client = OpenAI(base_url=base_url, api_key=key, timeout=timeout_seconds, max_retries=0)

    def chat(self, query_text: str, hit_text: str) -> list[dict[str, str]]:
        """The chat messages of one question: the relevance prompt of ``prompt_version`` (the answers'
        support view asks its own question through the same endpoint, model, cache and cost)."""
        return messages(query_text, hit_text, self.prompt_version)

    def _call(self, query_text: str, hit_text: str):  # noqa: ANN202 - the client's response type
        import openai

        transient = (openai.APIConnectionError, openai.RateLimitError, openai.InternalServerError)
        last: Exception | None = None
        for attempt in range(self.retries + 1):
            if attempt:
                self.cost.retries += 1
                time.sleep(min(0.5 * 2 ** (attempt - 1), 4.0))
            try:
                return self.client.chat.completions.create(
                    model=self.model_name,
                    messages=self.chat(query_text, hit_text),
                    temperature=0,
                    max_tokens=self.max_tokens,
                )
            except transient as exc:  # APITimeoutError is an APIConnectionError
                last = exc
            except openai.APIStatusError as exc:  # 4xx: a wrong key, model or path; retrying cannot help
                raise JudgeError(
                    f"the judge's endpoint {self.base_url} refused the request "
                    f"(HTTP {exc.status_code}): {_short(exc)}",
                    field="judge.base_url",
                ) from None
        raise JudgeError(
            f"the judge's endpoint {self.base_url} did not answer after {self.retries + 1} tries "
            f"({type(last).__name__}: {_short(last)})",
            field="judge.base_url",
            hint="start the server, or check judge.base_url and judge.timeout_seconds",
        )

    def ask(self, query_text: str, hit_text: str) -> Answer:
        response = self._call(query_text, hit_text)
        text = (response.choices[0].message.content or "") if response.choices else ""
        usage = response.usage
        grade, problem = read_grade(text)
        return Answer(
            text,
            grade,
            problem,
            int(getattr(usage, "prompt_tokens", 0) or 0),
            int(getattr(usage, "completion_tokens", 0) or 0),
        )


def _short(exc: Exception | None) -> str:
    return str(exc).splitlines()[0][:200] if exc is not None else ""
