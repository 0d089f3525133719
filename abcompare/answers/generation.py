"""Answers per variant: a generator (any callable handed over from Python, or one abcompare ships) asked once
per query with that variant's top-k hits, each of its answers checked by the one rule below, and what the
generation cost (calls, tokens, seconds)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from abcompare.answers.errors import AnswerError
from abcompare.answers.hits import Hit, Query

#: The answers table's columns: one row per query.
ANSWER_COLUMNS = ("query_id", "answer", "cited_ids")

#: A generator: ``fn(query, hits)`` with ``query`` a :class:`Query` and ``hits`` the variant's top-k
#: :class:`Hit` list (best first); it returns ``(answer, cited_ids)`` or
#: ``{"answer": ..., "cited_ids": [...]}``.
Generator = Callable[[Query, list[Hit]], Any]


@dataclass
class GenerationCost:
    """What generating cost: calls, tokens in and out (when the generator counts them), seconds, and the
    calls answered from a cache (no tokens, no seconds)."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    cache_hits: int = 0

    def as_dict(self) -> dict[str, float | int]:
        return {
            "generation_calls": self.calls,
            "generation_prompt_tokens": self.prompt_tokens,
            "generation_completion_tokens": self.completion_tokens,
            "generation_seconds": round(self.seconds, 3),
            "generation_cache_hits": self.cache_hits,
        }


@dataclass
class Answers:
    """One variant's answers (``table``: :data:`ANSWER_COLUMNS`, ``cited_ids`` a tuple), the hits each
    query's generator was given (``hits``: its context), who made them (``source``) and the cost."""

    table: pd.DataFrame
    hits: dict[str, list[Hit]]
    source: str
    cost: GenerationCost = field(default_factory=GenerationCost)

    def answer(self, query_id: str) -> tuple[str, tuple[str, ...]]:
        row = self.table.loc[self.table["query_id"] == query_id].iloc[0]
        return str(row["answer"]), tuple(row["cited_ids"])


def answer_problem(answer: object, cited_ids: object, hit_ids: Iterable[str] | None) -> str | None:
    """Why an answer cannot be used (None when it can): not a string, empty, cited ids that are not a list of
    strings, or cited ids not among the hits it was given (``hit_ids``; None skips that check)."""
    if not isinstance(answer, str):
        return f"the answer is a {type(answer).__name__}, not a string"
    if not answer.strip():
        return "the answer is empty"
    if not isinstance(cited_ids, (list, tuple)) or not all(isinstance(c, str) for c in cited_ids):
        return "cited_ids must be a list of strings (the ids of the hits the answer cites)"
    if len(set(cited_ids)) != len(cited_ids):
        return "cited_ids lists an id twice"
    if hit_ids is not None:
        given = set(hit_ids)
        stray = [c for c in cited_ids if c not in given]
        if stray:
            return f"it cites {stray[0]!r}, which is not among the hits it was given"
    return None


def _unpack(said: object) -> tuple[object, object]:
    """``(answer, cited_ids)`` from what a generator returned (a pair, or a mapping with those keys)."""
    if isinstance(said, Mapping):
        return said.get("answer"), said.get("cited_ids", [])
    if isinstance(said, tuple) and len(said) == 2:
        return said
    return said, []


def generate_answers(
    generator: Generator,
    name: str,
    queries: Sequence[Query] | pd.DataFrame,
    hits: Mapping[str, Sequence[Hit]],
    *,
    field_name: str = "answers.generator",
) -> Answers:
    """Ask ``generator`` (called ``name`` in messages) for each query's answer given its hits (a query
    without hits is given none). A generator that raises, or returns an answer :func:`answer_problem`
    refuses, stops here with one line naming the generator and the query."""
    if isinstance(queries, pd.DataFrame):
        queries = [Query(str(q), str(t)) for q, t in queries[["query_id", "text"]].itertuples(index=False)]
    cost = getattr(generator, "cost", None)
    cost = cost if isinstance(cost, GenerationCost) else GenerationCost()
    own_count = getattr(generator, "cost", None) is cost
    rows = []
    given: dict[str, list[Hit]] = {}
    for query in queries:
        context = list(hits.get(query.query_id, ()))
        given[query.query_id] = context
        started = time.perf_counter()
        try:
            said = generator(query, context)
        except AnswerError:
            raise
        except Exception as exc:  # noqa: BLE001 - any failure of user code is reported, located
            raise AnswerError(
                f"the generator {name!r} raised on query {query.query_id!r}: "
                f"{type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}",
                field=field_name,
            ) from None
        if not own_count:  # a generator that counts itself (the shipped ones) adds its own calls and time
            cost.calls += 1
            cost.seconds += time.perf_counter() - started
        answer, cited = _unpack(said)
        problem = answer_problem(answer, cited, [h.id for h in context])
        if problem is not None:
            raise AnswerError(
                f"the generator {name!r} gave an unusable answer to query {query.query_id!r}: {problem}",
                field=field_name,
                hint="a generator returns (answer_text, [cited hit ids]) or "
                "{'answer': text, 'cited_ids': [...]}, citing only the hits it was given",
            )
        rows.append((query.query_id, str(answer).strip(), tuple(cited)))  # type: ignore[arg-type]
    table = pd.DataFrame(rows, columns=list(ANSWER_COLUMNS))
    return Answers(table, given, f"generator:{name}", cost)
