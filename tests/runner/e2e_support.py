"""Helpers for end-to-end tests: run the installed `abcompare` command the way a user does."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def cli_env(cache_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MLFLOW_")}
    env["ABCOMPARE_CACHE_DIR"] = str(cache_dir)
    env["MLFLOW_SUPPRESS_PRINTING_URL_TO_STDOUT"] = "true"
    env["HF_HUB_OFFLINE"] = "1"
    return env


def run_cli(args: list[str], cwd: Path, cache_dir: Path, timeout: float = 600) -> subprocess.CompletedProcess:
    """Run the installed console script (the very command a user types) and capture its output."""
    exe = Path(sys.executable).with_name("abcompare")
    command = [str(exe)] if exe.exists() else [sys.executable, "-m", "abcompare.cli"]
    return subprocess.run(
        command + args, cwd=cwd, env=cli_env(cache_dir), capture_output=True, text=True, timeout=timeout
    )
