"""Start-up benchmark: wall time of ``abcompare --help`` against a bare interpreter, and the heavy imports.

``abcompare --help`` must stay well under a second: heavy modules (torch, sentence_transformers, mlflow,
matplotlib) are imported only inside the functions that need them. The check lists any that leak in.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass

from benchmarks.harness import REPO_ROOT, fmt_seconds, wall_time

HEAVY_MODULES: tuple[str, ...] = (
    "torch",
    "sentence_transformers",
    "transformers",
    "mlflow",
    "matplotlib",
    "bm25s",
    "scipy",
    "pandas",
    "pyarrow",
)
_PROBE = (
    "import sys; from abcompare.cli import app; "
    "import json; print(json.dumps([m for m in {mods} if m in sys.modules]))"
)


@dataclass
class Startup:
    """Wall seconds per repeat of each command, and the heavy modules loaded by importing the CLI."""

    help_seconds: list[float]
    python_seconds: list[float]
    heavy_loaded: list[str]


def heavy_modules_loaded() -> list[str]:
    """The heavy modules that ``import abcompare.cli`` loads (in a fresh interpreter)."""
    code = _PROBE.format(mods=list(HEAVY_MODULES))
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def run_startup(repeats: int = 7) -> Startup:
    """Time ``abcompare --help`` and ``python -c pass`` (the floor) ``repeats`` times each."""
    wall_time(["abcompare", "--help"], repeats=1)  # warm the page cache
    return Startup(
        help_seconds=wall_time(["abcompare", "--help"], repeats=repeats),
        python_seconds=wall_time([sys.executable, "-c", "pass"], repeats=repeats),
        heavy_loaded=heavy_modules_loaded(),
    )


def startup_table(result: Startup) -> tuple[list[str], list[Sequence[str]]]:
    """Header and rows: median and best wall time of each command."""
    header = ["command", "median", "best", "heavy modules imported"]
    rows = [
        ["abcompare --help", fmt_seconds(statistics.median(result.help_seconds)),
         fmt_seconds(min(result.help_seconds)), ", ".join(result.heavy_loaded) or "none"],
        ["python -c pass (floor)", fmt_seconds(statistics.median(result.python_seconds)),
         fmt_seconds(min(result.python_seconds)), "—"],
    ]  # fmt: skip
    return header, rows
