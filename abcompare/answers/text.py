"""The two text rules the answers stage shares: a text split into sentences (the extractive baseline's
units, and the statements faithfulness judges), and a text's terms (what the extractive baseline matches)."""

from __future__ import annotations

import re

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_CITATION = re.compile(r"\s*\[\d+(?:\s*,\s*\d+)*\]")
_WORD = re.compile(r"\w+")

#: Words too common to say what a sentence is about (a short English list; matching ignores them).
_STOPWORDS = "a an and are as at be by do does for from has have how in is it its of on or that the their "
STOPWORDS = frozenset((_STOPWORDS + "this to was were what when where which who why will with").split(" "))


def sentences(text: str) -> list[str]:
    """``text`` cut after each ``.``, ``!`` or ``?`` followed by white space; whitespace runs become one
    space, empty pieces are dropped."""
    flat = " ".join(text.split())
    return [s.strip() for s in _SENTENCE_END.split(flat) if s.strip()]


def without_citations(text: str) -> str:
    """``text`` with citation markers (``[1]``, ``[1, 2]``) taken out."""
    return _CITATION.sub("", text)


def terms(text: str) -> set[str]:
    """The distinct lower-cased words of ``text`` (letters, digits, underscore), stopwords and one-character
    words left out."""
    return {w for w in (m.lower() for m in _WORD.findall(text)) if len(w) > 1 and w not in STOPWORDS}
