"""A variant run's hits are logged once per format that is proportionate to their size (issue 38): as
compressed Parquet always (what ``load_comparison`` and the notebook read back, the same table), and as a
TREC run file only up to ``RUN_FILE_MAX_HITS`` hits (10k queries x 1,000 hits would be 10 million lines of
text a variant that nothing reads back)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from support.cli import REPO

import abcompare.tracking.artifacts as artifacts
from abcompare.config import load_config
from abcompare.runner import run_comparison
from abcompare.tracking.layout import DISTRIBUTION_PLOT, HITS_FILE, RUN_FILE

PRODUCTION = REPO / "configs" / "runs" / "hr_docs_production.trec"


pytestmark = pytest.mark.filterwarnings("ignore:.*changes nothing")


@pytest.fixture(scope="module")
def logged(tmp_path_factory: pytest.TempPathFactory) -> tuple:
    """A comparison run with tracking off, and its config with tracking on: what ``variant_files`` gets."""
    folder = tmp_path_factory.mktemp("hits")
    config_path = folder / "c.yaml"
    config_path.write_text(
        f"name: hits\ndataset: {{name: hr-docs, level: document}}\ncontrol:\n  run: {{path: {PRODUCTION}}}\n"
        f"treatments:\n  same:\n    run: {{path: {PRODUCTION}}}\n"
        "evaluation: {cutoffs: [10], metrics: [ndcg], convention: trec}\n"
        "significance: {n_resamples: 1000}\ntracking: {enabled: false}\n"
    )
    config = load_config(config_path)
    control = run_comparison(config, config_path=config_path).variants["control"]
    on = config.model_copy(update={"tracking": config.tracking.model_copy(update={"enabled": True})})
    return on, control


def test_a_small_run_carries_its_hits_as_parquet_and_as_a_trec_file(logged: tuple, tmp_path: Path) -> None:
    config, control = logged
    files = artifacts.variant_files(config, control, tmp_path)
    assert set(files) == {HITS_FILE, RUN_FILE, DISTRIBUTION_PLOT}
    pd.testing.assert_frame_equal(pd.read_parquet(files[HITS_FILE]), control.run)  # read back as logged
    lines = Path(files[RUN_FILE]).read_text().splitlines()
    assert len(lines) == len(control.run)  # one line a hit


def test_a_run_above_the_bound_carries_its_hits_once(
    logged: tuple, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config, control = logged
    assert len(control.run) > 10
    monkeypatch.setattr(artifacts, "RUN_FILE_MAX_HITS", len(control.run) - 1)  # the bound, one hit below
    files = artifacts.variant_files(config, control, tmp_path)
    assert set(files) == {HITS_FILE, DISTRIBUTION_PLOT}  # no TREC file
    pd.testing.assert_frame_equal(pd.read_parquet(files[HITS_FILE]), control.run)
    assert not (Path(files[HITS_FILE]).parent / "run.trec").exists()
