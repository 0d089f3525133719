"""The README's main command, run verbatim (minus the install) from a folder laid out like the checkout."""

from __future__ import annotations

import subprocess
from pathlib import Path

from support.readme import readme_run_command


def test_the_documented_run_command_exits_zero(
    readme_main_job: tuple[Path, subprocess.CompletedProcess],
) -> None:
    """The run is ``readme_main_job`` (tests/runner/conftest.py), shared with the README sample's test."""
    assert readme_run_command()[:2] == ["abcompare", "run"]
    workdir, result = readme_main_job
    assert result.returncode == 0, result.stderr[-3000:]
    assert "dbsf vs control" in result.stdout
    assert "Verdict" in result.stdout
    assert "mlflow ui --backend-store-uri sqlite:///mlflow.db" in result.stdout
    assert (workdir / "mlflow.db").exists()
