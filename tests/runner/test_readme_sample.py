"""The README's sample output is the real one: the main job, run the way the README says, prints exactly the
block the README shows (run ids, times and experiment ids aside, which change every run)."""

from __future__ import annotations

import importlib.util
import subprocess
from pathlib import Path

import pytest
from support.cli import REPO
from support.readme import readme_run_command

pytestmark = pytest.mark.slow


def _sample_module():
    spec = importlib.util.spec_from_file_location("readme_sample", REPO / "scripts" / "readme_sample.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_readme_shows_what_the_main_job_prints(
    readme_main_job: tuple[Path, subprocess.CompletedProcess],
) -> None:
    """The main job is the README's own command run once (``readme_main_job``, shared with the command's
    test): the script's job is that command, so its output is the block the script writes."""
    sample = _sample_module()
    command = readme_run_command()
    assert command[2:] == [str(sample.CONFIG.relative_to(REPO))], command  # the script runs this job
    _, done = readme_main_job
    assert done.returncode == 0, done.stderr[-3000:]
    printed = sample.comparable(sample.sample(done.stdout, done.stderr))
    shown = sample.comparable(sample.readme_block())
    assert printed == shown, "run `python scripts/readme_sample.py` to refresh the README's sample output"
    assert any(line.startswith("Verdict dbsf: ") for line in shown)
    assert not any(line.startswith("│ ...") for line in shown)  # nothing elided
