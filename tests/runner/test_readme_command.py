"""The README's main command, run verbatim (minus the install) from a folder laid out like the checkout."""

from __future__ import annotations

import subprocess
from pathlib import Path

from mlflow import MlflowClient
from support.readme import doc_text, readme_run_command


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


def test_the_treatment_run_name_docs_mlflow_quotes_is_the_main_jobs(
    readme_main_job: tuple[Path, subprocess.CompletedProcess],
) -> None:
    """docs/mlflow.md quotes what the compare view's "Run Name" row reads for the main job's treatment: the
    name the run was given (issue 41: no figure in the docs that no test produces)."""
    workdir, result = readme_main_job
    assert result.returncode == 0, result.stderr[-3000:]
    (run_id,) = [line.split(": ", 1)[1] for line in result.stdout.splitlines() if line.startswith("  dbsf: ")]
    client = MlflowClient(tracking_uri=f"sqlite:///{workdir / 'mlflow.db'}")
    name = client.get_run(run_id.strip()).info.run_name
    assert name.startswith("dbsf · ndcg@10 ")
    assert f"reads `{name}` beside `control`" in doc_text("docs/mlflow.md")
