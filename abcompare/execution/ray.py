"""The Ray executor: each variant's retrieval as Ray tasks over shared inputs, collected in config order.

The driver chunks the corpus once per chunking and encodes what the embedding cache lacks through the
Ray Data pipeline (:mod:`abcompare.execution.ray_encoding`); chunks, embeddings, BM25 indexes and each
retriever's ranking are built once and shared through the object store by reference. A variant's task
then only fuses, reranks and cuts (the same :mod:`abcompare.retrieval.pipeline` functions the local
path calls) and returns its run table. Tasks are submitted together and run while the driver judges and
logs the variants already back. Runs given instead of retrieved are produced in the driver, where the
files and the callables are: a run file is read there, and a Python retriever handed over is called there
(never pickled into a task: it may hold a client, a connection or a GPU model of its own).
"""

from __future__ import annotations

import hashlib
import time
from collections import OrderedDict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import ray

from abcompare.core.errors import AbcompareError, WorkerLostError
from abcompare.core.progress import Reporter
from abcompare.data.runs import run_frame_from_hits
from abcompare.execution.base import Retriever, VariantRun, given_run, require_corpus, time_driver_side
from abcompare.execution.ray_encoding import encode_on_ray, first_line
from abcompare.execution.ray_evaluation import evaluation_blocks, per_query_metrics_on_ray
from abcompare.retrieval import pipeline
from abcompare.retrieval.embedding_cache import text_hash
from abcompare.retrieval.model_size import variant_model_bytes
from abcompare.retrieval.settings import BM25Settings, VariantSettings

if TYPE_CHECKING:
    from collections.abc import Hashable

    import numpy as np
    import pandas as pd

    from abcompare.config.models import ExecutionSettings
    from abcompare.data.dataset import Dataset
    from abcompare.execution.ray_session import RaySession
    from abcompare.retrieval.bm25 import BM25Index
    from abcompare.retrieval.latency import TimingPass, TimingPlan
    from abcompare.retrieval.settings import QueryPlanningSettings


# ------------------------------------------------------------------------------------------ tasks
@ray.remote
def _build_bm25(chunks: list, settings: BM25Settings) -> tuple[Any, float, int]:
    start = time.perf_counter()
    index = pipeline.build_bm25_index(chunks, settings)
    return index, time.perf_counter() - start, index.nbytes()


@ray.remote
def _bm25_ranking(
    index: BM25Index, query_texts: list[str], depth: int, feedback: QueryPlanningSettings | None = None
) -> tuple[pipeline.Ranking, float]:
    start = time.perf_counter()
    ranking = pipeline.bm25_ranking(index, query_texts, depth, feedback)
    return ranking, time.perf_counter() - start


@ray.remote
def _dense_ranking(
    query_vectors: np.ndarray, doc_vectors: np.ndarray, depth: int
) -> tuple[pipeline.Ranking, float]:
    start = time.perf_counter()
    ranking = pipeline.dense_ranking(query_vectors, doc_vectors, depth)
    return ranking, time.perf_counter() - start


_HITS: OrderedDict[str, list] = OrderedDict()  # a worker's hit lists by ranking id (sweeps share them)


def _ranked_hits(ranking_id: str, chunks: list, ranking: pipeline.Ranking, name: str) -> list:
    """The ranking as hit lists, made once per worker process and ranking (as the local memo does)."""
    if ranking_id not in _HITS:
        _HITS[ranking_id] = pipeline.ranked_hits(chunks, ranking, name)
        while len(_HITS) > 8:
            _HITS.popitem(last=False)
    _HITS.move_to_end(ranking_id)
    return _HITS[ranking_id]


@ray.remote
def _finish_variant(
    variant: VariantSettings,
    chunks: list,
    query_ids: list[str],
    query_texts: list[str],
    cache_dir: str,
    names: list[str],
    ranking_ids: list[str],
    *rankings: pipeline.Ranking,
) -> tuple[Any, float]:
    """Hit lists from the rankings, fused, reranked and cut; the run table and the seconds it took."""
    start = time.perf_counter()
    per_retriever = [
        _ranked_hits(ranking_id, chunks, ranking, name)
        for name, ranking_id, ranking in zip(names, ranking_ids, rankings, strict=True)
    ]
    hits = pipeline.finish_variant(variant, per_retriever, query_ids, query_texts, Path(cache_dir))
    seconds = time.perf_counter() - start
    return run_frame_from_hits(hits), seconds


def _ranking_id(key: Hashable) -> str:
    return hashlib.sha256(repr(key).encode()).hexdigest()[:32]


# ------------------------------------------------------------------------------------------ the plan
@dataclass
class _Shared:
    """One shared input in the object store, and what building it cost (seconds may still be a ref)."""

    ref: Any
    seconds: Any = 0.0
    nbytes: Any = 0
    embedded: int = 0  # chunk vectors: how many, how many the model encoded on this run, in what time
    encoded: int = 0
    encode_seconds: float = 0.0


