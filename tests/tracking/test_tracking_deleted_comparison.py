"""``abcompare report <id of a deleted comparison>`` refuses it with a line saying it is deleted (before:
it was rendered as if live, while the default "latest" rightly skips deleted runs)."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.cli import REPO, error_lines, invoke_cli

from abcompare.config import load_config
from abcompare.core.errors import TrackingError
from abcompare.runner import run_comparison
from abcompare.tracking.reader import load_comparison

PRODUCTION = REPO / "configs" / "runs" / "hr_docs_production.trec"


@pytest.mark.filterwarnings("ignore")
def test_a_deleted_comparison_is_refused_as_deleted(tmp_path: Path, embedding_cache) -> None:
    from mlflow.tracking import MlflowClient

    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    config_path = tmp_path / "c.yaml"
    config_path.write_text(
        f"name: c\ndataset: {{name: hr-docs, level: document}}\ncontrol:\n  retrievers: {{bm25: {{}}}}\n"
        f"treatments:\n  prod:\n    run: {{path: {PRODUCTION}}}\nevaluation: {{cutoffs: [10]}}\n"
        f"significance: {{n_resamples: 1000}}\nefficiency: {{repeats: 0}}\n"
        f"tracking: {{uri: '{uri}', experiment: deleted}}\n"
    )
    result = run_comparison(load_config(config_path), config_path=config_path)
    run_id = result.parent_run_id
    assert load_comparison(run_id, tracking_uri=uri).parent_run_id == run_id  # live: it loads
    MlflowClient(uri).delete_run(run_id)
    with pytest.raises(TrackingError, match="is deleted") as info:
        load_comparison(run_id, tracking_uri=uri)
    assert info.value.field == "RUN_ID"
    shown = invoke_cli(["report", run_id, "--tracking-uri", uri], tmp_path, embedding_cache)
    assert shown.returncode == 2, shown.stdout[-500:] + shown.stderr[-2000:]
    (line,) = error_lines(shown.stderr)
    assert f"run {run_id}" in line and "is deleted" in line
