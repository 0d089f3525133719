"""What both loggers share (:class:`~abcompare.tracking.logger.ComparisonLogger` for a comparison,
:class:`~abcompare.tracking.top_run.TopRunLogger` for the top run across collections): one writer session,
the config's hash and the start time; a run opened with its settings, its config and its query sets; files
sent as they are; closing. Each logger lays its own figures out."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from abcompare.tracking.layout import (
    CONFIG_DIR,
    EXPERIMENT_KIND,
    EXPERIMENT_KIND_TAG,
    RESOLVED_CONFIG_FILE,
)
from abcompare.tracking.store import flatten, owner_tags
from abcompare.tracking.writer import Command, RecordedRuns, open_session

if TYPE_CHECKING:
    from abcompare.config import ExperimentConfig
    from abcompare.config.models import TrackingSettings
    from abcompare.data.dataset import Dataset


def open_store(send: Callable[..., None], tracking: TrackingSettings) -> None:
    """Ask the writer to open the configured store and experiment: the first command of every logger."""
    send(
        Command.OPEN,
        tracking.uri,
        tracking.experiment,
        tracking.artifact_location,
        owner_tags(),
        {EXPERIMENT_KIND_TAG: EXPERIMENT_KIND},
    )


def stamped(base: str, started: datetime) -> str:
    """A run's name: its base and when it started, so runs of one config can be told apart."""
    return f"{base} {started:%Y-%m-%d %H:%M:%S}"


def header_width(key: str) -> int:
    """A runs-table column wide enough to show its whole metric key (about 7 px a character)."""
    return min(40 + 7 * len(key), 420)


@dataclass(frozen=True)
class Nesting:
    """Where a collection's comparison is recorded: its parent run goes under the top run
    ``parent_run_id`` and is tagged ``abcompare.collection=<collection>``."""

    parent_run_id: str
    collection: str
    #: The top run's name and its page (the collection's report.html leads back to it), when known.
    part_of: tuple[str, str] | None = None


class RunLogger:
    """A logger's writer session and the steps every logged run takes (subclassed by each logger)."""

    def __init__(
        self,
        config: ExperimentConfig,
        config_path: Path | None,
        version: str,
        staging: Path,
        *,
        background: bool = False,
    ) -> None:
        self.config = config
        self.config_path = config_path
        self.version = version
        self.session = open_session(staging, background=background)
        self.background = self.session.background
        self.config_hash = config.fingerprint()
        self.started = datetime.now()

    def _send(self, command: Command, *args: Any, **kwargs: Any) -> None:
        self.session.send(command, *args, **kwargs)

    def _open_run(
        self, handle: str, name: str, tags: Mapping[str, str], settings: Mapping[str, Any], **nesting: str
    ) -> None:
        """Open the store and the run ``handle``: its tags and description, its settings as params, the
        config file as given and as resolved."""
        cfg = self.config
        open_store(self._send, cfg.tracking)
        self._send(Command.START_RUN, handle, name, dict(tags), description=cfg.description, **nesting)
        self._send(Command.LOG, handle, params=flatten(settings))
        if self.config_path is not None:
            self._send(
                Command.COPY, handle, f"{CONFIG_DIR}/{Path(self.config_path).name}", str(self.config_path)
            )
        self._send(Command.JSON, handle, RESOLVED_CONFIG_FILE, cfg.model_dump(mode="json"))

    def _log_queries(self, handle: str, name: str, dataset: Dataset, digest: str) -> None:
        """A query set as an MLflow dataset input of the run."""
        self._send(
            Command.DATASET,
            handle,
            dataset.queries,
            name=name,
            source=str(dataset.source or dataset.name),
            digest=digest[:36],
        )

    def _send_files(self, handle: str, files: Mapping[str, str | Path]) -> None:
        """Each file to its artifact path: a path copied, a text written."""
        for artifact, content in files.items():
            if isinstance(content, Path):
                self._send(Command.COPY, handle, artifact, str(content))
            else:
                self._send(Command.TEXT, handle, artifact, content)

    def _finish(self, handles: list[str]) -> RecordedRuns:
        """Close the runs in order and wait until everything is written; where it was recorded."""
        for handle in handles:
            self._send(Command.END_RUN, handle)
        return self.session.finish()

    def abort(self, status: str) -> None:
        """Something failed (``FAILED``) or was interrupted (``KILLED``): close every open run so."""
        self.session.abort(status)
