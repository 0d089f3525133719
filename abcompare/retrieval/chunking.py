"""Split documents into chunks with exact character offsets (recursive, sentence-aware, or none).

Every chunk satisfies ``chunk.text == document_text[chunk.start:chunk.end]``; chunk ids are
``f"{document_id}#chunk-{chunk_index}"``. All strategies are deterministic.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import TYPE_CHECKING, Any

from abcompare.core.errors import RetrievalError

if TYPE_CHECKING:
    import pandas as pd

    from abcompare.retrieval.settings import ChunkingSettings

RECURSIVE_SEPARATORS: tuple[str, ...] = ("\n\n", "\n", " ", "")
STRATEGIES: tuple[str, ...] = ("recursive", "sentence", "none")

# A sentence ends at . ! ? (optionally followed by closing quotes/brackets) before whitespace, or at a
# line break; paragraph and line breaks always end a unit so headings and list items stay whole.
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*(?=\s)|\n")

Span = tuple[int, int]


@dataclass(frozen=True)
class Chunk:
    """One chunk of a document; ``start``/``end`` are offsets into the document's ``text`` (end exclusive)."""

    id: str
    document_id: str
    chunk_index: int
    start: int
    end: int
    text: str
    title: str


def chunk_id(document_id: str, chunk_index: int) -> str:
    """The chunk id every hit and chunk-level annotation uses: ``documentId#chunk-N``."""
    return f"{document_id}#chunk-{chunk_index}"


