"""``abcompare run`` with a judge that cannot be used: an endpoint that is down stops the run with one
located ``error:`` line (exit 2) after its bounded tries, and no MLflow run is left RUNNING."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from support.cli import error_lines, invoke_cli
from support.configs import MINIMAL

pytestmark = pytest.mark.slow


def test_a_judge_endpoint_that_is_down_is_one_located_error_and_no_run_is_left_running(
    tmp_path: Path, embedding_cache: Path
) -> None:
    config = tmp_path / "judged.yaml"
    config.write_text(
        MINIMAL + "judge: {provider: openai, base_url: 'http://127.0.0.1:9/v1', model: m, retries: 1, "
        "timeout_seconds: 2, max_pairs: 3, agreement_pairs: 2}\n"
    )
    result = invoke_cli(["run", str(config)], tmp_path, embedding_cache)
    assert result.returncode == 2, result.stderr[-2000:]
    [line] = error_lines(result.stderr)
    assert "judge.base_url" in line and "did not answer after 2 tries" in line, line
    with sqlite3.connect(f"file:{tmp_path / 'mlflow.db'}?mode=ro", uri=True) as db:
        statuses = [row[0] for row in db.execute("select status from runs")]
    assert statuses and "RUNNING" not in statuses and "FAILED" in statuses


def test_a_python_judge_nobody_handed_over_is_refused_at_its_key_before_any_work(
    tmp_path: Path, embedding_cache: Path
) -> None:
    config = tmp_path / "python-judge.yaml"
    config.write_text(MINIMAL + "judge: {provider: python, name: lengthy, max_pairs: 3}\n")
    result = invoke_cli(["run", str(config)], tmp_path, embedding_cache)
    assert result.returncode == 2, result.stderr[-2000:]
    [line] = error_lines(result.stderr)
    assert str(config) in line and "judge.name" in line and "'lengthy'" in line, line
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "mlflow.db").exists(), "refused before any MLflow store or run was made"
