"""Where the MLflow calls of one comparison run: a writer that stages each run's artifacts in one folder and
sends them with one ``log_artifacts``, its metrics, params and tags with one ``log_batch``.

The writer runs either in this process (:class:`LocalSession`, the library default) or in a forked process
beside the comparison (:class:`ForkedSession`, what ``abcompare run`` uses): importing MLflow and its SQL
store takes about 1.2 s of CPU, more than retrieval, evaluation and statistics of the main job together, and a
second process does it, and every later write, on the other core while the comparison runs. Commands go to
the writer in order and return nothing; its errors and warnings come back and are raised (or shown) at the
next command, and :meth:`finish` waits for all of it and returns the run ids.

A killed comparison (SIGKILL) takes no writer down with its runs: the writer sees its commands end and exits
without touching them, so the runs stay RUNNING, owned by the dead process, until the next run marks them
FAILED (see :mod:`abcompare.tracking.store`). Ctrl-C reaches the comparison only: it then asks the writer
to mark the open runs KILLED and waits for it.
"""

from __future__ import annotations

import json
import queue
import shutil
import signal
import sys
import threading
import time
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

import pandas as pd

from abcompare.core.errors import AbcompareWarning, TrackingError
from abcompare.core.json_values import json_value
from abcompare.core.naming import mlflow_safe_name
from abcompare.tracking.layout import LOGGED_ARTIFACTS_TAG, table_file
from abcompare.tracking.store import open_tracker

#: How long :meth:`ForkedSession.abort` waits for the writer to close the runs before giving up on it.
ABORT_SECONDS = 120.0


@dataclass
class RecordedRuns:
    """Where a comparison was recorded: the store, the experiment, the run id of every handle."""

    uri: str
    experiment_id: str
    run_ids: dict[str, str] = field(default_factory=dict)
    lost: bool = False  # the tracking server stopped answering: the record is incomplete


# ------------------------------------------------------------------------------------------ the commands
class Command(Enum):
    """What a session can ask its writer to do: one member per :class:`RunWriter` call, plus the session's
    own ``ABORT`` (close every open run), ``REPORT`` (where the runs are) and ``EXIT``. A command travels as
    ``(Command, args, kwargs)``; the writer looks its call up in :data:`CALLS`, never by name."""

    OPEN = "open"
    START_RUN = "start_run"
    LOG = "log"
    TABLE = "table"
    PARQUET = "parquet"
    TEXT = "text"
    JSON = "json"
    COPY = "copy"
    DATASET = "dataset"
    FLUSH = "flush"
    TRACES = "traces"
    END_RUN = "end_run"
    EXPERIMENT_TAGS = "experiment_tags"
    ABORT = "abort"
    REPORT = "report"
    EXIT = "exit"


