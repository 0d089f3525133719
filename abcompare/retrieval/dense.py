"""Dense retrieval: load an embedding model on its backend, encode (through the cache), search.

Two backends (``abcompare.retrieval.models`` resolves a name to its files and declaration):

- ``torch``: a sentence-transformers ``SentenceTransformer`` (the model's own modules: pooling, Normalize);
- ``onnx``: an onnxruntime session over the ONNX file, the ``tokenizers`` library on the model's
  ``tokenizer.json`` (truncated at the token limit, padded per batch), and the declared pooling in numpy.
  sentence-transformers' own ONNX backend (``backend="onnx"``) needs optimum-onnx, whose releases require
  transformers < 4.58 (this install has 5.x), and a model folder (config.json, tokenizer files, outputs
  named ``last_hidden_state``) that the packaged ONNX files do not have.

Every vector is L2-normalised (float32), so search is exact inner product: cosine similarity.
"""

from __future__ import annotations

import contextlib
import functools
import os
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from abcompare.core.errors import RetrievalError
from abcompare.retrieval.embedding_cache import EmbeddingCache, Progress
from abcompare.retrieval.models import (
    BUNDLED_ALIASES,
    LOADED_MODELS,
    EmbeddingModel,
    check_installed,
    default_backend,
    locate_model,
    resolve_embedding_model,
    torch_model,
)

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

__all__ = [
    "BUNDLED_ALIASES",
    "DenseEncoder",
    "check_model",
    "load_encoder",
    "load_model",
    "locate_model",
    "search",
]


def check_model(name: str, backend: str | None = None) -> EmbeddingModel:
    """What validation asks of a model before any run: the libraries its backend needs are installed, the
    model is on this machine and runs on ``backend`` (``resolve_embedding_model``). A ``RetrievalError``
    whose ``field`` is ``model`` or ``backend`` otherwise."""
    check_installed(name, backend or default_backend(name))
    return resolve_embedding_model(name, backend)


@functools.lru_cache(maxsize=4)
def _quiet_transformers() -> None:
    """transformers prints a 'Loading weights' bar on every load; our own progress is enough."""
    try:
        from transformers.utils import logging as transformers_logging
    except ImportError:
        return
    transformers_logging.disable_progress_bar()
    transformers_logging.set_verbosity_error()


def load_model(name: str, max_seq_length: int | None = None, device: str = "cpu") -> Any:
    """A SentenceTransformer on ``device``, loaded from the folder ``locate_model`` finds, with
    ``local_files_only`` (no network); one per process and model identity (:data:`LOADED_MODELS`: two
    names for the same files share it)."""
    try:
        resolved = locate_model(name)
        identity = torch_model(name, Path(resolved)).identity(max_seq_length)
    except RetrievalError as error:
        raise RetrievalError(
            f"cannot load sentence-transformers model {name!r}: {error.message}",
            field="model",
            hint=error.hint,
        ) from None
    return LOADED_MODELS.get(
        ("sentence-transformers", identity, device),
        lambda: _sentence_transformer(name, resolved, max_seq_length, device),
        label=name,
    )


def _sentence_transformer(name: str, resolved: str, max_seq_length: int | None, device: str) -> Any:
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError as exc:
        raise RetrievalError(
            "dense retrieval needs sentence-transformers",
            field="model",
            hint="pip install sentence-transformers torch==2.13.0",
        ) from exc
    _quiet_transformers()
    try:
        model = SentenceTransformer(resolved, device=device, local_files_only=True)
    except Exception as exc:  # noqa: BLE001 - any loading failure is a user-fixable configuration problem
        raise RetrievalError(
            f"cannot load sentence-transformers model {name!r}: {type(exc).__name__}: {exc}".splitlines()[0],
            field="model",
            hint="use 'all-MiniLM-L6-v2' (bundled), a local model folder, or a model already in the "
            "Hugging Face cache (abcompare does not download models)",
        ) from exc
    if max_seq_length is not None:
        model.max_seq_length = max_seq_length
    return model


def encode_texts(model: SentenceTransformer, texts: list[str], batch_size: int) -> np.ndarray:
    """One model call over ``texts`` (one cache block): L2-normalised float32 vectors, in order."""
    vectors = model.encode(
        texts,
        batch_size=batch_size,
        normalize_embeddings=True,
        convert_to_numpy=True,
        show_progress_bar=False,
    )
    return np.asarray(vectors, dtype=np.float32)


