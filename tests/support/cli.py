"""The `abcompare` command as a user runs it: the installed console script, else the module."""

from __future__ import annotations

import sys
from pathlib import Path


def cli_command() -> list[str]:
    """The command line that starts `abcompare` (arguments follow)."""
    exe = Path(sys.executable).with_name("abcompare")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "abcompare.cli"]
