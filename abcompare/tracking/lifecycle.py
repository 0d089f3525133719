"""A comparison's MLflow lifecycle, as the runner drives it: the store checked before any work, the logger
opened (or a silent one when tracking is off), every run closed whatever happens, and where the comparison
was recorded put on the result."""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from abcompare.tracking.logger import Logger, NullLogger

if TYPE_CHECKING:
    from abcompare.config import ExperimentConfig, TrackingSettings
    from abcompare.data.dataset import Dataset
    from abcompare.outcome.results import CollectionsResult, ComparisonResult
    from abcompare.tracking.collections import CollectionsLogger, Nesting, NullCollectionsLogger


def code_version() -> str:
    """The git commit of the abcompare checkout when there is one, else the package version."""
    from abcompare import __version__

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
    from abcompare.tracking.store import check_reachable, resolve_tracking_uri

    check_reachable(resolve_tracking_uri(tracking.uri))


def open_logger(config: ExperimentConfig, config_path: Path | None, dataset: Dataset, scratch: Path, *,
                background: bool, nested: Nesting | None = None) -> Logger:  # fmt: skip
    """The comparison's MLflow logger, or one that does nothing when tracking is off. ``nested`` (from
    :meth:`CollectionsLogger.nested <abcompare.tracking.collections.CollectionsLogger.nested>`): the
    comparison is one collection's, its parent run goes under the whole comparison's top run."""
    from abcompare.tracking.logger import ComparisonLogger

    if not config.tracking.enabled:
        return NullLogger()
    return ComparisonLogger(
        config, config_path, dataset, code_version(), scratch / "mlflow", background=background, nested=nested
    )


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


def record(result: ComparisonResult, recorded: Any, logger: Any) -> None:
    """Put where the comparison was recorded on the result; a lost server is an error (exit 3) that keeps
    the result."""
    from abcompare.tracking.logger import PARENT, recorded_lines, variant_handle

    if recorded.lost:  # the server stopped answering: keep the result, say it is not recorded
        from abcompare.outcome.console import result_as_json
        from abcompare.tracking.store import lost_error

        raise lost_error(recorded.uri, result, result_as_json(result))
    result.tracking_uri = recorded.uri
    result.parent_run_id = recorded.run_ids.get(PARENT)
    result.variant_run_ids = {name: recorded.run_ids[variant_handle(name)] for name in result.variants}
    result.recorded = recorded_lines(recorded, result.config.tracking.experiment, {PARENT: logger.run_name()})
    result.ui_hint = result.recorded[-1].removeprefix("View: ")


# ------------------------------------------------------------------------------------------ collections
def open_collections_logger(config: ExperimentConfig, config_path: Path | None, scratch: Path, *,
                            background: bool) -> CollectionsLogger | NullCollectionsLogger:  # fmt: skip
    """The MLflow logger of a comparison across collections (``config.datasets``): its top run, under which
    each collection's comparison is nested; one that does nothing when tracking is off.

    The runner's calls, in order (``closing_runs`` leaves nothing RUNNING when a collection fails: the
    collections that finished stay FINISHED, the failing one's runs and the top run are marked FAILED, or
    KILLED on Ctrl-C)::

        top = open_collections_logger(config, config_path, tmp, background=background_tracking)
        with closing_runs(top.abort):
            top.start()                              # the top run exists from here: nested() has its id
            for name, collection in config.collections().items():
                ... open_logger(collection, config_path, dataset, tmp2, background=...,
                                nested=top.nested(name))
                ... that comparison as today (its own closing_runs, finish, record)
            result = CollectionsResult(...)          # collection_run_ids: each collection's parent_run_id
            top.log_collections(result)              # the files (forest, report.html) are made there
            recorded = top.finish()
        if recorded is not None:
            record_collections(result, recorded, top)
    """
    from abcompare.tracking.collections import CollectionsLogger, NullCollectionsLogger

    if not config.tracking.enabled:
        return NullCollectionsLogger()
    return CollectionsLogger(config, config_path, code_version(), scratch / "mlflow-collections",
                             background=background)  # fmt: skip


def record_collections(result: CollectionsResult, recorded: Any, logger: Any) -> None:
    """Put where the comparison across collections was recorded on the result (the top run, each
    collection's run, the lines for the console); a lost server is an error (exit 3) that keeps it."""
    from abcompare.tracking.collections import TOP, collection_run_ids
    from abcompare.tracking.layout import view_url
    from abcompare.tracking.store import ui_command

    if recorded.lost:
        from abcompare.outcome.console import collections_as_json
        from abcompare.tracking.store import lost_error

        raise lost_error(recorded.uri, result, collections_as_json(result))
    result.tracking_uri = recorded.uri
    result.parent_run_id = recorded.run_ids.get(TOP)
    result.collection_run_ids = collection_run_ids(result)
    links = logger.links({TOP: result.parent_run_id, **result.collection_run_ids})
    lines = [
        f"MLflow: experiment {result.config.tracking.experiment}, run {logger.run_name()} "
        f"({result.parent_run_id}), one nested comparison per collection"
    ]
    lines += [f"  {name}: {run_id}" for name, run_id in result.collection_run_ids.items()]
    lines.append(f"  the whole comparison: {links.get(TOP, '')}")
    command, base = ui_command(recorded.uri)
    url = view_url(base, recorded.experiment_id)
    lines.append(f"View: {command}, then open {url}" if command else f"View: {url}")
    result.recorded = lines
    result.ui_hint = lines[-1].removeprefix("View: ")
