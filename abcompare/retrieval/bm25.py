"""BM25 retrieval with bm25s: build an index over texts once, then score queries (top-depth per query)."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from abcompare.core.errors import RetrievalError
from abcompare.retrieval.settings import BM25Settings


def _tokenizer(settings: BM25Settings) -> Any:
    """A bm25s tokenizer with the configured stemmer and stopwords."""
    from bm25s.tokenization import Tokenizer

    stemmer = None
    if settings.stemmer:
        import Stemmer

        try:
            stemmer = Stemmer.Stemmer(settings.stemmer)
        except KeyError as exc:
            raise RetrievalError(
                f"unknown stemmer language {settings.stemmer!r}",
                field="retrievers.bm25.stemmer",
                hint=f"use one of {', '.join(Stemmer.algorithms())} or null",
            ) from exc
    try:
        return Tokenizer(stemmer=stemmer, stopwords=settings.stopwords or [])
    except ValueError as exc:
        raise RetrievalError(
            f"unknown stopword list {settings.stopwords!r}",
            field="retrievers.bm25.stopwords",
            hint="use a bm25s language code such as 'en', or null",
        ) from exc


@dataclass
class BM25Index:
    """A bm25s index over a fixed list of texts; ``search`` returns (row indices, scores) per query."""

    settings: BM25Settings
    tokenizer: Any
    model: Any
    size: int

    @classmethod
    def build(cls, texts: Sequence[str], settings: BM25Settings) -> BM25Index:
        """Tokenize and index ``texts`` (the row order is the index order)."""
        import bm25s

        tokenizer = _tokenizer(settings)
        tokens = tokenizer.tokenize(list(texts), return_as="string", show_progress=False)
        model = bm25s.BM25(k1=settings.k1, b=settings.b, method=settings.method)
        model.index(tokens, show_progress=False)
        return cls(settings=settings, tokenizer=tokenizer, model=model, size=len(texts))

    def __getstate__(self) -> dict[str, Any]:
        """Picklable (to share an index between processes): the stemmer, a C object, is left out and
        made again from the settings; the vocabulary built while indexing travels."""
        tokenizer = copy.copy(self.tokenizer)
        tokenizer.stemmer = None
        return {**self.__dict__, "tokenizer": tokenizer}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.tokenizer.stemmer = _tokenizer(self.settings).stemmer

    def nbytes(self) -> int:
        """Bytes held by the index's arrays (bm25s keeps its scores as a sparse matrix)."""
        scores = getattr(self.model, "scores", None) or {}
        return int(sum(getattr(value, "nbytes", 0) for value in scores.values()))

    def search(self, queries: Sequence[str], depth: int) -> list[tuple[np.ndarray, np.ndarray]]:
        """Top ``depth`` rows per query, best first; rows with score 0 (no query term) are left out."""
        tokens = self.tokenizer.tokenize(
            list(queries), return_as="string", update_vocab=False, show_progress=False
        )
        k = min(depth, self.size)
        results: list[tuple[np.ndarray, np.ndarray]] = [(np.empty(0, int), np.empty(0))] * len(tokens)
        asked = [i for i, t in enumerate(tokens) if any(t)]
        if not asked or k == 0:
            return results
        rows, scores = self.model.retrieve(
            [[t for t in tokens[i] if t] for i in asked], k=k, show_progress=False
        )
        for i, row, score in zip(asked, rows, scores, strict=True):
            # order by score, then by row so ties are deterministic
            order = np.lexsort((row, -score))
            row, score = row[order], score[order].astype(float)
            keep = score > 0
            results[i] = (row[keep], score[keep])
        return results
