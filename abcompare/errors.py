"""Typed errors for problems a user can fix; the CLI renders them once, as one line, with exit code 2."""

from __future__ import annotations

from pathlib import Path


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
        return f"{text} ({self.hint})" if self.hint else text


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


class ExecutionError(AbcompareError):
    """The execution backend cannot be used: Ray not installed, a cluster address that does not answer,
    a missing authentication token (exit 2, like any bad input)."""


class WorkerLostError(ExecutionError):
    """Ray lost work it could not redo: a worker died more often than ``execution.retries`` allows.
    Not the user's input, so exit 1 (as any other failure); the runs are marked FAILED."""

    exit_code = 1


class AbcompareWarning(UserWarning):
    """Something suspicious in the inputs that does not stop the run (annotations for unknown queries)."""
