"""Scratch folders a run owns: a fresh temporary folder per run, and the removal of those that killed runs
left behind (their owner, named in the folder's name, no longer exists)."""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from abcompare.core.process_identity import current_process, is_alive

_SCRATCH = re.compile(r"^abcompare-(\d+)-(\d*)-[A-Za-z0-9_]+$")


@contextmanager
def scratch_folder() -> Iterator[Path]:
    """A fresh temporary folder owned by this run (``abcompare-<pid>-<start>-<random>`` in the system's
    temporary folder), removed on exit. Folders that killed runs left behind are removed first."""
    remove_dead_scratch_folders()
    with _owned_temporary_folder() as tmp:
        yield tmp


@contextmanager
def _owned_temporary_folder() -> Iterator[Path]:
    me = current_process()
    with tempfile.TemporaryDirectory(prefix=f"abcompare-{me.pid}-{me.started}-") as tmp:
        yield Path(tmp)


def remove_dead_scratch_folders(root: Path | None = None) -> list[Path]:
    """Remove the scratch folders of abcompare processes that no longer exist: real folders only (not
    symlinks), owned by this user, named by ``scratch_folder``'s pattern."""
    root = Path(root or tempfile.gettempdir())
    removed: list[Path] = []
    try:
        entries = list(root.iterdir())
    except OSError:
        return removed
    for entry in entries:
        match = _SCRATCH.match(entry.name)
        if match is None or entry.is_symlink() or not entry.is_dir():
            continue
        try:
            if entry.stat().st_uid != os.getuid():
                continue
        except OSError:
            continue
        if not is_alive(int(match.group(1)), match.group(2)):
            shutil.rmtree(entry, ignore_errors=True)
            removed.append(entry)
    return removed
