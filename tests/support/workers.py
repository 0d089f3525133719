"""The suite runs on two pytest-xdist workers (``-n 2`` in pyproject's pytest settings): what they share.

Each worker is a pytest process of its own, with its own session fixtures and its own folder under the
session's temporary root. What one worker makes for the whole session (a comparison's run, see
``support.comparisons``) is found by the other in :func:`shared_folder`, under an exclusive lock
(:func:`exclusive`), so it is made once, not once per worker. Without xdist (``-n 0``, ``-p no:xdist``) the
same code runs with one process and the shared folder is that session's own.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

import pytest


def worker_name() -> str | None:
    """This process's xdist worker (``gw0``, ``gw1``, ...), or None outside xdist."""
    return os.environ.get("PYTEST_XDIST_WORKER")


def shared_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder every worker of this session sees: beside the workers' own temporary folders (xdist puts
    them in the controller's temporary root), or in the session's root without xdist."""
    root = tmp_path_factory.getbasetemp()
    if worker_name() is not None:
        root = root.parent
    folder = root / "shared"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@contextlib.contextmanager
def exclusive(lock_file: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``lock_file`` (created when absent) within the block: one worker at a
    time; the other waits. The lock goes with the process, so a crashed worker never leaves it held."""
    with lock_file.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
