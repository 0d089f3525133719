"""Corpus encoding on Ray: a Ray Data ``map_batches`` pipeline over the uncached blocks of texts, with an
actor pool of sentence-transformers encoders (one GPU per actor when the cluster has GPUs, CPUs
otherwise), written by the driver into the same on-disk embedding cache the local path uses.

One row of the dataset is one cache block (:meth:`EmbeddingCache.missing_blocks`) and one actor call
encodes it in one model call, exactly as the local path does: sentence-transformers sorts and pads within
a call, so the same blocks give the same vectors, bit for bit. The actors return each block's vectors as
bytes; the driver is the only writer of the cache.
"""

from __future__ import annotations

import logging
import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from abcompare.core.errors import WorkerLostError
from abcompare.retrieval.dense import DenseEncoder, load_encoder
from abcompare.retrieval.embedding_cache import Progress


@dataclass(frozen=True)
class EncoderPool:
    """How many encoder actors, what each one holds, and how many torch threads each runs."""

    actors: int
    cpus: float
    gpus: float
    threads: int


def encoder_pool(
    settings, resources: dict[str, float], blocks: int, largest_node_cpus: float, threads: int
) -> EncoderPool:
    """The actor pool for ``blocks`` cache blocks on a cluster with ``resources``.

    With GPUs: one actor per GPU (or per ``num_gpus_per_encoder``). On CPUs: every actor runs ``threads``
    torch threads, the local path's count, because a vector's last bits depend on it (measured: a batch
    of one text differs at 1 thread and 2); one actor per ``threads`` CPUs, or ``encoders`` actors sharing
    the CPUs (each fits on the largest node). Never more actors than blocks.
    """
    total_gpus = resources.get("GPU", 0.0)
    total_cpus = max(1.0, resources.get("CPU", 1.0))
    if settings.num_gpus_per_encoder or total_gpus:
        gpus = settings.num_gpus_per_encoder or 1.0
        actors = settings.encoders or max(1, math.floor(total_gpus / gpus))
        return EncoderPool(max(1, min(actors, blocks)), 1.0, gpus, threads)
    actors = max(1, min(settings.encoders or math.floor(total_cpus / threads), blocks))
    cpus = max(1.0, min(float(threads), math.floor(total_cpus / actors), largest_node_cpus))
    return EncoderPool(actors, cpus, 0.0, threads)


class BlockEncoder:
    """A Ray Data actor: loads the model once, then encodes one cache block per call."""

    def __init__(
        self, model: str, max_seq_length: int | None, batch_size: int, threads: int, backend: str = "torch"
    ) -> None:
        import torch

        torch.set_num_threads(max(1, threads))
        device = "cuda" if torch.cuda.is_available() else "cpu"  # Ray exposes only this actor's GPUs
        onnx_threads = max(1, threads) if backend == "onnx" else None
        self.encoder = load_encoder(model, backend, max_seq_length, device, onnx_threads)
        self.batch_size = batch_size

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        vectors = [
            self.encoder.encode([str(t) for t in texts], self.batch_size).tobytes()
            for texts in batch["texts"]
        ]
        return {"block": np.asarray(batch["block"]), "vectors": np.array(vectors, dtype=object)}


def _pipeline(ray, rows: list[dict], encoder: DenseEncoder, pool: EncoderPool, settings):
    """The Ray Data pipeline: one row per cache block, one actor call per row."""
    return ray.data.from_items(rows, override_num_blocks=len(rows)).map_batches(
        BlockEncoder,
        batch_size=1,
        batch_format="numpy",
        compute=ray.data.ActorPoolStrategy(size=pool.actors),
        fn_constructor_kwargs={
            "model": encoder.name,
            "backend": encoder.backend,
            "max_seq_length": encoder.max_seq_length,
            "batch_size": encoder.batch_size,
            "threads": pool.threads,
        },
        num_cpus=pool.cpus,
        num_gpus=pool.gpus or None,
        max_restarts=settings.retries,
        max_task_retries=settings.retries,
    )


def encode_on_ray(
    encoder: DenseEncoder,
    blocks: Sequence[tuple[list[str], list[str]]],
    settings,
    session,
    progress: Progress | None = None,
) -> None:
    """Encode ``blocks`` ((hashes, texts) each) through the actor pool; each block is written into the
    encoder's cache as soon as it arrives, so an interrupted run keeps what was done."""
    if not blocks:
        return
    import ray.data
    import torch  # the driver's torch thread count is what the local path encodes with
    from ray.exceptions import RayError

    pool = encoder_pool(
        settings, session.resources, len(blocks), session.largest_node_cpus, torch.get_num_threads()
    )
    rows = [{"block": i, "texts": list(texts)} for i, (_, texts) in enumerate(blocks)]
    with warnings.catch_warnings():
        # max_restarts has no named parameter in Ray 2.60 (the pin); Ray Data restarts its actors forever
        # by default, which would turn a deterministic crash into a hang
        warnings.filterwarnings("ignore", message=".*ray_remote_args.* is deprecated")
        dataset = _pipeline(ray, rows, encoder, pool, settings)
    total = sum(len(hashes) for hashes, _ in blocks)
    done = 0
    if progress is not None:
        progress(0, total)
    data_logger = logging.getLogger("ray.data")  # its traceback of a lost actor: we say it in one line
    level = data_logger.level
    data_logger.setLevel(logging.CRITICAL)
    try:
        for batch in dataset.iter_batches(batch_size=None, batch_format="numpy"):
            for block, payload in zip(batch["block"], batch["vectors"], strict=True):
                hashes = blocks[int(block)][0]
                vectors = np.frombuffer(payload, dtype=np.float32).reshape(len(hashes), -1)
                encoder.cache.add(hashes, vectors)
                encoder.encoded += len(hashes)
                done += len(hashes)
                if progress is not None:
                    progress(done, total)
    except RayError as exc:
        raise WorkerLostError(
            f"encoding on Ray failed after {done} of {total} texts: {first_line(exc)}",
            field="execution",
            hint=f"an encoder actor died (execution.retries is {settings.retries}); the encoded blocks "
            "are cached, so a rerun continues from there",
        ) from None
    finally:
        data_logger.setLevel(level)


def first_line(exc: BaseException) -> str:
    """An exception's first meaningful line (Ray's carry whole tracebacks)."""
    cause = getattr(exc, "cause", None)
    if isinstance(cause, BaseException) and cause is not exc:
        return first_line(cause)
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return f"{type(exc).__name__}: {lines[0] if lines else ''}".rstrip(": ")
