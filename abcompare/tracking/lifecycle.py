"""A comparison's MLflow lifecycle, as the runner drives it: the store checked before any work, then one
:func:`tracking_session` (MLflow's ``ActiveRun`` style: started on entry; FINISHED, FAILED or KILLED on exit)
that nests each collection's comparison under a top run when there are several, and returns where it
recorded (:class:`~abcompare.outcome.results.Recorded`), never writing it into the result."""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from abcompare import __version__
from abcompare.outcome.console import result_as_json
from abcompare.outcome.results import ComparisonResult, Recorded
from abcompare.tracking.logger import (
    PARENT,
    ComparisonLogger,
    Logger,
    NullLogger,
    recorded_lines,
    variant_handle,
)
from abcompare.tracking.run_logger import Nesting
from abcompare.tracking.store import check_reachable, lost_error, resolve_tracking_uri
from abcompare.tracking.top_run import TOP, TopRunLogger, top_run_lines
from abcompare.tracking.writer import RecordedRuns

if TYPE_CHECKING:
    from abcompare.config import ExperimentConfig, TrackingSettings
    from abcompare.data.dataset import Dataset


def code_version() -> str:
    """The git commit of the abcompare checkout when there is one, else the package version."""

    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=Path(__file__).parent,
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
        if out.returncode == 0 and out.stdout.strip():
            return f"{__version__}+g{out.stdout.strip()}"
    except (OSError, subprocess.SubprocessError):
        pass
    return __version__


def check_tracking_store(tracking: TrackingSettings) -> None:
    """Fail within seconds, before any work, when the tracking store cannot be used (no MLflow import)."""

    check_reachable(resolve_tracking_uri(tracking.uri))


@contextmanager
def closing_runs(end: Callable[[str], None]) -> Iterator[None]:
    """Whatever happens inside, no run is left RUNNING: ``end("FAILED")`` on an error, ``end("KILLED")`` on
    Ctrl-C (``end`` is ``StoreClient.end_all`` or ``Logger.abort``). The interrupt carries
    ``runs_ended = "KILLED"``, so the command line says the open runs were marked so only when they were."""
    try:
        yield
    except KeyboardInterrupt as stop:
        end("KILLED")
        stop.runs_ended = "KILLED"
        raise
    except BaseException:
        end("FAILED")
        raise


def open_logger(config: ExperimentConfig, config_path: Path | None, dataset: Dataset, scratch: Path, *,
                background: bool, nested: Nesting | None = None) -> Logger:  # fmt: skip
    """One collection's MLflow logger, or one that does nothing when tracking is off. ``nested`` (from
    :meth:`TopRunLogger.nested <abcompare.tracking.top_run.TopRunLogger.nested>`): its parent run goes
    under the whole comparison's top run."""
    if not config.tracking.enabled:
        return NullLogger()
    return ComparisonLogger(
        config, config_path, dataset, code_version(), scratch / "mlflow", background=background, nested=nested
    )


class TrackingSession:
    """One experiment's record in MLflow, whatever its number of collections: each collection's comparison
    (a parent run, a child run per variant), nested under a top run holding the pooled test when there are
    several. Made by :func:`tracking_session`; the runner calls :meth:`collection` per collection and
    :meth:`experiment` with the finished result; :attr:`where` says where it all went."""

    def __init__(self, config: ExperimentConfig, config_path: Path | None, parts: Mapping[str, Part],
                 *, background: bool, scratch: Path) -> None:  # fmt: skip
        self.config, self.config_path, self.background = config, config_path, background
        self.parts = dict(parts)
        # the stored layout, decided once: a top run only across several collections (and tracking on)
        nest = config.tracking.enabled and len(self.parts) > 1
        self.layout: _Layout = (
            _UnderTopRun(config, config_path, scratch, background) if nest else _OneParent()
        )
        self.loggers: dict[str, Logger] = {}  # each collection's, started with the session
        self.open: set[str] = set()  # the collections whose runs are not closed yet
        self.recorded: dict[str, tuple[RecordedRuns, str]] = {}  # each collection's runs and parent's name
        self.result: ComparisonResult | None = None
        self.where: Recorded | None = None

    def start(self) -> None:
        """Every run the experiment has a parent for, started before any work: a failure while the runs
        are produced (a killed encoder, a dead worker) leaves each of them FAILED, not nothing."""
        self.layout.start({name: part.dataset for name, part in self.parts.items()})
        for name, part in self.parts.items():
            nested = self.layout.nested(name)
            logger = open_logger(
                part.config, self.config_path, part.dataset, part.scratch, background=self.background,
                nested=nested,
            )  # fmt: skip
            self.loggers[name] = logger
            self.open.add(name)
            logger.start()

    @contextmanager
    def collection(self, name: str) -> Iterator[Logger]:
        """One collection's logger (started with the session), its runs closed FINISHED on leaving (FAILED
        or KILLED on an error); a server that stopped answering is an error (exit 3) that keeps this
        collection's result."""
        logger = self.loggers[name]
        with closing_runs(self._closer(name)):
            yield logger
            self.open.discard(name)
            recorded = logger.finish()
        if recorded is None:
            return
        if recorded.lost:
            logged = logger.logged
            config = self.parts[name].config
            _raise_lost(recorded.uri, ComparisonResult(config, logged.primary_metric, {name: logged}))
        self.recorded[name] = (recorded, logger.run_name())

    def _closer(self, name: str) -> Callable[[str], None]:
        def close(status: str) -> None:
            self.open.discard(name)
            self.loggers[name].abort(status)

        return close

    def experiment(self, result: ComparisonResult) -> None:
        """The whole experiment, once every collection is logged: across several, the top run's pooled
        test, tables, description and files."""
        self.result = result
        self.layout.experiment(result, self.collection_run_ids())

    def collection_run_ids(self) -> dict[str, str]:
        return {
            name: recorded.run_ids[PARENT]
            for name, (recorded, _) in self.recorded.items()
            if PARENT in recorded.run_ids
        }

    def finish(self) -> None:
        """Close the top run (each collection's closed with its comparison) and say where everything was
        recorded."""
        self.where = self.layout.finish(self)

    def recorded_at(self, recorded: RecordedRuns, role: str, lines: list[str]) -> Recorded:
        """Where the experiment was recorded: ``recorded``'s run of ``role`` (the top run, or the one
        collection's parent run), each collection's runs, the lines that say so."""
        parent = recorded.run_ids.get(role)
        handles = {variant_handle(v): v for v in self.config.variants()}
        variants = {
            name: {handles[h]: run_id for h, run_id in runs.run_ids.items() if h in handles}
            for name, (runs, _) in self.recorded.items()
        }
        ids = self.collection_run_ids()
        return Recorded(recorded.uri, recorded.experiment_id, parent, ids, variants, tuple(lines))

    def check_recorded(self) -> None:
        """A server that stopped answering while the top run was written: an error (exit 3) keeping the
        result."""
        self.layout.check_recorded(self.result)

    def abort(self, status: str) -> None:
        """Close every run still open (the collections not reached yet, then the top run) as ``status``."""
        for name in [n for n in self.loggers if n in self.open]:
            self._closer(name)(status)
        self.layout.abort(status)


