"""A sweep end to end: 24 fusion settings run as treatments, the grid table, and the tuned comparison."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from e2e_support import REPO, run_cli
from mlflow import MlflowClient

SWEEP = str(REPO / "configs" / "fusion_sweep.yaml")


@pytest.fixture(scope="module")
def sweep_run(tmp_path_factory: pytest.TempPathFactory, embedding_cache: Path):
    workdir = tmp_path_factory.mktemp("sweep")
    result = run_cli(
        ["run", SWEEP, "--json", "--set", "significance.n_resamples=1000"], workdir, embedding_cache
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return workdir, json.loads(result.stdout), result.stderr


def test_the_grid_lists_every_candidate_best_first_with_its_settings_and_cost(sweep_run):
    _, payload, _ = sweep_run
    grid = payload["grid"]
    assert len(grid) == 24
    assert [row["delta"] for row in grid] == sorted((row["delta"] for row in grid), reverse=True)
    methods = {row["fusion.method"] for row in grid}
    assert methods == {"rrf", "rsf", "dbsf", "dbsf-3sigma"}
    assert {row["fusion.weights.bm25"] for row in grid} == {0.25, 0.5, 1.0, 1.5, 2.0, 4.0}
    assert all(row["metric"] == "ndcg@10" and row["efficiency.seconds_per_query"] > 0 for row in grid)
    same_as_control = next(r for r in grid if r["fusion.method"] == "rrf" and r["fusion.weights.bm25"] == 1.0)
    assert same_as_control["delta"] == 0.0  # the control's own setting is a candidate too
    rows = {(r["treatment"], r["metric"]): r for r in payload["comparison"]}
    for row in grid:
        assert row["p_adjusted"] == rows[(row["candidate"], "ndcg@10")]["p_adjusted"]


def test_the_tuned_comparison_reports_the_choice_made_without_the_queries_it_scores(sweep_run):
    _, payload, _ = sweep_run
    tuned = payload["tuned"]
    assert tuned["metric"] == "ndcg@10" and tuned["folds"] == 5 and len(tuned["choices"]) == 5
    assert tuned["ci_low"] <= tuned["delta"] <= tuned["ci_high"]
    assert 0 < tuned["p_value"] <= 1
    assert tuned["most_chosen"] in {row["candidate"] for row in payload["grid"]}
    assert tuned["sentence"].startswith("Tuning over this grid of 24 settings")


def test_every_grid_point_is_a_child_run_with_its_settings_as_params(sweep_run):
    workdir, payload, _ = sweep_run
    client = MlflowClient(tracking_uri=f"sqlite:///{workdir / 'mlflow.db'}")
    children = {name: client.get_run(run_id) for name, run_id in payload["variant_run_ids"].items()}
    assert len(children) == 25
    point = children["fusion.method=dbsf,fusion.weights.bm25=4.0"]
    assert point.data.params["fusion.method"] == "dbsf"
    assert point.data.params["fusion.weights.bm25"] == "4.0"
    assert point.data.metrics["efficiency.seconds_per_query"] > 0
    assert all(run.info.status == "FINISHED" for run in children.values())


def test_the_console_shows_the_grid_and_the_tuned_sentence(tmp_path, embedding_cache):
    args = ["run", SWEEP, "--set", "significance.n_resamples=200", "--set", "tracking.enabled=false"]
    result = run_cli(args, tmp_path, embedding_cache)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "sweep: 24 candidates vs control on ndcg@10, best first" in result.stdout
    assert "Tuning over this grid of 24 settings" in " ".join(result.stdout.split())
    assert "sweep: 24 grid points -> 24 candidates" in result.stderr  # said before any work starts
