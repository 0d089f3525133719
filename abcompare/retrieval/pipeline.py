"""Run one retrieval variant end to end: chunk, retrieve with each retriever, fuse, rerank, cut to top_k.

Chunks, BM25 indexes and chunk embeddings are memoised in-process by their settings (``RetrievalCache``),
so a treatment that only changes fusion or rerank reuses the control's work; embeddings also persist in
the on-disk cache.
"""

from __future__ import annotations

import hashlib
import time
from collections import Counter, OrderedDict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from abcompare.core.errors import RetrievalError
from abcompare.core.hits import RagHit, stable_key
from abcompare.retrieval.bm25 import BM25Index
from abcompare.retrieval.chunking import Chunk, chunk_corpus
from abcompare.retrieval.dense import DenseEncoder, search
from abcompare.retrieval.embedding_cache import Progress
from abcompare.retrieval.fusion import fuse
from abcompare.retrieval.model_size import variant_model_bytes
from abcompare.retrieval.query_planning import (
    feedback_identity,
    feedback_of,
    fuse_query_texts,
    plan_queries,
    rm3_ranking,
)
from abcompare.retrieval.rerank import make_reranker
from abcompare.retrieval.settings import BM25Settings, ChunkingSettings, DenseSettings, VariantSettings

if TYPE_CHECKING:
    import pandas as pd

    from abcompare.retrieval.rerank import Reranker
    from abcompare.retrieval.settings import QueryPlanningSettings


class RetrievalCache:
    """A small in-process LRU of expensive per-corpus artefacts (chunks, BM25 indexes, chunk embeddings,
    each retriever's hits for the query set).

    One per experiment run lets a treatment reuse what the control (or another sweep point) built;
    ``builds`` counts misses. Each entry remembers how long it took to build, so a variant that reuses
    an artefact is still charged its cost (:class:`RetrievalCost`).
    """

    def __init__(self, max_entries: int = 32) -> None:
        self.max_entries = max_entries
        self._items: OrderedDict[Hashable, tuple[Any, float]] = OrderedDict()
        self.builds = 0

    def get(self, key: Hashable, build: Callable[[], Any]) -> Any:
        """The value memoised under ``key``, built (and counted in ``builds``) on a miss."""
        return self.get_timed(key, build)[0]

    def get_timed(self, key: Hashable, build: Callable[[], Any]) -> tuple[Any, float]:
        """The value memoised under ``key`` and the seconds its build took (when it was built)."""
        if key in self._items:
            self._items.move_to_end(key)
            return self._items[key]
        start = time.perf_counter()
        value = build()
        entry = (value, time.perf_counter() - start)
        self.builds += 1
        self._items[key] = entry
        while len(self._items) > self.max_entries:
            self._items.popitem(last=False)
        return entry

    def clear(self) -> None:
        self._items.clear()


@dataclass
class RetrievalCost:
    """What one variant costs, whoever built the shared parts: the time of its one production pass over the
    queries (``query_seconds``: searching, query encoding, fusion and rerank; the latency people read is
    timed apart, in repeated interleaved rounds: :mod:`abcompare.retrieval.latency`), the time to build
    its index (chunking and BM25), to get its chunk embeddings (encoding, or loading them from the
    embedding cache), how many chunks it embedded and how many of those the model encoded on this run (in
    ``encode_seconds``; the rest came from the cache), and the bytes of its index (BM25 matrices and
    embedding vectors) and of its models' weight files."""

    queries: int = 0
    query_seconds: float = 0.0
    index_seconds: float = 0.0
    embedding_seconds: float = 0.0
    index_bytes: int = 0
    embedded_chunks: int = 0
    encoded_chunks: int = 0
    encode_seconds: float = 0.0
    model_bytes: int = 0
    parts: dict[str, float] = field(default_factory=dict)

    @property
    def seconds_per_query(self) -> float:
        return self.query_seconds / self.queries if self.queries else 0.0

    def as_metrics(self) -> dict[str, float]:
        """The build figures as metrics (``efficiency.*``) for tables and MLflow; the encoding rate only
        when the model encoded something here (cached vectors were never timed)."""
        metrics = {
            "efficiency.index_seconds": self.index_seconds,
            "efficiency.embedding_seconds": self.embedding_seconds,
            "efficiency.index_bytes": float(self.index_bytes),
            "efficiency.model_bytes": float(self.model_bytes),
            "efficiency.embedded_chunks": float(self.embedded_chunks),
            "efficiency.encoded_chunks": float(self.encoded_chunks),
        }
        if self.encoded_chunks:
            rate = 1000 * self.encode_seconds / self.encoded_chunks
            metrics["efficiency.encode_seconds_per_1000_chunks"] = rate
        return metrics


