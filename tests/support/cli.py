"""The `abcompare` command as a user runs it (the installed console script, else the module), the
environment it runs in, and its one-line errors."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

#: The checkout's root (configs/, README.md, scripts/).
REPO = Path(__file__).resolve().parents[2]

#: ``abcompare run`` arguments that skip the latency timing pass (it loads the model and re-runs every
#: variant's queries to time them): for the runs whose tests read no cost figure (no quality number
#: depends on the pass; ``efficiency.repeats`` is not part of the config's fingerprint).
NO_TIMING = ["--set", "efficiency.repeats=0"]


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


def error_lines(stderr: str) -> list[str]:
    """The ``error: ...`` lines of a command's stderr (a bad input gives exactly one)."""
    return [line for line in stderr.splitlines() if line.startswith("error:")]
