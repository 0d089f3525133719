"""The README's sample output is the real one: the main job, run the way the README says, prints exactly the
block the README shows (run ids, times and experiment ids aside, which change every run)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from support.cli import REPO, cli_env

pytestmark = pytest.mark.slow


def _sample_module():
    spec = importlib.util.spec_from_file_location("readme_sample", REPO / "scripts" / "readme_sample.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_readme_shows_what_the_main_job_prints(tmp_path: Path, embedding_cache: Path) -> None:
    sample = _sample_module()
    stdout, stderr = sample.run_main_job(tmp_path, cli_env(embedding_cache))
    printed = sample.comparable(sample.sample(stdout, stderr))
    shown = sample.comparable(sample.readme_block())
    assert printed == shown, "run `python scripts/readme_sample.py` to refresh the README's sample output"
    assert any(line.startswith("Verdict dbsf: ") for line in shown)
    assert not any(line.startswith("│ ...") for line in shown)  # nothing elided