@dataclass(frozen=True)
class EncodedChunks:
    """A corpus's chunk vectors and how they were had: ``encoded`` of them by the model, in ``seconds``
    (the rest read from the embedding cache)."""

    vectors: np.ndarray
    encoded: int
    seconds: float


def encode_chunks(encoder: DenseEncoder, texts: list[str], progress: Progress | None = None) -> EncodedChunks:
    """The chunk texts' vectors through the embedding cache, counting what the model itself encoded."""
    before = encoder.encoded
    start = time.perf_counter()
    vectors = encoder.encode(texts, progress=progress)
    return EncodedChunks(vectors, encoder.encoded - before, time.perf_counter() - start)


DEFAULT_CACHE = RetrievalCache()


def corpus_fingerprint(corpus: pd.DataFrame) -> str:
    """sha256 over (doc_id, title, text) of every row, in order."""
    digest = hashlib.sha256()
    titles = corpus["title"] if "title" in corpus.columns else [""] * len(corpus)
    for doc_id, title, text in zip(corpus["doc_id"], titles, corpus["text"], strict=True):
        for value in (doc_id, title, text):
            digest.update(str("" if value is None else value).encode("utf-8"))
            digest.update(b"\x00")
    return digest.hexdigest()


def indexed_text(chunk: Chunk) -> str:
    """What BM25 and dense models index for a chunk: ``title + "\\n" + chunk text``."""
    return f"{chunk.title}\n{chunk.text}"


def _check_columns(frame: object, name: str, required: tuple[str, ...]) -> None:
    missing = [c for c in required if c not in getattr(frame, "columns", ())]
    if missing:
        raise RetrievalError(
            f"the {name} table lacks column(s) {', '.join(missing)}",
            field=name,
            hint=f"a {name} table has columns {', '.join(required)}",
        )


Ranking = list[tuple[np.ndarray, np.ndarray]]
"""One retriever's answer for every query, in query order: (rows into the chunk list, scores), best first.
Compact on purpose: it is what travels between processes when a variant runs elsewhere."""


def chunks_key(fingerprint: str, chunking: ChunkingSettings) -> tuple[str, str]:
    """What identifies a chunk list: the corpus fingerprint (:func:`corpus_fingerprint`) and the chunking."""
    return fingerprint, chunking.model_dump_json()


def queries_key(query_texts: Sequence[str]) -> str:
    """What identifies the query set a ranking answers."""
    return hashlib.sha256("\x00".join(query_texts).encode("utf-8")).hexdigest()


def query_table(queries: pd.DataFrame) -> tuple[list[str], list[str]]:
    """Query ids and texts in order (a missing text is the empty string)."""
    query_ids = [str(q) for q in queries["query_id"]]
    query_texts = ["" if t is None or t != t else str(t) for t in queries["text"]]
    return query_ids, query_texts


def bm25_index_key(chunks_id: Hashable, settings: BM25Settings) -> tuple:
    return ("bm25", chunks_id, settings.model_dump_json(exclude={"type"}))


def build_bm25_index(chunks: list[Chunk], settings: BM25Settings) -> BM25Index:
    """The BM25 index over the chunks' indexed texts (row i is chunk i)."""
    return BM25Index.build([indexed_text(c) for c in chunks], settings)