# ------------------------------------------------------------------------------------------ the writer
class RunWriter:
    """Executes the session's commands against MLflow, through a
    :class:`~abcompare.tracking.store.StoreClient`.

    Runs are named by handles the comparison chooses (``"parent"``, ``"variant:dbsf"``); each has a staging
    folder whose layout is the run's artifact layout, sent once when the run ends.
    """

    def __init__(self, staging: Path) -> None:
        self.staging = staging
        self.tracker: Any = None
        self.run_ids: dict[str, str] = {}
        self.ended: set[str] = set()
        self.pending: dict[str, dict[str, dict[str, Any]]] = {}
        self.tables: dict[str, list[str]] = {}
        self.tables_sent: dict[str, int] = {}

    # ---------------------------------------------------------------- connection
    def open(
        self,
        uri: str | None,
        experiment: str,
        artifact_location: str | None,
        owner: dict[str, str],
        experiment_tags: Mapping[str, str],
    ) -> None:

        self.tracker = open_tracker(uri, experiment, artifact_location, owner=owner)
        self.tracker.set_experiment_tags(experiment_tags)

    # ---------------------------------------------------------------- runs
    def start_run(
        self,
        handle: str,
        name: str,
        tags: Mapping[str, str],
        parent: str | None = None,
        description: str | None = None,
        parent_run_id: str | None = None,
    ) -> None:
        """Create the run of ``handle``, nested under the run of the handle ``parent`` or, for a run whose
        parent another session made (a collection's comparison under the whole comparison's run), under
        the run id ``parent_run_id``."""
        parent_id = self.run_ids.get(parent) if parent else parent_run_id
        self.run_ids[handle] = self.tracker.start_run(
            name, tags, parent_id=parent_id, description=description
        )
        self.pending[handle] = _empty_batch()

    def log(
        self,
        handle: str,
        metrics: Mapping[str, float] | None = None,
        params: Mapping[str, str] | None = None,
        tags: Mapping[str, str] | None = None,
    ) -> None:
        """Metrics, params and tags for one run: sent with the run's end, or at once if it has ended."""
        batch = {"metrics": dict(metrics or {}), "params": dict(params or {}), "tags": dict(tags or {})}
        if handle in self.ended:
            self.tracker.log_batch(self.run_ids[handle], **batch)
            return
        for kind, values in batch.items():
            self.pending[handle][kind].update(values)

    def folder(self, handle: str) -> Path:
        path = self.staging / mlflow_safe_name(handle)
        path.mkdir(parents=True, exist_ok=True)
        return path

    def _target(self, handle: str, artifact: str) -> Path:
        target = self.folder(handle) / artifact
        target.parent.mkdir(parents=True, exist_ok=True)
        return target

    def table(self, handle: str, name: str, frame: pd.DataFrame) -> None:
        """``tables/<name>.parquet`` (for code) and ``tables/<name>.json`` in MLflow's table format (its UI's
        table view): the same JSON ``MlflowClient.log_table`` writes, without its extra calls per table."""
        frame.to_parquet(self._target(handle, table_file(name, "parquet")))
        view = frame.reset_index() if _named_index(frame) else frame
        view.to_json(
            self._target(handle, table_file(name, "json")), orient="split", index=False, date_format="iso"
        )
        self.tables.setdefault(handle, []).append(table_file(name, "json"))

    def parquet(self, handle: str, artifact: str, frame: pd.DataFrame) -> None:
        frame.to_parquet(self._target(handle, artifact))

    def text(self, handle: str, artifact: str, text: str) -> None:
        self._target(handle, artifact).write_text(text, encoding="utf-8")

    def json(self, handle: str, artifact: str, data: Any) -> None:
        self._target(handle, artifact).write_text(
            json.dumps(data, indent=2, default=_plain), encoding="utf-8"
        )

    def copy(self, handle: str, artifact: str, source: str) -> None:
        shutil.copyfile(source, self._target(handle, artifact))

    def dataset(self, handle: str, frame: pd.DataFrame, name: str, source: str, digest: str) -> None:
        self.tracker.log_dataset(self.run_ids[handle], frame, name=name, source=source, digest=digest)

    def traces(self, handle: str, records: list[dict[str, Any]]) -> None:
        """Traces of the run of ``handle`` (plain records: :mod:`abcompare.tracking.traces`)."""
        self.tracker.log_traces(self.run_ids[handle], records)

    def flush(self, handle: str) -> None:
        """Send what the run has so far: its batch and its staged artifacts (the run stays open)."""
        run_id = self.run_ids[handle]
        batch = self.pending.get(handle) or _empty_batch()
        self.pending[handle] = _empty_batch()
        tables = self.tables.get(handle, [])
        if len(tables) > self.tables_sent.get(handle, 0):  # the tag lists every table the run has
            batch["tags"][LOGGED_ARTIFACTS_TAG] = json.dumps([{"path": p, "type": "table"} for p in tables])
            self.tables_sent[handle] = len(tables)
        if any(batch.values()):
            self.tracker.log_batch(run_id, **batch)
        folder = self.staging / mlflow_safe_name(handle)
        if folder.is_dir() and any(folder.iterdir()):
            self.tracker.log_artifacts(run_id, folder)
            shutil.rmtree(folder, ignore_errors=True)

    def end_run(self, handle: str, status: str = "FINISHED") -> None:
        """Send the rest of the run's batch and artifacts, then close it."""
        self.flush(handle)
        self.tracker.end_run(self.run_ids[handle], status)
        self.ended.add(handle)

    def experiment_tags(self, tags: Mapping[str, str]) -> None:
        self.tracker.set_experiment_tags(tags)

    def end_all(self, status: str) -> None:
        """Close every run still open (children first) with ``status``; never raises."""
        if self.tracker is not None:
            self.tracker.end_all(status)

    def report(self) -> RecordedRuns:
        tracker = self.tracker
        return RecordedRuns(tracker.uri, tracker.experiment_id, dict(self.run_ids), tracker.lost)