@dataclass
class _Pending:
    """A submitted variant: its task and the shared inputs whose cost it is charged."""

    result: Any
    queries: int
    model_bytes: int = 0
    index: list[_Shared] = field(default_factory=list)
    embeddings: list[_Shared] = field(default_factory=list)
    rankings: dict[str, _Shared] = field(default_factory=dict)


@dataclass
class _EncodeRequest:
    key: Any
    encoder: Any
    texts: list[str]
    hashes: list[str] = field(default_factory=list)
    encoded: int = 0


@dataclass(frozen=True)
class _Submitted:
    """What one submission shares between variants, by key: chunk lists, BM25 indexes, rankings, vectors."""

    chunk_lists: dict[Any, tuple[list, _Shared]]
    indexes: dict[Any, _Shared]
    rankings: dict[Any, _Shared]
    vectors: dict[Any, _Shared]


class RayExecutor:
    """Produces the variants on Ray (see the module docstring); the driver keeps the one cache writer."""

    name = "ray"

    def __init__(
        self, settings: ExecutionSettings, session: RaySession, reporter: Reporter | None = None
    ) -> None:
        self.settings = settings
        self.session = session
        self.reporter = reporter or Reporter()
        self._in_flight = 0  # comparisons (collections) submitted whose retrieval is not all collected yet

    def _options(self) -> dict[str, Any]:
        return {"max_retries": self.settings.retries, "retry_exceptions": False}

    def variant_runs(
        self,
        variants: Mapping[str, VariantSettings],
        dataset: Dataset,
        cache_dir: Path,
        retrievers: Mapping[str, Retriever] | None = None,
        *,
        given: Mapping[str, pd.DataFrame] | None = None,
    ) -> Iterator[VariantRun]:
        """Submits every retrieved variant's tasks now (not at the first ``next``), so a comparison across
        several collections has all of them in flight before the first is collected; the session is
        released once the last variant of the last comparison submitted is back."""
        retrieval = {name: v for name, v in variants.items() if v.run is None}
        pending = self._submit(retrieval, dataset, cache_dir) if retrieval else {}
        self._in_flight += bool(pending)
        return self._collected(variants, pending, dataset, retrievers, given)

    def _collected(
        self,
        variants: Mapping[str, VariantSettings],
        pending: dict[str, _Pending],
        dataset: Dataset,
        retrievers: Mapping[str, Retriever] | None,
        given: Mapping[str, pd.DataFrame] | None = None,
    ) -> Iterator[VariantRun]:
        last = list(pending)[-1] if pending else None
        for name, variant in variants.items():
            if variant.run is not None:  # a run file, or a Python retriever: in the driver, never pickled
                yield given_run(name, variant, dataset, retrievers, given)
                continue
            produced = self._collect(name, pending.pop(name))  # its object refs go with it
            if name == last:
                self._in_flight -= 1
                if not self._in_flight:
                    self.session.release()  # nothing more for Ray: it stops while the driver logs
            yield produced

    def per_query_metrics(
        self, run: pd.DataFrame, annotations: pd.DataFrame, query_ids: Sequence[str], **options: object
    ) -> pd.DataFrame:
        """The evaluation stage by blocks of queries as Ray tasks for a run of millions of hits (the
        driver's table, bit for bit: :mod:`abcompare.execution.ray_evaluation`); in the driver for a
        smaller run, or once the session is released (Ray is stopping)."""
        blocks = 1 if self.session.released else evaluation_blocks(len(run), self.session.cpus)
        return per_query_metrics_on_ray(run, annotations, query_ids, blocks=blocks, **options)  # type: ignore[arg-type]

    def time_queries(
        self, variants: Mapping[str, VariantSettings], dataset: Dataset, cache_dir: Path, plan: TimingPlan
    ) -> TimingPass:
        """The timing pass in the driver, not on Ray: one process times every variant (a task's time
        depends on its node and on what else Ray ran beside it). The driver builds the indexes it needs
        (untimed) and reads the chunk vectors from the embedding cache the run filled."""
        return time_driver_side(variants, dataset, cache_dir, plan, pipeline.RetrievalCache(), self.reporter)

    # -------------------------------------------------------------------------------------- submit
    def _submit(
        self, variants: Mapping[str, VariantSettings], dataset: Dataset, cache_dir: Path
    ) -> dict[str, _Pending]:
        corpus, queries = dataset.corpus, dataset.queries
        for name, variant in variants.items():
            require_corpus(name, dataset)
            pipeline.check_inputs(variant, corpus, queries)
        fingerprint = pipeline.corpus_fingerprint(corpus)
        query_ids, query_texts = pipeline.query_table(queries)
        ids_ref, texts_ref = ray.put(query_ids), ray.put(query_texts)
        planned_refs: dict[str, Any] = {}  # each variant's planned query texts, once per distinct list

        chunk_lists: dict[Any, tuple[list, _Shared]] = {}
        indexes: dict[Any, _Shared] = {}
        rankings: dict[Any, _Shared] = {}
        requests: dict[Any, _EncodeRequest] = {}  # doc and query texts to embed, in the local path's order
        searches: dict[Any, tuple[Any, int]] = {}  # dense ranking -> (its document vectors, depth)
        plan: list[tuple[str, VariantSettings, Any, list[tuple[str, Any, Any]]]] = []
        for name, variant in variants.items():
            chunks_id = pipeline.chunks_key(fingerprint, variant.chunking)
            if chunks_id not in chunk_lists:
                start = time.perf_counter()
                chunks = pipeline.chunk_corpus(corpus, variant.chunking)
                pipeline.check_chunks(chunks)
                chunk_lists[chunks_id] = (chunks, _Shared(ray.put(chunks), time.perf_counter() - start))
            chunks, _ = chunk_lists[chunks_id]
            planned = pipeline.plan_queries(variant.query_planning, query_ids, query_texts).texts
            queries_id = pipeline.queries_key(planned)
            if queries_id not in planned_refs:
                planned_refs[queries_id] = texts_ref if planned == query_texts else ray.put(planned)
            feedback = pipeline.feedback_of(variant)
            depth = pipeline.fetch_depth(variant, chunks)
            steps = []
            for retriever, spec in variant.retrievers.items():
                key = pipeline.ranking_key(retriever, spec, chunks_id, depth, queries_id, cache_dir, feedback)
                if isinstance(spec, BM25Settings):
                    index_key = pipeline.bm25_index_key(chunks_id, spec)
                    if index_key not in indexes:
                        index, seconds, nbytes = _build_bm25.options(num_returns=3, **self._options()).remote(
                            chunk_lists[chunks_id][1].ref, spec
                        )
                        indexes[index_key] = _Shared(index, seconds, nbytes)
                    if key not in rankings:
                        ranking, seconds = _bm25_ranking.options(num_returns=2, **self._options()).remote(
                            indexes[index_key].ref, planned_refs[queries_id], depth, feedback
                        )
                        rankings[key] = _Shared(ranking, seconds)
                    steps.append((retriever, key, index_key))
                else:
                    encoder = pipeline.dense_encoder(spec, cache_dir)
                    vectors_key = pipeline.dense_vectors_key(chunks_id, encoder, spec, cache_dir)
                    if vectors_key not in requests:
                        texts = pipeline.document_texts(chunks, spec)
                        requests[vectors_key] = _EncodeRequest(vectors_key, encoder, texts)
                    if key not in rankings and key not in requests:
                        texts = pipeline.query_texts_for(spec, planned)
                        requests[key] = _EncodeRequest(key, encoder, texts)
                        searches[key] = (vectors_key, depth)
                    steps.append((retriever, key, vectors_key))
            plan.append((name, variant, chunks_id, steps))

        vectors = self._embed(list(requests.values()))
        self._search(searches, vectors, rankings)
        shared = _Submitted(chunk_lists, indexes, rankings, vectors)
        return self._finish(plan, shared, ids_ref, texts_ref, cache_dir, len(query_ids))

    def _search(
        self,
        searches: Mapping[Any, tuple[Any, int]],
        vectors: Mapping[Any, _Shared],
        rankings: dict[Any, _Shared],
    ) -> None:
        """Each dense ranking submitted, from its query and document vectors (into ``rankings``)."""
        for key, (vectors_key, depth) in searches.items():
            query_vectors = vectors[key]  # query encoding is part of a dense search's time, as locally
            ranking, seconds = _dense_ranking.options(num_returns=2, **self._options()).remote(
                query_vectors.ref, vectors[vectors_key].ref, depth
            )
            rankings[key] = _Shared(ranking, [seconds, query_vectors.seconds])

    def _finish(
        self, plan: list[tuple[str, VariantSettings, Any, list[tuple[str, Any, Any]]]], shared: _Submitted,
        ids_ref: ray.ObjectRef, texts_ref: ray.ObjectRef, cache_dir: Path, n_queries: int,
    ) -> dict[str, _Pending]:  # fmt: skip
        """Each variant's last task (fuse, rerank, cut) submitted on its rankings, with what it is charged."""
        pending: dict[str, _Pending] = {}
        for name, variant, chunks_id, steps in plan:
            chunks_ref = shared.chunk_lists[chunks_id][1]
            names = [retriever for retriever, _, _ in steps]
            ranking_ids = [_ranking_id(key) for _, key, _ in steps]
            result = _finish_variant.options(num_returns=1, **self._options()).remote(
                variant, chunks_ref.ref, ids_ref, texts_ref, str(cache_dir), names, ranking_ids,
                *[shared.rankings[key].ref for _, key, _ in steps],
            )  # fmt: skip
            entry = _Pending(result, n_queries, variant_model_bytes(variant), index=[chunks_ref])
            for retriever, key, built in steps:
                if built in shared.indexes:
                    entry.index.append(shared.indexes[built])
                else:
                    entry.embeddings.append(shared.vectors[built])
                entry.rankings[retriever] = shared.rankings[key]
            pending[name] = entry
        return pending

    def _embed(self, requests: list[_EncodeRequest]) -> dict[Any, _Shared]:
        """Every request's vectors in the object store and the seconds charged to it: what the cache lacks
        is encoded on Ray in the blocks the local path would encode, then everything is read back."""
        pending: dict[str, set[str]] = {}
        blocks: dict[str, list[tuple[list[str], list[str]]]] = {}
        encoders: dict[str, Any] = {}
        for request in requests:
            model = request.encoder.cache.model_key
            cache = request.encoder.cache
            found = cache.missing_blocks(request.texts, pending=pending.setdefault(model, set()))
            request.encoded = sum(len(h) for h, _ in found)
            blocks.setdefault(model, []).extend(found)
            encoders.setdefault(model, request.encoder)
        seconds: dict[str, float] = {}
        for model, model_blocks in blocks.items():
            if not model_blocks:
                continue
            start = time.perf_counter()
            total = sum(len(h) for h, _ in model_blocks)
            with self.reporter.progress(f"encoding {total} texts on Ray", total=total) as advance:
                encode_on_ray(encoders[model], model_blocks, self.settings, self.session, advance)
            seconds[model] = time.perf_counter() - start
        encoded = {m: sum(len(h) for h, _ in b) for m, b in blocks.items()}
        out: dict[Any, _Shared] = {}
        for request in requests:
            model = request.encoder.cache.model_key
            start = time.perf_counter()
            matrix = request.encoder.cache.get([text_hash(t) for t in request.texts])
            cost = time.perf_counter() - start
            share = seconds[model] * request.encoded / encoded[model] if request.encoded else 0.0
            out[request.key] = _Shared(
                ray.put(matrix), cost + share, int(matrix.nbytes), len(request.texts), request.encoded, share
            )
        return out

    # -------------------------------------------------------------------------------------- collect
    def _collect(self, name: str, entry: _Pending) -> VariantRun:
        run, finish_seconds = self._get(entry.result, name)
        cost = pipeline.RetrievalCost(queries=entry.queries, model_bytes=entry.model_bytes)
        cost.index_seconds = sum(self._value(s.seconds, name) for s in entry.index)
        cost.index_bytes = sum(int(self._value(s.nbytes, name)) for s in entry.index)
        cost.embedding_seconds = sum(s.seconds for s in entry.embeddings)
        cost.index_bytes += sum(int(s.nbytes) for s in entry.embeddings)
        cost.embedded_chunks = sum(s.embedded for s in entry.embeddings)
        cost.encoded_chunks = sum(s.encoded for s in entry.embeddings)
        cost.encode_seconds = sum(s.encode_seconds for s in entry.embeddings)
        for retriever, shared in entry.rankings.items():
            cost.parts[retriever] = self._value(shared.seconds, name)
        cost.query_seconds = sum(cost.parts.values()) + finish_seconds
        return VariantRun(name, run, cost.as_metrics())

    def _value(self, value: object, name: str) -> float:
        if isinstance(value, list):
            return sum(self._value(v, name) for v in value)
        return float(self._get(value, name)) if isinstance(value, ray.ObjectRef) else float(value)

    def _get(self, ref: ray.ObjectRef, name: str) -> Any:
        """``ray.get`` with Ray's failures as one-line errors: a user error raised in a task is raised as
        it is; a worker lost beyond the retries is a :class:`WorkerLostError`."""
        from ray.exceptions import RayError, RayTaskError

        try:
            return ray.get(ref)
        except RayTaskError as exc:
            cause = exc.cause
            if isinstance(cause, AbcompareError):
                raise cause from None
            if isinstance(cause, BaseException) and not isinstance(cause, RayError):
                raise cause from None  # a bug in a task: the CLI's "unexpected failure" line
            raise self._lost(name, exc) from None
        except RayError as exc:
            raise self._lost(name, exc) from None

    def _lost(self, name: str, exc: BaseException) -> WorkerLostError:
        return WorkerLostError(
            f"a Ray worker was lost while producing variant {name!r}: {first_line(exc)}",
            field="execution",
            hint=f"Ray reran lost work up to execution.retries = {self.settings.retries} times; check the "
            "cluster's memory and nodes (`ray status`), then run again",
        )
