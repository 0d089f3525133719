"""Typed errors for problems a user can fix; the CLI renders them once, as one line, with exit code 2."""

from __future__ import annotations

import errno
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def one_line(text: str) -> str:
    """``text`` with every control character (a newline, a tab, an escape) written as ``\\xNN``, so a message
    that quotes a file name or a value stays one line and cannot drive the terminal."""
    return _CONTROL.sub(
        lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 256 else f"\\u{ord(m.group()):04x}", text
    )


class AbcompareError(Exception):
    """A problem in what the user gave us (config, data, runs, annotations), located as precisely as we can.

    ``file``/``line`` point into an input file, ``field`` names a config path or a column; ``hint`` says
    what to do about it. ``str(err)`` is the one-line message the CLI prints.
    """

    exit_code = 2

    def __init__(
        self,
        message: str,
        *,
        file: str | Path | None = None,
        line: int | None = None,
        field: str | None = None,
        hint: str | None = None,
    ) -> None:
        self.message = message
        self.file = str(file) if file is not None else None
        self.line = line
        self.field = field
        self.hint = hint
        super().__init__(str(self))

    def location(self) -> str:
        """``file:line`` / ``file: field`` / ``field`` — whatever we know of where the problem is."""
        parts: list[str] = []
        if self.file:
            parts.append(self.file if self.line is None else f"{self.file}:{self.line}")
        if self.field:
            parts.append(self.field)
        return ": ".join(parts)

    def __str__(self) -> str:
        where = self.location()
        text = f"{where}: {self.message}" if where else self.message
        return one_line(f"{text} ({self.hint})" if self.hint else text)

    def with_context(self, context: str, file: str | Path | None = None) -> AbcompareError:
        """The same error (same type, same exit code), its message prefixed with ``context`` (``variant
        'dbsf'``) and located in ``file`` when it named no file of its own."""
        clone = type(self).__new__(type(self))
        clone.__dict__.update(self.__dict__)
        AbcompareError.__init__(
            clone,
            f"{context}: {self.message}",
            file=self.file if self.file is not None else file,
            line=self.line if self.file is not None else None,
            field=self.field,
            hint=self.hint,
        )
        return clone


class ConfigError(AbcompareError):
    """The experiment config is invalid (unknown key, wrong type, missing file, ...)."""


class DataError(AbcompareError):
    """A query set, annotation file, corpus or run file is missing or malformed."""


class AlignmentError(DataError):
    """Annotation ids do not match the keys the hits compute, so recall would silently be zero."""


class StatisticsError(AbcompareError):
    """The inputs to a significance test cannot be compared (too few queries, NaN scores, ...)."""


class RetrievalError(AbcompareError):
    """A retrieval variant cannot be built (unknown model, missing run file, bad fusion settings)."""


class TrackingError(AbcompareError):
    """The MLflow tracking store cannot be reached or written."""


class TrackingLostError(TrackingError):
    """The tracking server stopped answering while the comparison was being logged. The comparison was
    computed (``result``) but is not recorded; ``saved`` is the local copy written instead, if any.
    Exit code 3: the work is done, only its record is missing."""

    exit_code = 3

    def __init__(
        self, message: str, *, result: object = None, saved: Path | None = None, **where: object
    ) -> None:
        super().__init__(message, **where)
        self.result = result
        self.saved = saved


class DiskFullError(AbcompareError):
    """A write failed because the disk (or quota) is full; earlier results are untouched. Exit code 1: not
    the input's fault."""

    exit_code = 1


class ExecutionError(AbcompareError):
    """The execution backend cannot be used: Ray not installed, a cluster address that does not answer,
    a missing authentication token (exit 2, like any bad input)."""


class WorkerLostError(ExecutionError):
    """Ray lost work it could not redo: a worker died more often than ``execution.retries`` allows.
    Not the user's input, so exit 1 (as any other failure); the runs are marked FAILED."""

    exit_code = 1


@contextmanager
def error_context(context: str, file: str | Path | None = None) -> Iterator[None]:
    """Prefix every ``AbcompareError`` raised inside with ``context`` (and ``file`` when it named none)."""
    try:
        yield
    except AbcompareError as exc:
        raise exc.with_context(context, file) from None


def disk_full(exc: BaseException, writing: str | None = None) -> DiskFullError | None:
    """A ``DiskFullError`` naming what was being written (the file the error names, else ``writing``), when
    ``exc`` (or what caused it) is a full disk: ``OSError`` ENOSPC / EDQUOT, or SQLite's "database or disk
    is full"; else None."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        no_space = isinstance(current, OSError) and (
            current.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", -1))
            or "No space left on device" in str(current)  # pyarrow's writers carry no errno
        )
        if no_space:
            # a copy's error names its source first and its destination (the full disk) second
            target = getattr(current, "filename2", None) or getattr(current, "filename", None) or writing
            target = target or "a file"
            return DiskFullError(
                f"disk full while writing {target}",
                hint="free some space and run again; earlier comparisons are intact",
            )
        text = str(current)
        if "database or disk is full" in text:
            return DiskFullError(
                f"disk full while writing {writing or 'the MLflow SQLite store'}",
                hint="free some space and run again; earlier comparisons are intact",
            )
        current = current.__cause__ or current.__context__
    return None


class AbcompareWarning(UserWarning):
    """Something suspicious in the inputs that does not stop the run (annotations for unknown queries)."""