def document_texts(chunks: list[Chunk], settings: DenseSettings) -> list[str]:
    """What a dense model encodes for each chunk: the document prefix and the indexed text."""
    return [settings.document_prefix + indexed_text(c) for c in chunks]


def query_texts_for(settings: DenseSettings, query_texts: Sequence[str]) -> list[str]:
    """What a dense model encodes for each query: the query prefix and the text."""
    return [settings.query_prefix + q for q in query_texts]


def dense_encoder(settings: DenseSettings, cache_dir: Path) -> DenseEncoder:
    """The encoder (and embedding cache) a dense retriever uses."""
    return DenseEncoder(
        settings.model,
        cache_dir,
        batch_size=settings.batch_size,
        max_seq_length=settings.max_seq_length,
        backend=settings.backend,
    )


def dense_vectors_key(chunks_id: Hashable, encoder: DenseEncoder, settings: DenseSettings, cache_dir: Path):
    return ("dense", chunks_id, encoder.cache.model_key, settings.document_prefix, str(cache_dir))


def ranking_key(
    name: str, settings: BM25Settings | DenseSettings, chunks_id: Hashable, depth: int, queries_id: str,
    cache_dir: Path, feedback: QueryPlanningSettings | None = None,
) -> tuple:  # fmt: skip
    """What identifies one retriever's ranking of the query set (sweep points that share it, share it);
    ``feedback`` is the variant's RM3 settings, which change its BM25 rankings."""
    if isinstance(settings, BM25Settings):
        key = ("bm25-hits", name, chunks_id, settings.model_dump_json(), depth, queries_id)
        return key if feedback is None else (*key, feedback_identity(feedback))
    return ("dense-hits", name, chunks_id, settings.model_dump_json(), depth, str(cache_dir), queries_id)


def bm25_ranking(
    index: BM25Index, query_texts: Sequence[str], depth: int, feedback: QueryPlanningSettings | None = None
) -> Ranking:
    """Top ``depth`` chunk rows per query by BM25; with ``feedback`` (RM3 settings), by the expanded query."""
    if feedback is not None:
        return rm3_ranking(index, query_texts, depth, feedback)
    return index.search(query_texts, depth)


def dense_ranking(query_vectors: np.ndarray, doc_vectors: np.ndarray, depth: int) -> Ranking:
    """Top ``depth`` chunk rows per query by inner product of normalised vectors."""
    return search(query_vectors, doc_vectors, depth)


def _hits(chunks: list[Chunk], rows: np.ndarray, scores: np.ndarray, source: str) -> list[RagHit]:
    hits = []
    for rank, (row, score) in enumerate(zip(rows, scores, strict=True), start=1):
        chunk = chunks[int(row)]
        hits.append(
            RagHit(
                id=chunk.id,
                document_id=chunk.document_id,
                chunk_index=chunk.chunk_index,
                content=chunk.text,
                score=float(score),
                rank=rank,
                retriever_source=source,
                retrieval_score=float(score),
                metadata={"start": chunk.start, "end": chunk.end, "title": chunk.title},
            )
        )
    return hits


def ranked_hits(chunks: list[Chunk], ranking: Ranking, source: str) -> list[list[RagHit]]:
    """A ranking as hit lists (one per query) carrying the chunks' fields and ``retriever_source``."""
    return [_hits(chunks, rows, scores, source) for rows, scores in ranking]


