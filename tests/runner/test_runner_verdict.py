"""End to end: the verdict is about the declared primary metric, everywhere a person reads it."""

from __future__ import annotations

import json

import pandas as pd
from mlflow import MlflowClient

from abcompare.core.settings import ComparisonSettings, PairedComparison
from abcompare.outcome.sentences import markdown_table, secondary_summary, verdict_sentence


def test_json_console_and_mlflow_carry_the_primary_metric_and_the_roles(example_run) -> None:
    workdir, result = example_run
    assert result.returncode == 0, result.stderr[-3000:]
    payload = json.loads(result.stdout)
    assert payload["primary_metric"] == "ndcg@10"
    rows = pd.DataFrame(payload["comparison"])
    assert list(rows.loc[rows["role"] == "primary", "metric"]) == ["ndcg@10"]
    secondary = rows[rows["role"] == "secondary"]
    assert len(secondary) == 14 and (secondary["family_size"] == 14).all()
    verdict = payload["verdicts"]["dbsf"]
    assert verdict["metric"] == "ndcg@10" and verdict["sentence"].startswith("Verdict dbsf: ")
    assert verdict["verdict"] == rows.loc[rows["role"] == "primary", "verdict"].iloc[0]
    assert (
        verdict["secondary"].startswith("Secondary metrics: ") and "Holm correction" in verdict["secondary"]
    )
    assert payload["settings"].startswith("paired tests on 124 queries; primary metric ndcg@10")

    client = MlflowClient(tracking_uri=f"sqlite:///{workdir / 'mlflow.db'}")
    parent = client.get_run(payload["parent_run_id"])
    tags, metrics = parent.data.tags, parent.data.metrics
    assert tags["abcompare.primary_metric"] == "ndcg@10"
    assert tags["abcompare.verdict.dbsf"] == verdict["sentence"]
    assert tags["abcompare.secondary.dbsf"] == verdict["secondary"]
    assert verdict["sentence"] in tags["mlflow.note.content"].replace("**", "")  # its head in bold
    assert "_vs_control.dbsf.ndcg_at_10.p_adjusted" in metrics  # the primary comparison is a metric
    assert not any("recall_at_5" in key for key in metrics if key.startswith("_vs_control."))  # a table's

    # the logged table reproduces the sentences: they are a function of the table and its settings
    path = client.download_artifacts(parent.info.run_id, "tables/comparison.parquet", str(workdir / "dl"))
    logged = pd.read_parquet(path).reset_index()
    settings = ComparisonSettings(
        alpha=0.05, correction="holm", primary="permutation", primary_metric="ndcg@10", power=0.8,
        min_effect=None, n_resamples=10000, seed=0,
    )  # fmt: skip
    assert verdict_sentence(PairedComparison(logged, settings), "dbsf") == verdict["sentence"]
    assert secondary_summary(PairedComparison(logged, settings), "dbsf") == verdict["secondary"]
    assert markdown_table(logged) in tags["mlflow.note.content"]
