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
    from abcompare.outcome.results import ComparisonResult


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
                background: bool) -> Logger:  # fmt: skip
    """The comparison's MLflow logger, or one that does nothing when tracking is off."""
    from abcompare.tracking.logger import ComparisonLogger

    if not config.tracking.enabled:
        return NullLogger()
    return ComparisonLogger(
        config, config_path, dataset, code_version(), scratch / "mlflow", background=background
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
