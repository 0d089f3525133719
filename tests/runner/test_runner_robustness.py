"""What the unjudged hits could do and how many queries are enough, end to end: the main job's ``--json``,
its MLflow runs (the treatment's ``_vs_control.ndcg_at_10.*`` metrics, the description, report.html), and
the console lines under a verdict."""

from __future__ import annotations

import html
import json
from pathlib import Path

import pytest
from mlflow import MlflowClient
from support.cli import error_lines, invoke_cli
from support.configs import MINIMAL

import abcompare
from abcompare.tracking.reader import load_comparison


def test_json_mlflow_and_the_report_carry_the_range_and_the_queries_needed(example_run) -> None:
    workdir, result = example_run
    assert result.returncode == 0, result.stderr[-3000:]
    payload = json.loads(result.stdout)
    primary = next(r for r in payload["comparison"] if r["role"] == "primary" and r["treatment"] == "dbsf")
    robust = payload["robustness"]["dbsf"]
    assert robust["metric"] == "ndcg@10" and robust["delta"] == pytest.approx(primary["delta"], abs=1e-12)
    assert robust["unjudged_min"] <= primary["delta"] <= robust["unjudged_max"]
    # the hits nobody judged in either top 10: at least each variant's own count, at most both together
    counts = [payload["judged"][name]["unjudged_hits"] for name in ("control", "dbsf")]
    assert max(counts) <= robust["unjudged_hits"] <= sum(counts)
    assert robust["relevant_only"] is True  # the example lists relevant chunks only, and the line says so
    assert robust["sentence"].startswith("Unjudged hits: the judgments list relevant items only, so the ")
    if robust["holds"]:
        assert robust["flip_judgments"] is None and "the verdict holds whatever" in robust["sentence"]
    else:
        assert robust["flip_judgments"] >= 1 and robust["flips_to"] in ("better", "worse")
        assert f"judging {robust['flip_judgments']} of them relevant could flip" in robust["sentence"]

    needed = payload["queries_needed"]["dbsf"]
    loaded = load_comparison(tracking_uri=f"sqlite:///{workdir / 'mlflow.db'}")
    again = abcompare.queries_needed(
        loaded.deltas("dbsf", "ndcg@10"), alpha=primary["alpha_effective"], seed=0
    )
    assert (needed["queries_needed"], needed["queries_low"], needed["queries_high"]) == (
        again.n, again.low, again.high
    )  # fmt: skip
    assert needed["effect_source"] == "observed" and needed["n_queries"] == 124
    assert (
        needed["sentence"].startswith("To detect the observed change (")
        and "; you have 124." in needed["sentence"]
    )

    client = MlflowClient(tracking_uri=f"sqlite:///{workdir / 'mlflow.db'}")
    metrics = client.get_run(payload["variant_run_ids"]["dbsf"]).data.metrics
    assert metrics["vs_control.ndcg_at_10.unjudged_min"] == robust["unjudged_min"]
    assert metrics["vs_control.ndcg_at_10.unjudged_max"] == robust["unjudged_max"]
    assert metrics["vs_control.ndcg_at_10.unjudged_hits"] == robust["unjudged_hits"]
    assert metrics["vs_control.ndcg_at_10.unjudged_holds"] == float(robust["holds"])
    assert metrics["vs_control.ndcg_at_10.queries_needed"] == needed["queries_needed"]
    assert metrics["vs_control.ndcg_at_10.queries_needed_low"] == needed["queries_low"]
    parent = client.get_run(payload["parent_run_id"])
    description = parent.data.tags["mlflow.note.content"]
    assert robust["sentence"] in description and needed["sentence"] in description
    report = Path(client.download_artifacts(parent.info.run_id, "report.html", str(workdir / "robust-dl")))
    page = report.read_text(encoding="utf-8")
    assert html.escape(robust["sentence"]) in page and html.escape(needed["sentence"]) in page


def test_the_console_shows_one_robustness_line_under_each_verdict(tmp_path, embedding_cache) -> None:
    """BM25 against BM25 with another k1 on the shipped example (no encoding), tracking off."""
    config = tmp_path / "minimal.yaml"
    config.write_text(MINIMAL + "tracking:\n  enabled: false\n")
    result = invoke_cli(["run", str(config)], tmp_path, embedding_cache)
    assert result.returncode == 0, result.stderr[-3000:]
    lines = result.stdout.splitlines()
    (verdict,) = [i for i, line in enumerate(lines) if line.startswith("Verdict loose: ")]
    under = [line for line in lines[verdict + 1 :] if line.startswith("  ")]
    robustness = [line for line in under if line.startswith("  Unjudged hits: ")]
    assert len(robustness) == 1
    asked = [line for line in under if line.startswith("  To detect ")]
    significant = lines[verdict].startswith(("Verdict loose: better", "Verdict loose: worse"))
    assert len(asked) == (0 if significant else 1)


def test_pool_refuses_an_unknown_order_in_one_line_before_any_work(tmp_path, embedding_cache) -> None:
    config = tmp_path / "minimal.yaml"
    config.write_text(MINIMAL)
    result = invoke_cli(["pool", str(config), "--order", "sideways"], tmp_path, embedding_cache)
    assert result.returncode == 2
    (line,) = error_lines(result.stderr)
    assert "--order" in line and "decisive or stable" in line
    assert not list(tmp_path.glob("*-pool.csv"))
