"""MLflow metrics are data: every figure a comparison logs, read back with ``MlflowClient``, is the float
the comparison computed, every digit (``==``, not approx); rounding belongs to what a person reads. With a
non-inferiority margin the test's figures are logged beside the primary comparison's."""

from __future__ import annotations

import pytest
from mlflow import MlflowClient

from abcompare.config import ExperimentConfig
from abcompare.runner import run_comparison


@pytest.fixture(scope="module")
def logged(tmp_path_factory: pytest.TempPathFactory):
    folder = tmp_path_factory.mktemp("as-computed")
    uri = f"sqlite:///{folder / 'mlflow.db'}"
    config = ExperimentConfig.model_validate(
        {
            "name": "as-computed",
            "dataset": {"name": "hr-docs"},
            "control": {"retrievers": {"bm25": {}}},
            "treatments": {"loose": {"retrievers": {"bm25": {"k1": 0.9}}}},
            "significance": {"n_resamples": 200, "non_inferiority_margin": 0.01},
            "tracking": {"uri": uri, "artifact_location": str(folder / "mlruns")},
            "efficiency": {"repeats": 0},  # no latency timing pass: the quality metrics are pinned here
        }
    )
    result = run_comparison(config)
    return result, MlflowClient(tracking_uri=uri)


def test_variant_means_are_logged_with_every_digit(logged) -> None:
    result, client = logged
    for name, run_id in result.variant_run_ids.items():
        metrics = client.get_run(run_id).data.metrics
        computed = result.variants[name].means
        for metric in ("ndcg@10", "recall@5", "judged@10"):
            assert metrics[metric.replace("@", "_at_")] == float(computed[metric])
        assert metrics["ndcg_at_10"] != round(metrics["ndcg_at_10"], 4)  # not rounded for display
    parent = client.get_run(result.parent_run_id).data.metrics
    assert parent["mean.control.ndcg_at_10"] == float(result.variants["control"].means["ndcg@10"])


def test_the_primary_comparison_and_the_non_inferiority_test_are_logged_as_computed(logged) -> None:
    result, client = logged
    row = result.comparison[result.comparison["role"] == "primary"].iloc[0]
    parent = client.get_run(result.parent_run_id).data.metrics
    child = client.get_run(result.variant_run_ids["loose"]).data.metrics
    expected = {
        "delta": row["delta"], "ci_low": row["ci_low"], "ci_high": row["ci_high"], "p_raw": row["p_primary"],
        "p_adjusted": row["p_adjusted"], "non_inferiority_p_raw": row["p_non_inferiority"],
        "non_inferiority_p": row["p_non_inferiority_adjusted"],
        "non_inferiority": 1.0 if row["non_inferiority"] == "non-inferior" else 0.0,
    }  # fmt: skip
    for field, value in expected.items():
        assert parent[f"_vs_control.loose.ndcg_at_10.{field}"] == float(value), field
        assert child[f"_vs_control.ndcg_at_10.{field}"] == float(value), field
    assert parent["_vs_control.loose.ndcg_at_10.delta"] != round(float(row["delta"]), 4)


def test_the_runs_view_shows_the_non_inferiority_p_beside_the_comparison(logged) -> None:
    import json

    result, client = logged
    experiment = client.get_experiment(client.get_run(result.parent_run_id).info.experiment_id)
    view = json.loads(experiment.tags["mlflow.sharedViewState.abcompare"])
    columns = view["selectedColumns"]
    assert "metrics.`_vs_control.ndcg_at_10.non_inferiority_p`" in columns
    assert columns.index("metrics.`_vs_control.ndcg_at_10.verdict`") < columns.index(
        "metrics.`_vs_control.ndcg_at_10.non_inferiority_p`"
    )
