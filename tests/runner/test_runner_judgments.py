"""Judgments end to end: one threshold rule in the CLI, the API and trec_eval; unjudged hits made visible;
the pooling loop that fills the holes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from e2e_support import REPO, cli_env, run_cli
from mlflow import MlflowClient
from support.environment import require_module

from abcompare.evaluation.batch import evaluate_run
from abcompare.tracking.reader import load_comparison

CUTOFFS = (1, 5, 10, 20)


def cranfield_config(folder: Path, datasets_dir: Path) -> Path:
    config = folder / "cranfield.yaml"
    config.write_text(
        f"""\
name: cranfield-thresholds
dataset:
  path: {datasets_dir / "cranfield"}
  level: document
control:
  chunking: {{strategy: none}}
  retrievers:
    bm25: {{}}
  top_k: 50
treatments:
  k1-low:
    retrievers:
      bm25: {{k1: 0.9}}
evaluation:
  cutoffs: [1, 5, 10, 20]
  convention: trec
significance:
  tests: [t, permutation]
  n_resamples: 200
tracking:
  experiment: cranfield-thresholds
"""
    )
    return config


@pytest.mark.slow
def test_cli_api_and_trec_eval_agree_on_cranfield_at_thresholds_1_to_3(
    tmp_path, datasets_dir, embedding_cache
):
    """The same queries (all 225 judged ones, whatever the threshold) and the same numbers to 1e-9."""
    pytrec_eval = require_module("pytrec_eval")
    config = cranfield_config(tmp_path, datasets_dir)
    qrels_frame = pd.read_csv(datasets_dir / "cranfield" / "qrels" / "test.tsv", sep="\t", dtype=str)
    qrels: dict[str, dict[str, int]] = {}
    for qid, doc, grade in qrels_frame.itertuples(index=False):
        qrels.setdefault(qid, {})[doc] = int(grade)
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    for threshold in (1, 2, 3):
        result = run_cli(
            ["run", str(config), "--json", "--set", f"evaluation.relevance_threshold={threshold}"],
            tmp_path,
            embedding_cache,
        )
        assert result.returncode == 0, result.stderr[-3000:]
        payload = json.loads(result.stdout)
        assert payload["n_queries"] == 225
        logged = load_comparison(payload["parent_run_id"], tracking_uri=uri)
        for variant in ("control", "k1-low"):
            cli = logged.per_query[variant]
            assert len(cli) == 225 and set(cli.index) == set(qrels)
            hits = logged.hits[variant]
            api = evaluate_run(
                hits[["query_id", "rank", "key", "score"]],
                qrels,
                k=CUTOFFS,
                convention="trec",
                relevance_threshold=threshold,
            )
            columns = [f"{m}@{k}" for m in ("precision", "recall", "mrr", "ndcg", "judged") for k in CUTOFFS]
            got, want = cli[columns].to_numpy(), api.loc[cli.index, columns].to_numpy()
            np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
            run = {
                qid: dict(zip(group["key"], group["score"].astype(float), strict=True))
                for qid, group in hits.groupby("query_id")
            }
            measures = {f"P.{','.join(map(str, CUTOFFS))}", f"ndcg_cut.{','.join(map(str, CUTOFFS))}"}
            oracle = pytrec_eval.RelevanceEvaluator(qrels, measures, relevance_level=threshold).evaluate(run)
            for k in CUTOFFS:
                want = np.array([oracle[q][f"ndcg_cut_{k}"] if q in oracle else 0.0 for q in cli.index])
                np.testing.assert_allclose(
                    cli[f"ndcg@{k}"], want, rtol=0, atol=1e-9, err_msg=f"t={threshold}"
                )
                want = np.array([oracle[q][f"P_{k}"] if q in oracle else 0.0 for q in cli.index])
                np.testing.assert_allclose(cli[f"precision@{k}"], want, rtol=0, atol=1e-9)
            # the JSON means, MLflow's child metrics and the per-query table are one set of numbers
            assert payload["means"][variant]["ndcg@10"] == pytest.approx(cli["ndcg@10"].mean(), abs=1e-12)
            child = logged.runs.set_index("tags.abcompare.variant").loc[variant]
            assert child["metrics.ndcg_at_10"] == float(f"{cli['ndcg@10'].mean():.4g}")  # shown rounded
        if threshold == 2:
            # a query judged only below the threshold still counts: nDCG uses the grades (trec_eval does)
            below = [q for q, docs in qrels.items() if max(docs.values()) < 2]
            assert below, "Cranfield has queries whose judgments are all below grade 2"
            assert (logged.per_query["control"].loc[below, "recall@10"] == 0).all()
            assert logged.per_query["control"].loc[below, "ndcg@10"].max() > 0


# ----------------------------------------------------------------------------- unjudged hits, hand-made
QUERIES = [f"q{i}" for i in range(12)]


def write_handmade(folder: Path) -> Path:
    """Twelve queries, judged d0..d4 each (d0, d1 relevant). The control returns judged documents; the
    treatment finds the same relevant ones but fills the rest of its top 5 with documents nobody judged
    (u*), which count as non-relevant: its judged@5 is far lower."""
    (folder / "queries.tsv").write_text("".join(f"{q}\tquestion {q}\n" for q in QUERIES))
    (folder / "qrels.txt").write_text(
        "".join(f"{q} 0 d{i} {1 if i < 2 else 0}\n" for q in QUERIES for i in range(5))
    )
    control = [
        f"{q} Q0 {doc} {r} {10 - r} ctl\n"
        for q in QUERIES
        for r, doc in enumerate(["d0", "d2", "d1", "d3", "d4"], 1)
    ]
    treatment = [
        f"{q} Q0 {doc} {r} {10 - r} trt\n"
        for n, q in enumerate(QUERIES)
        for r, doc in enumerate(
            ["d0", f"u{n}a", "d1", f"u{n}b", "d2"] if n % 3 else ["d0", "d1", "u", "v", "w"], 1
        )
    ]
    (folder / "control.trec").write_text("".join(control))
    (folder / "treatment.trec").write_text("".join(treatment))
    config = folder / "handmade.yaml"
    config.write_text(
        """\
