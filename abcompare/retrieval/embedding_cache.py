"""On-disk embedding cache keyed by (model identity, sha256 of the encoded text).

Layout: ``<cache_dir>/embeddings/<model-slug>/<shard>.npy`` (float32 rows) beside ``<shard>.keys`` (one
text sha256 per row). Shards are written atomically and never modified, so concurrent runs can only
duplicate work, never corrupt it; a rerun or a fusion-only variant encodes nothing.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

ENCODE_BLOCK = 512
"""Distinct uncached texts per model call (and per cache shard)."""

Progress = Callable[[int, int], None]
"""``progress(completed, total)``, e.g. the runner's progress-bar ``advance``."""


def default_cache_dir() -> Path:
    """``$ABCOMPARE_CACHE_DIR`` or ``~/.cache/abcompare``."""
    env = os.environ.get("ABCOMPARE_CACHE_DIR")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "abcompare"


def text_hash(text: str) -> str:
    """sha256 hex digest of the UTF-8 text."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _slug(model_key: str) -> str:
    """A folder name for a model identity: readable prefix plus a hash of the full identity."""
    readable = re.sub(r"[^A-Za-z0-9._-]+", "_", model_key)[-60:].strip("_")
    return f"{readable}-{hashlib.sha256(model_key.encode()).hexdigest()[:16]}"


def _atomic_write(path: Path, write: Callable[[Path], None]) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    write(tmp)
    os.replace(tmp, path)


class EmbeddingCache:
    """The vectors one model produced, by text hash; loads every shard of that model on first use."""

    def __init__(self, cache_dir: Path, model_key: str) -> None:
        self.model_key = model_key
        self.folder = Path(cache_dir) / "embeddings" / _slug(model_key)
        self._vectors: dict[str, np.ndarray] | None = None

    def _load(self) -> dict[str, np.ndarray]:
        if self._vectors is None:
            self._vectors = {}
            for keys_file in sorted(self.folder.glob("*.keys")):
                npy = keys_file.with_suffix(".npy")
                if not npy.exists():
                    continue
                keys = keys_file.read_text().split()
                matrix = np.load(npy)
                if matrix.ndim != 2 or matrix.shape[0] != len(keys):
                    continue  # a damaged shard is ignored (and re-encoded), never trusted
                self._vectors.update(zip(keys, matrix, strict=True))
        return self._vectors

    def __len__(self) -> int:
        return len(self._load())

    def missing(self, hashes: Sequence[str]) -> list[str]:
        """The distinct hashes (first-seen order) that have no cached vector."""
        known = self._load()
        return list(dict.fromkeys(h for h in hashes if h not in known))

    def add(self, hashes: Sequence[str], vectors: np.ndarray) -> None:
        """Store a block of vectors as a new shard (named by the hash of its keys)."""
        vectors = np.asarray(vectors, dtype=np.float32)
        if len(hashes) == 0:
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        name = hashlib.sha256("\n".join(hashes).encode()).hexdigest()[:24]
        _atomic_write(self.folder / f"{name}.npy", lambda p: np.save(p.open("wb"), vectors))
        _atomic_write(self.folder / f"{name}.keys", lambda p: p.write_text("\n".join(hashes) + "\n"))
        self._load().update(zip(hashes, vectors, strict=True))

    def get(self, hashes: Sequence[str]) -> np.ndarray:
        """The cached vectors for ``hashes`` in order (all must be present)."""
        known = self._load()
        return np.stack([known[h] for h in hashes]) if hashes else np.empty((0, 0), np.float32)

    def missing_blocks(
        self, texts: Sequence[str], *, block: int = ENCODE_BLOCK, pending: set[str] | None = None
    ) -> list[tuple[list[str], list[str]]]:
        """The uncached texts as the blocks they are encoded in: ``(hashes, texts)`` per block of at most
        ``block`` distinct texts, in first-seen order.

        One model call encodes one block. sentence-transformers sorts by length and pads within a call, so
        a vector depends (in its last bits) on the block it was encoded with; every backend encodes these
        same blocks, which makes its vectors bit-identical to this process's. ``pending`` holds hashes
        that earlier blocks of the same pass will have cached by then (they are left out, and this call's
        are added), so planning several calls ahead gives the blocks that calling them in turn gives.
        """
        hashes = [text_hash(t) for t in texts]
        by_hash = dict(zip(hashes, texts, strict=True))
        todo = self.missing(hashes)
        if pending is not None:
            todo = [h for h in todo if h not in pending]
            pending.update(todo)
        return [
            (part, [by_hash[h] for h in part])
            for part in (todo[begin : begin + block] for begin in range(0, len(todo), block))
        ]

    def encode(
        self,
        texts: Sequence[str],
        encode: Callable[[list[str]], np.ndarray],
        *,
        block: int = ENCODE_BLOCK,
        progress: Progress | None = None,
    ) -> tuple[np.ndarray, int]:
        """Vectors for ``texts`` in order, encoding only uncached ones (in blocks, each saved at once).

        Returns the matrix and how many texts were actually encoded.
        """
        blocks = self.missing_blocks(texts, block=block)
        total = sum(len(hashes) for hashes, _ in blocks)
        if blocks and progress is not None:
            progress(0, total)
        done = 0
        for hashes, part in blocks:
            self.add(hashes, encode(part))
            done += len(hashes)
            if progress is not None:
                progress(done, total)
        return self.get([text_hash(t) for t in texts]), total