def pool(tokens: np.ndarray, mask: np.ndarray, pooling: str) -> np.ndarray:
    """Sentence vectors from token embeddings ``(batch, tokens, dim)`` and the attention mask, as
    sentence-transformers' Pooling module computes them (``mean``: the masked mean; ``cls``: the first
    token; ``max``: the masked maximum; ``mean_sqrt_len``: the masked sum over sqrt(length))."""
    weights = mask[..., None].astype(np.float32)
    counts = np.clip(weights.sum(axis=1), 1e-9, None)
    if pooling == "mean":
        return (tokens * weights).sum(axis=1) / counts
    if pooling == "mean_sqrt_len":
        return (tokens * weights).sum(axis=1) / np.sqrt(counts)
    if pooling == "cls":
        return tokens[:, 0]
    if pooling == "max":
        return np.where(weights > 0, tokens, np.float32(-1e9)).max(axis=1)
    raise RetrievalError(
        f"pooling {pooling!r} is not supported on backend 'onnx'",
        field="backend",
        hint="the onnx backend pools by mean, mean_sqrt_len, cls or max; run the model on torch",
    )


def unit_rows(vectors: np.ndarray) -> np.ndarray:
    """Each row divided by its L2 norm (a zero row stays zero), float32."""
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms > 0, norms, 1).astype(np.float32)


ONNX_INPUTS = ("input_ids", "attention_mask", "token_type_ids")


@contextlib.contextmanager
def _no_session_file() -> Iterator[None]:
    """onnxruntime (1.32) writes a session-id file ``.ses`` into the temporary folder as it is imported;
    abcompare writes nothing outside its store, artifact root and cache, so a ``.ses`` that was not there
    before is removed once the import is done."""
    folders = {Path(tempfile.gettempdir()), Path(os.environ.get("TMPDIR") or "/tmp")}
    new = [folder / ".ses" for folder in folders if not (folder / ".ses").exists()]
    try:
        yield
    finally:
        for file in new:
            with contextlib.suppress(OSError):
                file.unlink()


class OnnxEncoder:
    """An ONNX embedding model: onnxruntime on CPU, the ``tokenizers`` library, the declared pooling.

    Texts are tokenized once (truncated at the token limit, as sentence-transformers truncates), sorted by
    length so each batch pads little, run ``batch_size`` at a time, pooled over the attention mask and
    L2-normalised. The token embeddings are the file's first output of shape (batch, tokens, dim)."""

    def __init__(self, model: EmbeddingModel, max_seq_length: int | None = None, threads: int | None = None):
        try:
            with _no_session_file():  # onnxruntime writes it as it is imported
                import onnxruntime
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise RetrievalError(
                f"model {model.name!r} runs on onnxruntime with the tokenizers library: {exc}",
                field="backend",
                hint="pip install onnxruntime tokenizers",
            ) from exc
        options = onnxruntime.SessionOptions()
        if threads:
            options.intra_op_num_threads = threads
        options.log_severity_level = 3  # the packaged files' unused initialisers are warnings, not ours
        try:
            self.session = onnxruntime.InferenceSession(
                str(model.path), options, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:  # noqa: BLE001 - a file onnxruntime cannot load is a configuration problem
            raise RetrievalError(
                f"cannot load ONNX model {model.name!r}: {type(exc).__name__}: {exc}".splitlines()[0],
                field="model",
                hint="give an ONNX export of a sentence-transformers model",
            ) from None
        self.model = model
        self.max_seq_length = max_seq_length or model.declaration.max_seq_length
        self.tokenizer = Tokenizer.from_file(str(model.tokenizer))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_length=self.max_seq_length)
        self.inputs = [i.name for i in self.session.get_inputs()]
        token_outputs = [
            o.name for o in self.session.get_outputs() if len(o.shape) == 3 and o.type == "tensor(float)"
        ]
        if not {"input_ids", "attention_mask"} <= set(self.inputs) <= set(ONNX_INPUTS) or not token_outputs:
            raise RetrievalError(
                f"ONNX model {model.name!r} is not a BERT-style encoder (inputs: {', '.join(self.inputs)}; "
                f"outputs of shape (batch, tokens, dim): {len(token_outputs)})",
                field="model",
                hint="the onnx backend feeds input_ids, attention_mask (and token_type_ids) and pools the "
                "token embeddings",
            )
        self.output = token_outputs[0]

    def encode(self, texts: Sequence[str], batch_size: int) -> np.ndarray:
        """L2-normalised float32 vectors for ``texts``, in order."""
        encodings = self.tokenizer.encode_batch(list(texts))
        order = sorted(range(len(encodings)), key=lambda i: -len(encodings[i].ids))
        vectors: np.ndarray | None = None
        for begin in range(0, len(order), batch_size):
            rows = order[begin : begin + batch_size]
            width = max(len(encodings[i].ids) for i in rows)
            feed = {name: np.zeros((len(rows), width), dtype=np.int64) for name in self.inputs}
            for r, i in enumerate(rows):
                encoding, n = encodings[i], len(encodings[i].ids)
                feed["input_ids"][r, :n] = encoding.ids
                feed["attention_mask"][r, :n] = encoding.attention_mask
                if "token_type_ids" in feed:
                    feed["token_type_ids"][r, :n] = encoding.type_ids
            (tokens,) = self.session.run([self.output], feed)
            pooled = pool(tokens, feed["attention_mask"], self.model.declaration.pooling)
            if vectors is None:
                vectors = np.empty((len(encodings), pooled.shape[1]), dtype=np.float32)
            vectors[rows] = pooled
        if vectors is None:
            return np.empty((0, 0), dtype=np.float32)
        return unit_rows(vectors)


