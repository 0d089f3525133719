"""The prompt a judge is asked: the docs show it word for word under its version, the judge sees only the two
texts (the hit cut to the documented length), and an unknown version is refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from abcompare.judging.prompt import MAX_HIT_CHARS, PROMPT_VERSION, SYSTEM, USER, messages

DOC = Path(__file__).resolve().parents[2] / "docs" / "judge.md"


def test_the_docs_show_the_prompt_word_for_word_under_its_version() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert f"## The prompt (version `{PROMPT_VERSION}`)" in text
    assert f"```text\n{SYSTEM}\n```" in text and f"```text\n{USER}\n```" in text
    assert f"cut to {MAX_HIT_CHARS:,} characters" in text


def test_the_messages_hold_the_query_and_the_cut_hit_and_nothing_else() -> None:
    hit = "x" * (MAX_HIT_CHARS + 50)
    system, user = messages("  what is it ", hit)
    assert system == {"role": "system", "content": SYSTEM}
    assert user["content"] == USER.format(query="what is it", passage="x" * MAX_HIT_CHARS)


def test_an_unknown_prompt_version_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown prompt version"):
        messages("q", "h", "v0")