class _OneParent:
    """The stored layout of one collection: its comparison's parent run is the whole record."""

    def start(self, datasets: Mapping[str, Dataset]) -> None:
        """Nothing above the collection's runs to start."""

    def nested(self, name: str) -> Nesting | None:
        return None

    def experiment(self, result: ComparisonResult, collection_run_ids: Mapping[str, str]) -> None:
        """The collection's runs hold all of it."""

    def finish(self, session: TrackingSession) -> Recorded | None:
        """Where the one collection's runs went (None when nothing was recorded: tracking off)."""
        if not session.recorded:
            return None
        ((recorded, run_name),) = session.recorded.values()
        lines = recorded_lines(recorded, session.config.tracking.experiment, {PARENT: run_name})
        return session.recorded_at(recorded, PARENT, lines)

    def check_recorded(self, result: ComparisonResult | None) -> None:
        """A lost collection is raised as its runs close (``TrackingSession.collection``)."""

    def abort(self, status: str) -> None:
        """No run of its own to close."""


class _UnderTopRun:
    """The stored layout across several collections: each collection's comparison nested under a top run
    holding the pooled test."""

    def __init__(
        self, config: ExperimentConfig, config_path: Path | None, scratch: Path, background: bool
    ) -> None:
        self.top = TopRunLogger(
            config, config_path, code_version(), scratch / "mlflow-top", background=background
        )
        self.recorded: RecordedRuns | None = None

    def start(self, datasets: Mapping[str, Dataset]) -> None:
        self.top.start(dict(datasets))

    def nested(self, name: str) -> Nesting | None:
        return self.top.nested(name)

    def experiment(self, result: ComparisonResult, collection_run_ids: Mapping[str, str]) -> None:
        """The top run's pooled test, tables, description and files."""
        self.top.log_collections(result, dict(collection_run_ids))

    def finish(self, session: TrackingSession) -> Recorded | None:
        """Close the top run; where everything went (None when the server was lost meanwhile)."""
        self.recorded = top = self.top.finish()
        if top.lost:
            return None
        return session.recorded_at(top, TOP, top_run_lines(top, self.top, session.collection_run_ids()))

    def check_recorded(self, result: ComparisonResult | None) -> None:
        """A server that stopped answering while the top run was written: an error (exit 3) keeping the
        result."""
        if self.recorded is not None and self.recorded.lost:
            _raise_lost(self.recorded.uri, result)

    def abort(self, status: str) -> None:
        self.top.abort(status)


_Layout = _OneParent | _UnderTopRun


@dataclass(frozen=True)
class Part:
    """One collection as its MLflow runs need it: its config, its dataset and a scratch folder of its own."""

    config: ExperimentConfig
    dataset: Dataset
    scratch: Path


@contextmanager
def tracking_session(config: ExperimentConfig, config_path: Path | None, parts: Mapping[str, Part],
                     scratch: Path, *, background: bool) -> Iterator[TrackingSession]:  # fmt: skip
    """The experiment's MLflow record as one context manager: every run started on entry, every run closed
    on exit (FINISHED; FAILED on an error, KILLED on Ctrl-C); ``session.where`` is where it recorded (None
    when tracking is off)."""
    session = TrackingSession(config, config_path, parts, background=background, scratch=scratch)
    with closing_runs(session.abort):
        session.start()
        yield session
        session.finish()
    session.check_recorded()


def _raise_lost(uri: str, result: ComparisonResult | None) -> None:
    """A server that stopped answering: the result is kept (saved to a file, shown), the error is exit 3."""

    raise lost_error(uri, result, result_as_json(result) if result is not None else {})
