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
    """A bm25s index over a fixed list of texts; ``search`` returns (row indices, scores) per query.

    ``term_counts`` (rows x bm25s's vocabulary ids, sparse) holds each text's analysed term frequencies,
    what pseudo-relevance feedback reads (:mod:`abcompare.retrieval.query_planning`)."""

    settings: BM25Settings
    tokenizer: Any
    model: Any
    size: int
    term_counts: Any = None

    @classmethod
    def build(cls, texts: Sequence[str], settings: BM25Settings) -> BM25Index:
        """Tokenize and index ``texts`` (the row order is the index order)."""
        import bm25s

        tokenizer = _tokenizer(settings)
        tokens = tokenizer.tokenize(list(texts), return_as="string", show_progress=False)
        model = bm25s.BM25(k1=settings.k1, b=settings.b, method=settings.method)
        model.index(tokens, show_progress=False)
        counts = _term_counts(tokens, model.vocab_dict)
        return cls(settings=settings, tokenizer=tokenizer, model=model, size=len(texts), term_counts=counts)

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

    def analyse(self, queries: Sequence[str]) -> list[list[str]]:
        """Each query's terms as the index analysed its texts (same stemmer, stopwords), unknown ones left
        out."""
        tokens = self.tokenizer.tokenize(
            list(queries), return_as="string", update_vocab=False, show_progress=False
        )
        return [[t for t in terms if t] for terms in tokens]

    def term_scores(self, term: str) -> tuple[np.ndarray, np.ndarray]:
        """One term's BM25 contribution: the rows that contain it and its score in each (bm25s's
        precomputed per-term scores)."""
        term_id = self.model.vocab_dict.get(term) if term else None
        if term_id is None:
            return np.empty(0, int), np.empty(0)
        scores = self.model.scores
        start, end = scores["indptr"][term_id], scores["indptr"][term_id + 1]
        return scores["indices"][start:end], scores["data"][start:end].astype(float)

    def weighted_scores(self, weights: dict[str, float]) -> np.ndarray:
        """Every row's score for a weighted query: the sum of weight x BM25(term, row), as Lucene scores
        a boolean query of boosted term queries."""
        total = np.zeros(self.size)
        for term, weight in weights.items():
            rows, values = self.term_scores(term)
            np.add.at(total, rows, weight * values)
        return total

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


def top_rows(scores: np.ndarray, depth: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``depth`` best rows of a score vector, best first, ties by row; rows scoring 0 are left out
    (the order and rule of :meth:`BM25Index.search`)."""
    candidates = np.flatnonzero(scores > 0)
    order = np.lexsort((candidates, -scores[candidates]))[:depth]
    rows = candidates[order]
    return rows, scores[rows].astype(float)


def _term_counts(tokens: Sequence[Sequence[str]], vocabulary: dict[str, int]) -> Any:
    """Term frequencies per text (rows) and vocabulary id (columns), the empty token left out."""
    from scipy.sparse import csr_matrix

    rows, columns = [], []
    for row, terms in enumerate(tokens):
        ids = [vocabulary[t] for t in terms if t and t in vocabulary]
        rows += [row] * len(ids)
        columns += ids
    data = np.ones(len(rows), dtype=np.int32)
    shape = (len(tokens), max(vocabulary.values(), default=-1) + 1)
    matrix = csr_matrix((data, (rows, columns)), shape=shape, dtype=np.int32)
    matrix.sum_duplicates()
    return matrix
