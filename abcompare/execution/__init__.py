"""Execution backends: who produces each variant's run and encodes the corpus, in this process or on Ray.

The runner hands "produce the run of each variant" to an executor and consumes the runs in config order;
evaluation, statistics and MLflow stay in the driver. ``local`` (the default) is the in-process loop and
never imports Ray; ``ray`` sends the same stage functions to Ray tasks and encodes through a Ray Data
pipeline. Nothing below the runner knows which backend ran it, and the numbers are the same.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from abcompare.execution.base import (
    Executor,
    Retriever,
    VariantRun,
    given_run,
    precomputed_run,
    require_corpus,
)
from abcompare.execution.local import LocalExecutor

if TYPE_CHECKING:
    from abcompare.config import ExecutionSettings
    from abcompare.core.progress import Reporter

__all__ = [
    "Executor",
    "Retriever",
    "VariantRun",
    "given_run",
    "open_executor",
    "precomputed_run",
    "require_corpus",
]


@contextmanager
def open_executor(settings: ExecutionSettings, reporter: Reporter) -> Iterator[Executor]:
    """The configured executor, ready to use; a Ray it started is shut down on exit, a joined one left."""
    if settings.backend == "local":
        yield LocalExecutor(reporter)
        return
    from abcompare.execution.ray_session import ray_session

    with ray_session(settings, reporter) as session:
        from abcompare.execution.ray import RayExecutor

        yield RayExecutor(settings, session, reporter)
