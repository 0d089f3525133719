"""A full disk is recognised wherever it surfaces, and named by the file that could not be written."""

from __future__ import annotations

import errno
import sqlite3

import pytest

from abcompare.core.errors import DiskFullError, disk_full


def test_an_enospc_names_its_file_and_is_exit_code_1() -> None:
    full = disk_full(OSError(errno.ENOSPC, "No space left on device", "/data/mlflow.db"))
    assert isinstance(full, DiskFullError) and full.exit_code == 1
    hint = "free some space and run again; earlier comparisons are intact"
    assert str(full) == f"disk full while writing /data/mlflow.db ({hint})"


def test_a_copy_names_its_destination_not_its_source() -> None:
    error = OSError(
        errno.ENOSPC, "No space left on device", "/tmp/staging/a.json", None, "/full/artifacts/a.json"
    )
    assert "writing /full/artifacts/a.json " in str(disk_full(error))


def test_a_cause_chain_and_sqlite_are_recognised_and_other_errors_are_not() -> None:
    try:
        try:
            raise OSError(errno.EDQUOT, "Disk quota exceeded")
        except OSError as inner:
            raise RuntimeError("log_artifacts failed") from inner
    except RuntimeError as outer:
        assert "writing the store" in str(disk_full(outer, "the store"))
    assert disk_full(sqlite3.OperationalError("database or disk is full")) is not None
    assert disk_full(OSError(errno.EACCES, "Permission denied", "/x")) is None
    assert disk_full(ValueError("No space")) is None


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EDQUOT])
def test_both_full_disk_codes(code: int) -> None:
    assert disk_full(OSError(code, "full", "/f")) is not None
