"""A file's sha256, computed once per (path, size, modification time) in a process: what names a model's
weights in an embedding cache key and a converted model's folder, so a changed file is never taken for the
one it replaced."""

from __future__ import annotations

import hashlib
from pathlib import Path

_DIGESTS: dict[tuple[str, int, int], str] = {}


def file_digest(path: Path) -> str:
    """sha256 of a file, computed once per (path, size, mtime) in this process."""
    stat = path.stat()
    key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns)
    if key not in _DIGESTS:
        digest = hashlib.sha256()
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        _DIGESTS[key] = digest.hexdigest()
    return _DIGESTS[key]
