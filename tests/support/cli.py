"""The `abcompare` command, run two ways: in this process (:func:`invoke_cli`, ``abcompare.cli.main`` called
with the arguments, most tests) and as a user runs it (:func:`run_cli`, the installed console script,
else the module, in a new process); the environment it runs in, and its one-line errors.

The rule: a CLI test calls :func:`invoke_cli`, which returns what :func:`run_cli` returns (``returncode``,
``stdout``, ``stderr``), so a test switches by changing one name. Only what a process alone shows stays a
real subprocess:

- the console-script entry point and ``python -m abcompare.cli`` (the exit code reaches the shell);
- ``--help`` and ``--version`` at start-up (what a fresh interpreter imports and prints);
- SIGINT/Ctrl-C and SIGKILL, with the forked MLflow writer (a signal to a process; orphaned runs are
  found by their dead owner's process id, and the pytest process never dies);
- the installed wheel, the README's commands run by a shell, and stdin/pipes;
- runs that start a Ray cluster or an MLflow server owned by the command;
- settings a library reads once, at its import (the Hugging Face hub's HF_HUB_* variables, a
  ``sitecustomize`` that hides a package), and ``python -c`` scripts that replace a module first.

A few end-to-end tests run both ways (:data:`CLI_WAYS`), so the two cannot drift apart.

:func:`invoke_cli` gives each call what a new process would have and puts everything back afterwards:
the environment (the same rules as :func:`cli_env`; ``tempfile`` reads its TMPDIR again), the working
directory, ``sys.argv``, stdout and stderr (captured; rich consoles and click resolve ``sys.stdout`` and
``sys.stderr`` when they print, and the command makes its consoles at call time), the SIGINT/SIGTERM
handlers, the unraisable hook, the warning filters and display, the levels, handlers and flags of the
loggers that existed before, and MLflow's process-wide state (tracking and registry URI, the fluent
active-run stack: a run left open is ended FAILED and reported as a failure of the call). What it keeps,
on purpose: imported modules and the models they loaded (a model loads once per session). ``run`` forks
its MLflow writer from the pytest process as it does from the console script; the writer drops the
database connections it inherits. Output written to the file descriptors directly (a C library, a child
process) is not captured: a test about that runs a subprocess.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import signal
import subprocess
import sys
import tempfile
import traceback
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

#: The checkout's root (configs/, README.md, scripts/).
REPO = Path(__file__).resolve().parents[2]

#: ``abcompare run`` arguments that skip the latency timing pass (it loads the model and re-runs every
#: variant's queries to time them): for the runs whose tests read no cost figure (no quality number
#: depends on the pass; ``efficiency.repeats`` is not part of the config's fingerprint).
NO_TIMING = ["--set", "efficiency.repeats=0"]

#: The warning filters of this interpreter before any test ran (Python's defaults, plus -W and
#: PYTHONWARNINGS): what a new `abcompare` process starts with, not pytest's per-test filters.
STARTUP_WARNING_FILTERS = list(warnings.filters)


def cli_command() -> list[str]:
    """The command line that starts `abcompare` (arguments follow)."""
    exe = Path(sys.executable).with_name("abcompare")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "abcompare.cli"]


def cli_env(cache_dir: Path, **extra: str) -> dict[str, str]:
    """This process's environment without MLflow's and Ray's variables (a test names its own), with the
    embedding cache at ``cache_dir``, MLflow's URL banner off and the model hub offline."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MLFLOW_", "RAY_"))}
    env.update(ABCOMPARE_CACHE_DIR=str(cache_dir), MLFLOW_SUPPRESS_PRINTING_URL_TO_STDOUT="true",
               HF_HUB_OFFLINE="1", **extra)  # fmt: skip
    return env


def run_cli(
    args: list[str], cwd: Path, cache_dir: Path, timeout: float = 600, **env: str
) -> subprocess.CompletedProcess:
    """Run the console script (the very command a user types) in ``cwd`` and capture its output."""
    return subprocess.run(
        cli_command() + args, cwd=cwd, env=cli_env(cache_dir, **env), capture_output=True, text=True,
        timeout=timeout,
    )  # fmt: skip


@dataclass
class CliResult:
    """What a finished command left: the attributes a test reads of ``subprocess.CompletedProcess``."""

    args: list[str]
    returncode: int
    stdout: str
    stderr: str