def _retrieve(
    name: str,
    settings: BM25Settings | DenseSettings,
    chunks: list[Chunk],
    chunks_id: Hashable,
    query_texts: list[str],
    depth: int,
    cache_dir: Path,
    progress: Progress | None,
    memo: RetrievalCache,
    cost: RetrievalCost,
    feedback: QueryPlanningSettings | None = None,
) -> list[list[RagHit]]:
    """One retriever's ranked hits for every query (memoised: sweep points that share the retriever
    share its hits), charging its index, embeddings and search time to ``cost``."""
    key = ranking_key(name, settings, chunks_id, depth, queries_key(query_texts), cache_dir, feedback)
    if isinstance(settings, BM25Settings):
        index, built = memo.get_timed(
            bm25_index_key(chunks_id, settings), lambda: build_bm25_index(chunks, settings)
        )
        cost.index_seconds += built
        cost.index_bytes += index.nbytes()

        def search_all() -> list[list[RagHit]]:
            return ranked_hits(chunks, bm25_ranking(index, query_texts, depth, feedback), name)

    else:
        encoder = dense_encoder(settings, cache_dir)
        encoded, built = memo.get_timed(
            dense_vectors_key(chunks_id, encoder, settings, cache_dir),
            lambda: encode_chunks(encoder, document_texts(chunks, settings), progress),
        )
        doc_vectors = encoded.vectors
        cost.embedding_seconds += built
        cost.index_bytes += int(doc_vectors.nbytes)
        cost.embedded_chunks += len(chunks)
        cost.encoded_chunks += encoded.encoded
        cost.encode_seconds += encoded.seconds

        def search_all() -> list[list[RagHit]]:
            query_vectors = encoder.encode(query_texts_for(settings, query_texts), progress=progress)
            return ranked_hits(chunks, dense_ranking(query_vectors, doc_vectors, depth), name)

    hits, seconds = memo.get_timed(key, search_all)
    cost.query_seconds += seconds
    cost.parts[name] = seconds
    return hits


def finish_variant(
    variant: VariantSettings,
    per_retriever: Sequence[Sequence[list[RagHit]]],
    query_ids: Sequence[str],
    query_texts: Sequence[str],
    cache_dir: Path,
    progress: Progress | None = None,
    reranker: Reranker | None = None,
) -> dict[str, list[RagHit]]:
    """Fuse each query's lists (one per retriever, in the variant's order), rerank, cut to ``top_k``
    (``reranker``: one made already, else the variant's rerank is made here).

    With query planning, ``per_retriever`` answers the planned texts (:func:`plan_queries`): each text's
    lists are fused as above, then the question's texts are fused (``query_planning.fusion``)."""
    plan = plan_queries(variant.query_planning, query_ids, query_texts)
    if reranker is None and variant.rerank is not None:
        reranker = make_reranker(variant.rerank, cache_dir)
    fusion = variant.fusion
    weights = (
        [(fusion.weights or {}).get(name, 1.0) for name in variant.retrievers] if fusion is not None else None
    )
    cut = first_documents if variant.counts_documents else _first_hits
    results: dict[str, list[RagHit]] = {}
    for i, (query_id, text) in enumerate(zip(query_ids, query_texts, strict=True)):
        per_text = []
        for row in plan.groups[i]:
            lists = [cut(hits[row], variant.depth) for hits in per_retriever]
            if len(lists) == 1 and fusion is None:
                per_text.append(lists[0])
            else:
                assert fusion is not None  # guaranteed by VariantSettings for 2+ retrievers
                per_text.append(fuse(lists, method=fusion.method, k=fusion.k, weights=weights))
        if len(per_text) == 1:  # one text: no planning, or a question without variants
            (ranked,) = per_text
        else:
            assert variant.query_planning is not None
            roles = [plan.roles[row] for row in plan.groups[i]]
            ranked = fuse_query_texts(variant.query_planning, per_text, roles)
        if reranker is not None:
            ranked = reranker.rerank(text, cut(ranked, variant.rerank.top_n))
        results[query_id] = cut(ranked, variant.top_k)
        if progress is not None:
            progress(i + 1, len(query_ids))
    return results


def _first_hits(hits: Sequence[RagHit], n: int) -> list[RagHit]:
    """The first ``n`` hits."""
    return list(hits[:n])


def first_documents(hits: Sequence[RagHit], n: int) -> list[RagHit]:
    """The hits of the first ``n`` documents of a ranked list: every hit before the first hit of the
    ``n+1``-th distinct document. Judged as documents (each document at its best-ranked hit, as
    ``data.levels.collapse_to_documents`` judges them), the list holds ``n`` documents, as trec_eval
    would count the collapsed run, however many chunks of one document came first."""
    seen: set[str] = set()
    for position, hit in enumerate(hits):
        document = hit.document_id or stable_key(hit, position).split("#", 1)[0]
        if document not in seen:
            if len(seen) == n:
                return list(hits[:position])
            seen.add(document)
    return list(hits)


