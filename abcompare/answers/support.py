"""The judge asked a second question: is a statement supported by the context it was given? The same judge
(its model, cache, cost) with a support prompt of its own version, graded on the judge's 0-3 scale; a
statement graded 2 or 3 is supported. A Python judge's callable gets ``(statement, context)`` in place of
``(query, hit)``."""

from __future__ import annotations

import copy
from collections.abc import Sequence

from abcompare.answers.hits import Hit
from abcompare.judging.base import Judge, JudgeError
from abcompare.judging.openai_judge import OpenAIJudge
from abcompare.judging.prompt import ANSWER_PREFIX
from abcompare.judging.python_judge import PythonJudge
from abcompare.judging.transformers_judge import TransformersJudge

SUPPORT_PROMPT_VERSION = "support-0.1"
#: The lowest grade that counts as supported.
SUPPORTED_FROM = 2
#: The longest context shown with one statement (characters); the cut is the same for every provider.
MAX_CONTEXT_CHARS = 3000

SYSTEM = "You are a careful fact checker comparing a statement with the context it was written from."

USER = """Given a context and a statement, you must provide a score on an integer scale of 0 to 3 with the \
following meanings:
0 = the context says nothing about the statement, or contradicts it,
1 = the context is related to the statement but does not support it,
2 = the context supports most of the statement,
3 = the context fully supports the statement.

Context: {context}
Statement: {statement}

Provide only the final score in the format: ##final score: score"""


def context_text(hits: Sequence[Hit]) -> str:
    """The context an answer was given, as the judge sees it: the hits numbered in rank order."""
    return "\n".join(f"[{i}] {' '.join(h.text.split())}" for i, h in enumerate(hits, 1))


def support_messages(statement: str, context: str) -> list[dict[str, str]]:
    """The chat messages asking how far ``context`` supports ``statement``."""
    user = USER.format(context=context[:MAX_CONTEXT_CHARS].strip(), statement=statement.strip())
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def support_judge(judge: Judge) -> Judge:
    """``judge`` asked the support question: ``grade(statement, context)``. It shares the judge's model,
    cache (under its own prompt version, so no relevance grade is reused) and cost counters."""

    view = copy.copy(judge)
    view.prompt_version = SUPPORT_PROMPT_VERSION
    if isinstance(judge, PythonJudge):
        return view
    if isinstance(judge, OpenAIJudge):  # the same endpoint asked the support question
        view.chat = support_messages  # type: ignore[method-assign]
        return view
    if isinstance(judge, TransformersJudge):
        # the view loads through the judge: one model, loaded on the first question the cache cannot answer
        view._load = judge._load  # type: ignore[method-assign]  # noqa: SLF001

        def prompt(statement: str, context: str) -> str:
            chat = support_messages(statement, context)
            text = judge.tokenizer.apply_chat_template(chat, tokenize=False, add_generation_prompt=True)
            return text + ANSWER_PREFIX

        view.prompt = prompt  # type: ignore[method-assign]
        return view
    raise JudgeError(
        f"faithfulness is not yet judged by the {type(judge).__name__} (its support prompt is not wired)",
        field="judge.provider",
        hint="use the transformers or python judge for answers",
    )