#: The writer's call for each command that writes (``ABORT``, ``REPORT`` and ``EXIT`` are the sessions').
CALLS: dict[Command, Callable[..., Any]] = {
    Command.OPEN: RunWriter.open,
    Command.START_RUN: RunWriter.start_run,
    Command.LOG: RunWriter.log,
    Command.TABLE: RunWriter.table,
    Command.PARQUET: RunWriter.parquet,
    Command.TEXT: RunWriter.text,
    Command.JSON: RunWriter.json,
    Command.COPY: RunWriter.copy,
    Command.DATASET: RunWriter.dataset,
    Command.FLUSH: RunWriter.flush,
    Command.TRACES: RunWriter.traces,
    Command.END_RUN: RunWriter.end_run,
    Command.EXPERIMENT_TAGS: RunWriter.experiment_tags,
}


def _empty_batch() -> dict[str, dict[str, Any]]:
    """A run's batch with nothing in it yet: its metrics, params and tags."""
    return {"metrics": {}, "params": {}, "tags": {}}


def _named_index(frame: pd.DataFrame) -> bool:
    return any(name is not None for name in frame.index.names)


def _plain(value: object) -> object:
    """A cell as a logged table's JSON has it: :func:`~abcompare.core.json_values.json_value`, and text
    for anything that is not a number."""
    value = json_value(value)
    return str(value) if value is not None and not isinstance(value, (int, float, bool)) else value


# ------------------------------------------------------------------------------------------ sessions
class LocalSession:
    """The writer in this process: every command runs when it is given (library use, tests)."""

    background = False

    def __init__(self, staging: Path) -> None:
        self.writer = RunWriter(staging)
        self.error: BaseException | None = None

    def send(self, command: Command, *args: Any, **kwargs: Any) -> None:
        CALLS[command](self.writer, *args, **kwargs)

    def finish(self) -> RecordedRuns:
        return self.writer.report()

    def report(self) -> RecordedRuns:
        """Where the runs are so far (every command sent has run); the session stays open."""
        return self.writer.report()

    def abort(self, status: str) -> None:
        self.writer.end_all(status)


class ForkedSession:
    """The writer in a forked process. ``send`` queues a command and raises the writer's first error, if one
    came back; ``finish`` waits for every command and returns where the runs are."""

    background = True

    def __init__(self, staging: Path) -> None:
        import multiprocessing

        context = multiprocessing.get_context("fork")
        self.connection, child = context.Pipe(duplex=True)
        sys.stdout.flush()  # nothing buffered before the fork is written twice
        sys.stderr.flush()
        self.process = context.Process(
            target=_serve, args=(child, staging, self.connection), daemon=True, name="abcompare-mlflow"
        )
        self.process.start()
        child.close()
        self.closed = False
        # commands are pickled here and written to the pipe by a thread: the writer reads nothing while it
        # imports MLflow, and a full pipe must not stop the comparison
        self.outbox: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self.send_failed = False
        self.sender = threading.Thread(target=self._pump, name="abcompare-mlflow-sender", daemon=True)
        self.sender.start()

    def _pump(self) -> None:
        while (data := self.outbox.get()) is not None:
            try:
                self.connection.send_bytes(data)
            except (BrokenPipeError, OSError):
                self.send_failed = True
                return

    def _post(self, message: tuple[Any, ...]) -> None:
        from multiprocessing.reduction import ForkingPickler

        self.outbox.put(bytes(ForkingPickler.dumps(message)))

    def send(self, command: Command, *args: Any, **kwargs: Any) -> None:
        self._drain(block=False)
        if self.send_failed:
            raise TrackingError("the MLflow writer process ended unexpectedly", field="tracking")
        self._post((command, args, kwargs))

    def finish(self) -> RecordedRuns:
        self.send(Command.REPORT)
        recorded = self._drain(block=True)
        self._close()
        assert isinstance(recorded, RecordedRuns)
        return recorded

    def report(self) -> RecordedRuns:
        """Wait until the writer has run every command sent so far and return where the runs are (a run
        started in it has its id); the session stays open. Raises the writer's error, if one came back."""
        self.send(Command.REPORT)
        recorded = self._drain(block=True)
        assert isinstance(recorded, RecordedRuns)
        return recorded

    def abort(self, status: str) -> None:
        """Ask the writer to close the open runs with ``status`` and wait for it (never raises)."""
        if self.closed:
            return
        try:
            self._post((Command.ABORT, (status,), {}))
            deadline = time.monotonic() + ABORT_SECONDS
            while self.connection.poll(max(0.0, deadline - time.monotonic())):
                kind, _ = self.connection.recv()
                if kind == "report":
                    break
        except (EOFError, OSError):
            pass
        self._close()

    def _drain(self, *, block: bool) -> Any:
        """Handle what the writer sent back: show its warnings, raise its error; with ``block``, wait for its
        report and return it."""
        while block or self.connection.poll(0):
            try:
                kind, payload = self.connection.recv()
            except (EOFError, OSError):
                self._close()
                raise TrackingError(
                    "the MLflow writer process ended unexpectedly", field="tracking"
                ) from None
            if kind == "warning":
                warnings.warn(payload, AbcompareWarning, stacklevel=3)
            elif kind == "error":
                raise payload
            elif kind == "report":
                return payload
        return None

    def _close(self) -> None:
        if self.closed:
            return
        self.closed = True
        self._post((Command.EXIT, (), {}))
        self.outbox.put(None)
        self.sender.join(timeout=ABORT_SECONDS)
        self.process.join(timeout=ABORT_SECONDS)
        if self.process.is_alive():
            self.process.kill()
            self.process.join(timeout=10)
        self.connection.close()


