"""The shipped configs and entry points the README promises, end to end, with the numbers they give."""

from __future__ import annotations

import json
import os

import pytest
from mlflow import MlflowClient
from support.cli import NO_TIMING, REPO, error_lines, invoke_cli

QUICK = ["--json", "--set", "significance.n_resamples=2000"]


def test_a_production_run_file_is_a_variant_judged_like_the_others(tmp_path, embedding_cache):
    """configs/precomputed_run.yaml: the treatment is a TREC file, no retrieval happens for it."""
    result = invoke_cli(
        ["run", str(REPO / "configs" / "precomputed_run.yaml"), *QUICK], tmp_path, embedding_cache
    )
    assert result.returncode == 0, result.stderr[-3000:]
    payload = json.loads(result.stdout)
    assert payload["n_queries"] == 124
    # the control retrieves at document level: its top_k 20 counts documents (before: 20 chunks, fewer
    # than 10 documents for 50 of the 124 queries, nDCG@10 0.894764); pytrec_eval's ndcg_cut_10 on the
    # control's collapsed run gives 0.8966068 too
    assert payload["means"]["control"]["ndcg@10"] == pytest.approx(0.896607, abs=1e-6)
    assert payload["means"]["production"]["ndcg@10"] == pytest.approx(0.807751, abs=1e-6)
    assert payload["verdicts"]["production"]["verdict"] == "worse"
    assert "production" not in payload["efficiency"]  # no retrieval, so no retrieval cost
    assert payload["alignment"]["production"]["fraction_in_run"] == 1.0
    client = MlflowClient(tracking_uri=f"sqlite:///{tmp_path / 'mlflow.db'}")
    child = client.get_run(payload["variant_run_ids"]["production"])
    assert child.data.params["run.path"].endswith("configs/runs/hr_docs_production.trec")


def test_chunk_sizes_are_compared_by_evidence_spans(shipped_run):
    """configs/chunk_size.yaml: chunk ids differ between the variants, so the span level judges them (the
    run as shipped, shared with the README's scenario table)."""
    _, result = shipped_run("chunk_size")
    assert result.returncode == 0, result.stderr[-3000:]
    payload = json.loads(result.stdout)
    assert payload["n_queries"] == 124
    assert payload["means"]["control"]["ndcg@10"] == pytest.approx(0.780170, abs=1e-6)
    assert payload["means"]["chunks-500"]["ndcg@10"] == pytest.approx(0.734328, abs=1e-6)
    assert payload["verdicts"]["chunks-500"]["verdict"] == "worse"
    # at span level every located hit is judged: the evidence of a query is complete
    assert payload["judged"]["control"]["mean_judged"] == 1.0


def test_mlflow_tracking_uri_from_the_environment_is_used(tmp_path, embedding_cache):
    store = tmp_path / "elsewhere" / "team.db"
    store.parent.mkdir()
    args = ["run", str(REPO / "configs" / "rrf_vs_dbsf.yaml"), *QUICK, *NO_TIMING]  # where it logs, not cost
    result = invoke_cli(args, tmp_path, embedding_cache, MLFLOW_TRACKING_URI=f"sqlite:///{store}")
    assert result.returncode == 0, result.stderr[-3000:]
    payload = json.loads(result.stdout)
    assert payload["tracking_uri"] == f"sqlite:///{store}"
    assert not (tmp_path / "mlflow.db").exists()
    assert (
        MlflowClient(tracking_uri=f"sqlite:///{store}").get_run(payload["parent_run_id"]).info.status
        == "FINISHED"
    )


def test_an_unexpected_failure_is_one_line_and_exit_code_1(tmp_path, embedding_cache, monkeypatch):
    """Not a user error: the CLI says so in one line (no traceback unless ABCOMPARE_DEBUG) and exits 1."""
    import abcompare.runner

    def broken(*args, **kwargs):
        raise RuntimeError("a bug\nover two lines")

    monkeypatch.setattr(abcompare.runner, "run_comparison", broken)  # a bug, planted where the CLI calls
    args = ["run", str(REPO / "configs" / "rrf_vs_dbsf.yaml")]
    result = invoke_cli(args, tmp_path, embedding_cache)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    (line,) = error_lines(result.stderr)
    assert line == "error: unexpected failure: RuntimeError: a bug (ABCOMPARE_DEBUG=1 shows the traceback)"
    debug = invoke_cli(args, tmp_path, embedding_cache, ABCOMPARE_DEBUG="1")
    assert debug.returncode == 1 and "Traceback" in debug.stderr and "RuntimeError: a bug" in debug.stderr
    assert os.environ.get("ABCOMPARE_DEBUG") is None  # the test never leaks it
