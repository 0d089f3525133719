"""Rerank stage: rescore a query's top hits with a second model (cross-encoder or bi-encoder).

A reranker returns the hits best first with ``rerank_score`` (and ``score``) set and ranks renumbered.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from abcompare.core.errors import RetrievalError
from abcompare.core.hits import RagHit
from abcompare.retrieval.dense import DenseEncoder, locate_model
from abcompare.retrieval.embedding_cache import default_cache_dir
from abcompare.retrieval.models import LOADED_MODELS, torch_model
from abcompare.retrieval.settings import RerankSettings


class Reranker(Protocol):
    """Anything that can rescore one query's hits."""

    def rerank(self, query: str, hits: list[RagHit]) -> list[RagHit]:
        """The same hits, best first by the new score, with ``rerank_score`` set."""
        ...


def passage(hit: RagHit) -> str:
    """The text a reranker reads for a hit: ``title + "\\n" + content`` (as indexed)."""
    title = (hit.metadata or {}).get("title") or ""
    return f"{title}\n{hit.content or ''}"


def order_by(hits: Sequence[RagHit], scores: Sequence[float]) -> list[RagHit]:
    """Hits sorted by ``scores`` (descending, ties keep input order) with rerank_score, score and rank set."""
    order = sorted(range(len(hits)), key=lambda i: -float(scores[i]))
    return [
        hits[i].model_copy(update={"rerank_score": float(scores[i]), "score": float(scores[i]), "rank": rank})
        for rank, i in enumerate(order, start=1)
    ]


def cross_encoder_key(name: str) -> tuple:
    """What identifies a loaded cross-encoder in ``LOADED_MODELS``: its folder's weights and declaration."""
    try:
        resolved = locate_model(name)
        return ("cross-encoder", torch_model(name, Path(resolved)).identity(), resolved)
    except RetrievalError as error:
        raise RetrievalError(error.message, field="rerank.model", hint=error.hint) from None


def load_cross_encoder(name: str) -> Any:
    """A sentence_transformers.CrossEncoder on CPU, loaded with no network from the folder
    ``locate_model`` finds; one per process and model identity (``LOADED_MODELS``)."""
    key = cross_encoder_key(name)
    return LOADED_MODELS.get(key, lambda: _cross_encoder(name, key[2]), label=name)


def _cross_encoder(name: str, resolved: str) -> Any:
    from sentence_transformers import CrossEncoder

    try:
        return CrossEncoder(resolved, device="cpu", local_files_only=True)
    except Exception as exc:  # any loading failure is a configuration problem the user can fix
        raise RetrievalError(
            f"cannot load cross-encoder {name!r}: {type(exc).__name__}: {exc}".splitlines()[0],
            field="rerank.model",
            hint="give a local cross-encoder folder or one already in the Hugging Face cache "
            "(there is no network here), or use rerank.type: bi-encoder",
        ) from exc


class CrossEncoderReranker:
    """Scores (query, passage) pairs with a sentence-transformers CrossEncoder."""

    def __init__(self, model: str, *, batch_size: int = 32) -> None:
        self.model = model
        self.batch_size = batch_size

    def rerank(self, query: str, hits: list[RagHit]) -> list[RagHit]:
        """The hits reordered by cross-encoder score."""
        if not hits:
            return []
        encoder = load_cross_encoder(self.model)
        scores = encoder.predict(
            [(query, passage(h)) for h in hits], batch_size=self.batch_size, show_progress_bar=False
        )
        scores = np.asarray(scores, dtype=float)
        if scores.ndim > 1:  # a multi-label head: take the last label as "relevant"
            scores = scores[:, -1]
        return order_by(hits, scores)


class BiEncoderReranker:
    """Scores hits by cosine between query and passage embeddings of a dense model (any model and backend a
    dense retriever takes; the passages' vectors share the embedding cache with its chunk vectors).

    ``served``: the query is encoded by the model at each call, as serving does (what the latency timing
    pass times), not read from the embedding cache; the passages' vectors are index-side work either way
    (read from the cache once encoded)."""

    def __init__(
        self, model: str, *, batch_size: int = 32, cache_dir: Path | None = None, backend: str | None = None,
        served: bool = False,
    ) -> None:  # fmt: skip
        self.encoder = DenseEncoder(
            model, cache_dir or default_cache_dir(), batch_size=batch_size, backend=backend
        )
        self.served = served

    def rerank(self, query: str, hits: list[RagHit]) -> list[RagHit]:
        """The hits reordered by cosine similarity to the query."""
        if not hits:
            return []
        encode = self.encoder.encode_now if self.served else self.encoder.encode
        query_vector = encode([query])[0]
        passages = self.encoder.encode([passage(h) for h in hits])
        return order_by(hits, passages @ query_vector)


def make_reranker(
    settings: RerankSettings, cache_dir: Path | None = None, *, served: bool = False
) -> Reranker:
    """The reranker a variant's ``rerank`` section asks for (``served``: each query encoded by the model as
    it comes, for the latency timing pass: :class:`BiEncoderReranker`)."""
    if settings.type == "bi-encoder":
        return BiEncoderReranker(
            settings.model, batch_size=settings.batch_size, cache_dir=cache_dir, backend=settings.backend,
            served=served,
        )  # fmt: skip
    return CrossEncoderReranker(settings.model, batch_size=settings.batch_size)