def fetch_depth(variant: VariantSettings, chunks: Sequence[Chunk]) -> int:
    """How many chunk hits each retriever returns a query: ``depth``, or when the variant counts
    documents enough to hold ``depth`` documents whichever chunks come first (``depth`` times the most
    chunks of one document, at most every chunk); :func:`finish_variant` then keeps the first ``depth``."""
    if not variant.counts_documents or not chunks:
        return variant.depth
    most = max(Counter(chunk.document_id for chunk in chunks).values())
    return min(len(chunks), variant.depth * most)


def check_inputs(variant: VariantSettings, corpus: pd.DataFrame, queries: pd.DataFrame) -> None:
    """A retrieval variant needs a corpus and a query table with the documented columns."""
    if variant.run is not None:
        raise RetrievalError(
            "this variant is a precomputed run file, not a retrieval pipeline",
            field="run",
            hint="load it with abcompare.data (the runner does this) instead of run_variant",
        )
    _check_columns(corpus, "corpus", ("doc_id", "text"))
    _check_columns(queries, "queries", ("query_id", "text"))


def check_chunks(chunks: list[Chunk]) -> None:
    """A corpus that chunks into nothing is an error, not an empty run."""
    if not chunks:
        raise RetrievalError(
            "the corpus has no documents", field="corpus", hint="check the dataset's corpus file"
        )


def run_variant(
    variant: VariantSettings,
    corpus: pd.DataFrame,
    queries: pd.DataFrame,
    *,
    cache_dir: Path,
    progress: Progress | None = None,
    cache: RetrievalCache | None = None,
) -> dict[str, list[RagHit]]:
    """Ranked hits (best first, at most ``top_k``) per query id: :func:`run_variant_with_cost` without the
    cost."""
    hits, _ = run_variant_with_cost(
        variant, corpus, queries, cache_dir=cache_dir, progress=progress, cache=cache
    )
    return hits


def run_variant_with_cost(
    variant: VariantSettings,
    corpus: pd.DataFrame,
    queries: pd.DataFrame,
    *,
    cache_dir: Path,
    progress: Progress | None = None,
    cache: RetrievalCache | None = None,
) -> tuple[dict[str, list[RagHit]], RetrievalCost]:
    """Ranked hits (best first, at most ``top_k``) per query id, in the queries' order, and the variant's
    :class:`RetrievalCost`.

    ``corpus`` has columns ``doc_id, title, text``; ``queries`` ``query_id, text``. ``progress`` is called
    as ``progress(completed, total)``: over the texts being encoded, then over the queries. ``cache``
    memoises chunks, BM25 indexes and chunk embeddings across variants (default: a module-level one).
    With a rerank stage the list is the reranked top ``rerank.top_n`` (one score scale throughout).
    """
    check_inputs(variant, corpus, queries)
    memo = cache if cache is not None else DEFAULT_CACHE
    cost = RetrievalCost(queries=len(queries), model_bytes=variant_model_bytes(variant))
    chunks_id = chunks_key(corpus_fingerprint(corpus), variant.chunking)
    chunks, built = memo.get_timed(("chunks", chunks_id), lambda: chunk_corpus(corpus, variant.chunking))
    cost.index_seconds += built
    check_chunks(chunks)
    query_ids, query_texts = query_table(queries)
    planned = plan_queries(variant.query_planning, query_ids, query_texts).texts
    per_retriever = [
        _retrieve(name, spec, chunks, chunks_id, planned, fetch_depth(variant, chunks), cache_dir, progress,
                  memo, cost, feedback_of(variant))
        for name, spec in variant.retrievers.items()
    ]  # fmt: skip
    start = time.perf_counter()
    results = finish_variant(variant, per_retriever, query_ids, query_texts, cache_dir, progress)
    cost.query_seconds += time.perf_counter() - start  # fusion and rerank, per query
    return results, cost