name: handmade-holes
dataset:
  queries: queries.tsv
  annotations: qrels.txt
control:
  run: {path: control.trec}
treatments:
  sparse:
    run: {path: treatment.trec}
evaluation:
  cutoffs: [5]
  metrics: [precision, ndcg]
  convention: trec
significance:
  n_resamples: 500
tracking:
  experiment: handmade
"""
    )
    return config


def test_a_treatment_with_more_unjudged_hits_gets_a_warning_that_names_them(tmp_path, embedding_cache):
    config = write_handmade(tmp_path)
    result = run_cli(["run", str(config), "--json"], tmp_path, embedding_cache)
    assert result.returncode == 0, result.stderr[-3000:]
    payload = json.loads(result.stdout)
    assert payload["judged"]["control"]["mean_judged"] == 1.0
    assert payload["judged"]["sparse"]["mean_judged"] == pytest.approx((8 * 3 / 5 + 4 * 2 / 5) / 12)
    assert payload["judged"]["sparse"]["unjudged_hits"] == 8 * 2 + 4 * 3
    (warning,) = payload["judgment_warnings"]
    assert warning.startswith("sparse: 47% more of its top 5 is unjudged than the control's")
    assert "28 unjudged hits against 0" in warning and "abcompare pool" in warning
    assert "warning: sparse: 47% more of its top 5 is unjudged" in result.stderr.replace("\n", " ")
    rows = {row["metric"]: row for row in payload["comparison"]}
    assert rows["ndcg@5"]["control_judged"] == 1.0
    assert rows["ndcg@5"]["treatment_judged"] == pytest.approx(payload["judged"]["sparse"]["mean_judged"])
    parent = MlflowClient(tracking_uri=f"sqlite:///{tmp_path / 'mlflow.db'}").get_run(
        payload["parent_run_id"]
    )
    shown = float(f"{payload['judged']['sparse']['mean_judged']:.4g}")  # MLflow's figures: 4 digits
    assert parent.data.metrics["sparse.judged_at_5"] == shown
    assert parent.data.tags["abcompare.judgments"] == "60 judgments (24 at grade >= 1) on 12 queries"
    assert parent.data.tags["abcompare.annotation_files"].startswith("qrels.txt sha256:")
    # condensed lists drop the unjudged hits: the treatment then ranks the same judged documents higher
    condensed = run_cli(
        [
            "run",
            str(config),
            "--json",
            "--set",
            "evaluation.unjudged=condensed",
            "--set",
            "tracking.enabled=false",
        ],
        tmp_path,
        embedding_cache,
    )
    rows = {row["metric"]: row for row in json.loads(condensed.stdout)["comparison"]}
    assert rows["precision@5"]["delta"] == pytest.approx(0.0)
    assert rows["ndcg@5"]["delta"] > 0


def test_the_shipped_example_raises_no_judgment_warning(example_run):
    _, result = example_run
    payload = json.loads(result.stdout)
    assert payload["judgment_warnings"] == []
    assert set(payload["judged"]) == {"control", "dbsf"}


# ----------------------------------------------------------------------------- the pooling loop
def run_script(args: list[str], cwd: Path, cache: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(REPO / "scripts" / "judgment_holes.py"), *args],
        cwd=cwd,
        env=cli_env(cache),
        capture_output=True,
        text=True,
        timeout=600,
    )


def verdict(payload: dict, metric: str = "ndcg@10") -> dict:
    return next(row for row in payload["comparison"] if row["metric"] == metric)


@pytest.mark.slow
def test_pooling_restores_the_verdict_that_holes_in_the_judgments_hid(tmp_path, embedding_cache):
    """The README's loop on the shipped example: holes hide the hybrid's gain, a pool brings it back."""
    config = str(REPO / "configs" / "bm25_vs_hybrid.yaml")
    quick = ["--set", "significance.n_resamples=2000", "--set", "tracking.enabled=false"]
    full = json.loads(run_cli(["run", config, "--json", *quick], tmp_path, embedding_cache).stdout)
    assert verdict(full)["verdict"] == "better"

    made = run_script(["holes", config, "-o", str(tmp_path / "holes.tsv")], tmp_path, embedding_cache)
    assert made.returncode == 0, made.stderr[-2000:]
    holes = ["--set", f"dataset.annotations={tmp_path / 'holes.tsv'}"]
    holed = run_cli(["run", config, "--json", *quick, *holes], tmp_path, embedding_cache)
    assert holed.returncode == 0, holed.stderr[-3000:]
    assert verdict(json.loads(holed.stdout))["verdict"] == "no significant difference"

    pooled = run_cli(["pool", config, *holes, "-o", "pool.csv", "--depth", "10"], tmp_path, embedding_cache)
    assert pooled.returncode == 0, pooled.stderr[-3000:]
    pool = pd.read_csv(tmp_path / "pool.csv", dtype=str, keep_default_na=False)
    assert list(pool.columns) == [
        "query_id",
        "key",
        "grade",
        "query",
        "document_id",
        "retrieved_by",
        "best_rank",
        "text",
    ]
    assert (pool["grade"] == "").all() and not pool.duplicated(["query_id", "key"]).any()
    holes_judged = pd.read_csv(tmp_path / "holes.tsv", sep=" ", header=None, dtype=str)
    judged_pairs = set(zip(holes_judged[0], holes_judged[2], strict=True))
    assert not any(pair in judged_pairs for pair in zip(pool["query_id"], pool["key"], strict=True))
    filled = run_script(
        ["fill", "pool.csv", "--from", str(REPO / "abcompare/examples/hr_docs/qrels/test.tsv")],
        tmp_path,
        embedding_cache,
    )
    assert filled.returncode == 0, filled.stderr[-2000:]

    merged = ["--set", f"dataset.annotations=[{tmp_path / 'holes.tsv'}, {tmp_path / 'pool.csv'}]"]
    restored = json.loads(
        run_cli(["run", config, "--json", *quick, *merged], tmp_path, embedding_cache).stdout
    )
    assert verdict(restored)["verdict"] == "better"
    assert restored["judged"]["hybrid-rrf"]["mean_judged"] == 1.0  # every hit of the top 10 is now judged
    assert verdict(restored)["delta"] == pytest.approx(verdict(full)["delta"], abs=0.005)


def test_pool_writes_jsonl_and_refuses_span_level_in_one_line(tmp_path, embedding_cache):
    config = write_handmade(tmp_path)
    result = run_cli(["pool", str(config), "-o", "pool.jsonl", "--depth", "5"], tmp_path, embedding_cache)
    assert result.returncode == 0, result.stderr[-3000:]
    records = [json.loads(line) for line in (tmp_path / "pool.jsonl").read_text().splitlines()]
    assert len(records) == 8 * 2 + 4 * 3  # pairs: each query's own unjudged hits (u, v, w in four queries)
    assert {r["key"] for r in records} >= {"u", "v", "w", "u1a", "u1b"}
    assert all(r["grade"] is None for r in records)
    span = run_cli(
        ["pool", str(REPO / "configs" / "chunk_size.yaml"), "--set", "dataset.level=span"],
        tmp_path,
        embedding_cache,
    )
    assert span.returncode == 2
    (line,) = [line for line in span.stderr.splitlines() if line.startswith("error:")]
    assert (
        "dataset.level" in line and "nothing to pool at span level" in line and "Traceback" not in span.stderr
    )


def test_an_empty_list_of_annotation_files_is_a_located_config_error(tmp_path, embedding_cache):
    config = write_handmade(tmp_path)
    config.write_text(config.read_text().replace("annotations: qrels.txt", "annotations: []"))
    result = run_cli(["validate", str(config)], tmp_path, embedding_cache)
    assert result.returncode == 2
    assert "handmade.yaml:4: dataset.annotations: " in result.stderr
    assert "at least one annotation file" in result.stderr