def invoke_cli(args: list[str], cwd: Path, cache_dir: Path, timeout: float = 600, **env: str) -> CliResult:
    """Run ``abcompare <args>`` in this process, in ``cwd`` with :func:`cli_env`'s environment, and capture
    its output: what :func:`run_cli` returns, without starting an interpreter. ``timeout`` is accepted for
    the same signature and not enforced (nothing can stop a call in its own thread)."""
    from abcompare.cli import main

    argv = [str(arg) for arg in args]
    stdout, stderr = io.StringIO(), io.StringIO()
    with (
        isolated_process_state(cli_env(cache_dir, **env), Path(cwd), ["abcompare", *argv]),
        contextlib.redirect_stdout(stdout),
        contextlib.redirect_stderr(stderr),
    ):
        try:
            code = main(argv)
        except SystemExit as exc:  # what the interpreter makes of an exit inside the command
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except KeyboardInterrupt:  # the command handles its own: this one stops pytest
            raise
        except BaseException:  # noqa: BLE001 - uncaught (ABCOMPARE_DEBUG=1): a traceback and exit 1
            traceback.print_exc()
            code = 1
        left_open = _end_active_mlflow_runs()
        if left_open:
            print(f"invoke_cli: {left_open} MLflow run(s) left active, ended FAILED", file=sys.stderr)
            code = code or 1
    return CliResult(args=argv, returncode=code, stdout=stdout.getvalue(), stderr=stderr.getvalue())


#: The two ways a test can run the command, for the end-to-end tests that run both (same signature).
CLI_WAYS: dict[str, Callable[..., CliResult | subprocess.CompletedProcess]] = {
    "in-process": invoke_cli,
    "subprocess": run_cli,
}


@contextlib.contextmanager
def isolated_process_state(env: dict[str, str], cwd: Path, argv: list[str]) -> Iterator[None]:
    """Within the block: exactly ``env`` as the environment, ``cwd`` as the working directory, ``argv`` as
    ``sys.argv``, the interpreter's start-up warning filters. Afterwards every global the command may
    change is what it was before (see the module docstring)."""
    saved_env = dict(os.environ)
    saved_cwd = os.getcwd()
    saved_argv = sys.argv[:]
    saved_signals = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    saved_hooks = (sys.unraisablehook, sys.excepthook)
    saved_loggers = _logger_state()
    saved_mlflow = _mlflow_uris()
    saved_tempdir = tempfile.tempdir
    try:
        with warnings.catch_warnings():  # filters and showwarning come back on exit
            warnings.filters[:] = STARTUP_WARNING_FILTERS
            warnings._filters_mutated()  # each call shows a warning as a new process would: not once only
            os.environ.clear()
            os.environ.update(env)
            os.chdir(cwd)
            sys.argv = argv
            tempfile.tempdir = None  # found again from this environment's TMPDIR, as a new process would
            yield
    finally:
        os.environ.clear()
        os.environ.update(saved_env)
        os.chdir(saved_cwd)
        sys.argv = saved_argv
        tempfile.tempdir = saved_tempdir
        for sig, handler in saved_signals.items():
            signal.signal(sig, handler)
        sys.unraisablehook, sys.excepthook = saved_hooks
        _restore_loggers(saved_loggers)
        _restore_mlflow_uris(saved_mlflow)


def _all_loggers() -> dict[str, logging.Logger]:
    loggers = {
        name: logger
        for name, logger in logging.root.manager.loggerDict.items()
        if isinstance(logger, logging.Logger)
    }
    return {"": logging.root, **loggers}


def _logger_state() -> tuple[int, dict[str, tuple[logging.Logger, int, list, bool, bool]]]:
    """Every existing logger's level, handlers, propagation and disabled flag, and the global disable."""
    return logging.root.manager.disable, {
        name: (logger, logger.level, logger.handlers[:], logger.propagate, logger.disabled)
        for name, logger in _all_loggers().items()
    }


def _restore_loggers(state: tuple[int, dict[str, tuple[logging.Logger, int, list, bool, bool]]]) -> None:
    disable, loggers = state
    logging.disable(disable)
    for logger, level, handlers, propagate, disabled in loggers.values():
        logger.setLevel(level)
        logger.handlers[:] = handlers
        logger.propagate, logger.disabled = propagate, disabled


def _mlflow_uris() -> tuple[object, object] | None:
    """MLflow's tracking and registry URIs as set in this process (``None`` when MLflow is not imported:
    then there is nothing to restore, and importing it here would cost a second)."""
    tracking = sys.modules.get("mlflow.tracking._tracking_service.utils")
    registry = sys.modules.get("mlflow.tracking._model_registry.utils")
    if tracking is None or registry is None:
        return None
    return tracking._tracking_uri, registry._registry_uri


def _restore_mlflow_uris(saved: tuple[object, object] | None) -> None:
    tracking = sys.modules.get("mlflow.tracking._tracking_service.utils")
    registry = sys.modules.get("mlflow.tracking._model_registry.utils")
    if tracking is not None and registry is not None:
        tracking._tracking_uri, registry._registry_uri = saved if saved is not None else (None, None)


def _end_active_mlflow_runs() -> int:
    """End every run left on MLflow's fluent active-run stack (the command uses none) as FAILED; how many."""
    fluent = sys.modules.get("mlflow.tracking.fluent")
    if fluent is None:
        return 0
    ended = 0
    while fluent.active_run() is not None:
        fluent.end_run(status="FAILED")
        ended += 1
    return ended


def error_lines(stderr: str) -> list[str]:
    """The ``error: ...`` lines of a command's stderr (a bad input gives exactly one)."""
    return [line for line in stderr.splitlines() if line.startswith("error:")]