class TorchEncoder:
    """A sentence-transformers model on torch (its own modules pool and normalise)."""

    def __init__(self, model: SentenceTransformer) -> None:
        self.model = model

    def encode(self, texts: Sequence[str], batch_size: int) -> np.ndarray:
        return encode_texts(self.model, list(texts), batch_size)


def load_encoder(
    name: str,
    backend: str | None = None,
    max_seq_length: int | None = None,
    device: str = "cpu",
    threads: int | None = None,
) -> TorchEncoder | OnnxEncoder:
    """The encoder of ``name`` on its backend (one per process and model identity: :func:`encoder_for`);
    ``threads`` sets onnxruntime's intra-op threads (torch's are the process's)."""
    return encoder_for(resolve_embedding_model(name, backend), max_seq_length, device, threads)


def encoder_key(model: EmbeddingModel, max_seq_length: int | None = None, device: str = "cpu",
                threads: int | None = None) -> tuple:  # fmt: skip
    """What identifies a loaded encoder in :data:`LOADED_MODELS`: the model's identity and where it runs."""
    return ("encoder", model.identity(max_seq_length), device, threads if model.backend == "onnx" else None)


def encoder_for(
    model: EmbeddingModel, max_seq_length: int | None = None, device: str = "cpu", threads: int | None = None
) -> TorchEncoder | OnnxEncoder:
    """The encoder of a resolved model, loaded once per process and identity (:data:`LOADED_MODELS`)."""

    def load() -> TorchEncoder | OnnxEncoder:
        if model.backend == "onnx":
            return OnnxEncoder(model, max_seq_length, threads)
        return TorchEncoder(load_model(model.name, max_seq_length, device))

    return LOADED_MODELS.get(encoder_key(model, max_seq_length, device, threads), load, label=model.name)


class DenseEncoder:
    """Encodes texts with one model on one backend through the on-disk embedding cache."""

    def __init__(
        self,
        name: str,
        cache_dir: Path,
        *,
        batch_size: int = 64,
        max_seq_length: int | None = None,
        backend: str | None = None,
    ) -> None:
        self.name = name
        self.batch_size = batch_size
        self.max_seq_length = max_seq_length
        self.model = resolve_embedding_model(name, backend)
        self.backend = self.model.backend
        self.cache = EmbeddingCache(cache_dir, self.model.identity(max_seq_length))
        self.encoded = 0
        self._encoder: TorchEncoder | OnnxEncoder | None = None

    @property
    def loaded(self) -> bool:
        """Whether this process has loaded the model already (by any encoder of the same identity)."""
        return self._encoder is not None or encoder_key(self.model, self.max_seq_length) in LOADED_MODELS

    def load(self) -> TorchEncoder | OnnxEncoder:
        """The model, loaded once per process and identity (shared by every encoder and the timing pass)."""
        if self._encoder is None:
            self._encoder = encoder_for(self.model, self.max_seq_length)
        return self._encoder

    def _encode(self, texts: list[str]) -> np.ndarray:
        return self.load().encode(texts, self.batch_size)

    def encode(self, texts: Sequence[str], *, progress: Progress | None = None) -> np.ndarray:
        """Normalised float32 vectors for ``texts`` (cached ones are not re-encoded)."""
        matrix, encoded = self.cache.encode(texts, self._encode, progress=progress)
        self.encoded += encoded
        return matrix

    def encode_now(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors the model computes now, bypassing the cache: what encoding a query costs when it is
        served (the latency timing's query encoding)."""
        return self._encode(list(texts))


def search(
    query_vectors: np.ndarray, doc_vectors: np.ndarray, depth: int
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Top ``depth`` rows by inner product per query, best first (ties by row), as (rows, scores)."""
    n = doc_vectors.shape[0]
    k = min(depth, n)
    if k == 0 or query_vectors.shape[0] == 0:
        return [(np.empty(0, int), np.empty(0)) for _ in range(query_vectors.shape[0])]
    scores = query_vectors.astype(np.float32) @ doc_vectors.astype(np.float32).T
    results = []
    for row in scores:
        top = np.argpartition(-row, k - 1)[:k] if k < n else np.arange(n)
        top = top[np.lexsort((top, -row[top]))]
        results.append((top, row[top].astype(float)))
    return results