def _strip_span(text: str, start: int, end: int) -> Span | None:
    """The span shrunk to exclude surrounding whitespace, or None when nothing but whitespace is left."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return (start, end) if start < end else None


def _split_keep_separator(text: str, start: int, end: int, separator: str) -> list[Span]:
    """Split ``text[start:end]`` on ``separator``, keeping it at the start of the following piece.

    The pieces tile the range exactly (as LangChain's ``keep_separator=True``); empty pieces are dropped.
    """
    if separator == "":
        return [(i, i + 1) for i in range(start, end)]
    cuts = [start]
    pos = text.find(separator, start, end)
    while pos != -1:
        if pos > cuts[-1]:
            cuts.append(pos)
        pos = text.find(separator, pos + len(separator), end)
    cuts.append(end)
    return [(a, b) for a, b in pairwise(cuts) if b > a]


def _merge_spans(text: str, pieces: Sequence[Span], size: int, overlap: int) -> list[Span]:
    """LangChain's ``_merge_splits`` over contiguous pieces: pack up to ``size``, carry ``overlap`` back."""
    merged: list[Span] = []
    current: list[Span] = []
    total = 0
    for piece in pieces:
        length = piece[1] - piece[0]
        if total + length > size and current:
            stripped = _strip_span(text, current[0][0], current[-1][1])
            if stripped is not None:
                merged.append(stripped)
            while total > overlap or (total + length > size and total > 0):
                total -= current[0][1] - current[0][0]
                current = current[1:]
        current.append(piece)
        total += length
    if current:
        stripped = _strip_span(text, current[0][0], current[-1][1])
        if stripped is not None:
            merged.append(stripped)
    return merged


def _recursive_spans(
    text: str, start: int, end: int, separators: Sequence[str], size: int, overlap: int
) -> list[Span]:
    """Recursive character splitting of ``text[start:end]`` (LangChain's RecursiveCharacterTextSplitter)."""
    separator = separators[-1]
    rest: Sequence[str] = ()
    for i, candidate in enumerate(separators):
        if candidate == "":
            separator = candidate
            break
        if text.find(candidate, start, end) != -1:
            separator = candidate
            rest = separators[i + 1 :]
            break
    spans: list[Span] = []
    good: list[Span] = []
    for piece in _split_keep_separator(text, start, end, separator):
        if piece[1] - piece[0] < size:
            good.append(piece)
            continue
        if good:
            spans.extend(_merge_spans(text, good, size, overlap))
            good = []
        if rest:
            spans.extend(_recursive_spans(text, piece[0], piece[1], rest, size, overlap))
        else:
            stripped = _strip_span(text, *piece)
            if stripped is not None:
                spans.append(stripped)
    if good:
        spans.extend(_merge_spans(text, good, size, overlap))
    return spans


def _sentence_units(text: str) -> list[Span]:
    """Sentences (and lines/paragraphs), stripped, in document order."""
    units: list[Span] = []
    begin = 0
    for match in _SENTENCE_END.finditer(text):
        stripped = _strip_span(text, begin, match.end())
        if stripped is not None:
            units.append(stripped)
        begin = match.end()
    stripped = _strip_span(text, begin, len(text))
    if stripped is not None:
        units.append(stripped)
    return units


def _sentence_spans(text: str, size: int, overlap: int) -> list[Span]:
    """Pack whole sentences up to ``size``; the next chunk repeats trailing sentences within ``overlap``.

    A sentence longer than ``size`` on its own is split recursively (it cannot be kept whole).
    """
    units: list[Span] = []
    for unit in _sentence_units(text):
        if unit[1] - unit[0] > size:
            units.extend(_recursive_spans(text, unit[0], unit[1], RECURSIVE_SEPARATORS, size, overlap))
        else:
            units.append(unit)
    spans: list[Span] = []
    first = 0
    while first < len(units):
        last = first
        while last + 1 < len(units) and units[last + 1][1] - units[first][0] <= size:
            last += 1
        spans.append((units[first][0], units[last][1]))
        if last + 1 >= len(units):
            break
        nxt = last + 1
        while nxt - 1 > first and units[last][1] - units[nxt - 1][0] <= overlap:
            nxt -= 1
        first = nxt
    return spans


def chunk_document(
    document_id: str,
    text: str,
    title: str = "",
    *,
    strategy: str = "recursive",
    size: int = 1000,
    overlap: int = 200,
) -> list[Chunk]:
    """Split one document into chunks; a blank document yields one empty chunk so its title stays findable."""
    if strategy not in STRATEGIES:
        raise RetrievalError(
            f"unknown chunking strategy {strategy!r}",
            field="chunking.strategy",
            hint=f"use one of {', '.join(STRATEGIES)}",
        )
    if strategy != "none" and (size <= 0 or overlap < 0 or overlap >= size):
        raise RetrievalError(
            f"chunk size {size} and overlap {overlap} are inconsistent",
            field="chunking",
            hint="size must be positive and 0 <= overlap < size",
        )
    text = text or ""
    if strategy == "recursive":
        spans = _recursive_spans(text, 0, len(text), RECURSIVE_SEPARATORS, size, overlap)
    elif strategy == "sentence":
        spans = _sentence_spans(text, size, overlap)
    else:
        whole = _strip_span(text, 0, len(text))
        spans = [whole] if whole is not None else []
    if not spans:
        spans = [(0, 0)]
    return [
        Chunk(
            id=chunk_id(document_id, index),
            document_id=document_id,
            chunk_index=index,
            start=start,
            end=end,
            text=text[start:end],
            title=title or "",
        )
        for index, (start, end) in enumerate(spans)
    ]


def _settings_values(settings: ChunkingSettings | Mapping[str, Any] | None) -> tuple[str, int, int]:
    """(strategy, size, overlap) from ChunkingSettings, a mapping, or None (the defaults)."""
    if settings is None:
        return "recursive", 1000, 200
    if isinstance(settings, Mapping):
        return (
            settings.get("strategy", "recursive"),
            int(settings.get("size", 1000)),
            int(settings.get("overlap", 200)),
        )
    return settings.strategy, int(settings.size), int(settings.overlap)


def _rows(corpus: pd.DataFrame) -> Iterable[tuple[str, str, str]]:
    """(doc_id, title, text) triples from a corpus DataFrame (columns ``doc_id, title, text``)."""
    titles = corpus["title"] if "title" in corpus.columns else [""] * len(corpus)
    for doc_id, title, text in zip(corpus["doc_id"], titles, corpus["text"], strict=True):
        yield (
            str(doc_id),
            "" if title is None or title != title else str(title),
            "" if text is None or text != text else str(text),
        )


def chunk_corpus(
    corpus: pd.DataFrame, settings: ChunkingSettings | Mapping[str, Any] | None = None
) -> list[Chunk]:
    """Chunk every document of a corpus DataFrame (``doc_id, title, text``) in row order."""
    strategy, size, overlap = _settings_values(settings)
    chunks: list[Chunk] = []
    for doc_id, title, text in _rows(corpus):
        chunks.extend(chunk_document(doc_id, text, title, strategy=strategy, size=size, overlap=overlap))
    return chunks
