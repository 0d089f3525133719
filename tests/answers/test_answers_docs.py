"""The answers page shows the support prompt and the local generator's prompt rules as the code has them,
and the support messages hold the statement and the cut context and nothing else."""

from __future__ import annotations

from pathlib import Path

from abcompare.answers import Hit
from abcompare.answers.local_model import GENERATION_PROMPT_VERSION, MAX_HIT_CHARS, messages
from abcompare.answers.support import (
    MAX_CONTEXT_CHARS,
    SUPPORT_PROMPT_VERSION,
    SUPPORTED_FROM,
    SYSTEM,
    USER,
    support_messages,
)

DOC = Path(__file__).resolve().parents[2] / "docs" / "answers.md"


def test_the_docs_show_the_support_prompt_word_for_word_and_its_rules() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert f"```text\n{SYSTEM}\n```" in text and f"```text\n{USER}\n```" in text
    assert f"prompt `{SUPPORT_PROMPT_VERSION}`" in text and f"cut to {MAX_CONTEXT_CHARS:,} characters" in text
    assert f"A statement graded {SUPPORTED_FROM} or 3 is supported" in text
    assert f"The prompt (version `{GENERATION_PROMPT_VERSION}`)" in text
    assert f"cut to {MAX_HIT_CHARS} characters" in text


def test_the_support_messages_hold_the_statement_and_the_cut_context() -> None:
    system, user = support_messages(" Cats eat meat. ", "c" * (MAX_CONTEXT_CHARS + 10))
    assert system == {"role": "system", "content": SYSTEM}
    assert user["content"] == USER.format(context="c" * MAX_CONTEXT_CHARS, statement="Cats eat meat.")


def test_the_generator_sees_the_hits_numbered_in_rank_order_and_cut() -> None:
    hits = [Hit("d1", "first  hit", 1), Hit("d2", "y" * (MAX_HIT_CHARS + 5), 2)]
    user = messages(" why? ", hits)[1]["content"]
    assert user.startswith(f"Passages:\n[1] first hit\n[2] {'y' * MAX_HIT_CHARS}\n\nQuestion: why?\n")


def test_the_cited_ids_are_the_hits_behind_the_markers_in_order_of_first_citation() -> None:
    from abcompare.answers.local_model import cited_ids

    hits = [Hit("d1", "", 1), Hit("d2", "", 2)]
    assert cited_ids("Meat [2]. Fish [1], mice [2] and birds [9] [0].", hits) == ["d2", "d1"]
    assert cited_ids("Both [2, 1] in one bracket.", hits) == ["d2", "d1"]
    assert cited_ids("No markers (1), [x] or [1.5].", hits) == []
