"""The one interface every judge offers (``grade(query_text, hit_text) -> Grade``), and the shared part of
the model judges: ask once per pair, answer from the cache when the same judge was asked the same question
with the same prompt, and count what it cost."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from abcompare.core.errors import AbcompareError
from abcompare.judging.cache import GradeCache, cache_key
from abcompare.judging.cost import JudgeCost
from abcompare.judging.grades import Grade
from abcompare.judging.prompt import PROMPT_VERSION


class JudgeError(AbcompareError):
    """A judge cannot be used: its endpoint is down or refuses, its key variable is not set, its model or
    label file is missing (exit 2, located at the ``judge`` key it comes from)."""


@runtime_checkable
class Judge(Protocol):
    """Grades one hit for one query on the 0-3 scale; sees nothing but the two texts."""

    identity: str
    prompt_version: str
    cost: JudgeCost

    def grade(self, query_text: str, hit_text: str) -> Grade: ...


@dataclass(frozen=True)
class Answer:
    """What one call to a model gave: its text, the grade read from it (or None and why), its tokens."""

    text: str
    grade: int | None
    problem: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0


class ModelJudge:
    """A judge that asks a model (``ask``, per provider) through the cache, counting calls, tokens, seconds
    and unusable answers in ``cost``."""

    def __init__(self, identity: str, prompt_version: str = PROMPT_VERSION, cache: GradeCache | None = None):
        self.identity = identity
        self.prompt_version = prompt_version
        self.cache = cache
        self.cost = JudgeCost()

    @property
    def cache_identity(self) -> str:
        """What the cache keys a grade by besides the texts and the prompt: the judge's identity, and for a
        local model the digest of its files (:meth:`TransformersJudge.cache_identity`), so a changed model
        file of the same name is never answered from the old one's grades."""
        return self.identity

    def ask(self, query_text: str, hit_text: str) -> Answer:  # pragma: no cover - per provider
        raise NotImplementedError

    def grade(self, query_text: str, hit_text: str) -> Grade:
        key = cache_key(query_text, hit_text, self.cache_identity, self.prompt_version)
        stored = self.cache.get(key) if self.cache is not None else None
        if stored is not None:
            self.cost.cache_hits += 1
            return Grade(stored[0], self.identity, self.prompt_version, answer=stored[1], cached=True)
        started = time.perf_counter()
        try:
            answer = self.ask(query_text, hit_text)
        finally:
            self.cost.seconds += time.perf_counter() - started
        self.cost.calls += 1
        self.cost.prompt_tokens += answer.prompt_tokens
        self.cost.completion_tokens += answer.completion_tokens
        text = answer.text[:200]
        if answer.grade is None:
            self.cost.add_problem(answer.problem or "no grade in the answer")
            return Grade(None, self.identity, self.prompt_version, answer=text, problem=answer.problem)
        if self.cache is not None:
            self.cache.put(key, answer.grade, text, self.identity, self.prompt_version)
        return Grade(answer.grade, self.identity, self.prompt_version, answer=text)