def _serve(connection: Any, staging: Path, comparison_end: Any) -> None:
    """The writer process: run commands in order until told to exit or until the comparison is gone."""
    # the fork copied the comparison's end of the pipe: close it, or the pipe would never end when the
    # comparison dies and this process would wait for commands forever
    comparison_end.close()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the comparison's to handle; it will tell us
    _drop_inherited_connections()
    writer = RunWriter(staging)
    failed = False
    while True:
        try:
            command, args, kwargs = connection.recv()
        except (EOFError, OSError):
            return  # the comparison was killed: leave its runs to the next run's orphan check
        if command is Command.EXIT:
            return
        if command is Command.ABORT:
            _forward(connection, writer.end_all, *args)
            connection.send(("report", None))
            continue
        if command is Command.REPORT:
            if not failed:
                failed = not _forward(connection, lambda: connection.send(("report", writer.report())))
            continue
        if failed:
            continue  # after an error only abort, report and exit are acted on
        failed = not _forward(connection, CALLS[command], writer, *args, **kwargs)


def _drop_inherited_connections() -> None:
    """Forget the database connections the fork copied from the comparison's process (MLflow keeps one engine
    per store URI for the process): two processes must not share one SQLite or PostgreSQL connection, so
    the writer opens its own (``dispose(close=False)`` leaves the parent's connections to the parent)."""
    store = sys.modules.get("mlflow.store.tracking.sqlalchemy_store")
    if store is None:
        return
    for engine in list(store.SqlAlchemyStore._engine_map.values()):
        engine.dispose(close=False)  # a new pool: the stores MLflow cached keep working, on new connections


def _forward(connection: Any, call: Any, *args: Any, **kwargs: Any) -> bool:
    """Run ``call``; send its warnings back, and its error (as the same exception when it can travel)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", AbcompareWarning)
        try:
            call(*args, **kwargs)
            ok = True
        except BaseException as exc:  # noqa: BLE001 - every failure goes back to the comparison
            ok = False
            error: BaseException = exc
    for warning in caught:
        if issubclass(warning.category, AbcompareWarning):
            connection.send(("warning", str(warning.message)))
    if not ok:
        try:
            connection.send(("error", error))
        except Exception:  # noqa: BLE001 - an exception that cannot be pickled travels as text
            connection.send(("error", RuntimeError(f"{type(error).__name__}: {error}")))
    return ok


def open_session(staging: Path, *, background: bool) -> LocalSession | ForkedSession:
    """A forked writer where the platform can fork (``background``), else one in this process."""
    if background and sys.platform.startswith("linux"):
        return ForkedSession(staging)
    return LocalSession(staging)
