"""A team's tracking server: a real `mlflow server` backed by a real PostgreSQL 15, with four runs of the
main job started at once under a new experiment name (the get-or-create race)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from e2e_support import execute_notebook
from mlflow import MlflowClient
from support.cli import NO_TIMING, REPO, cli_command, cli_env


@pytest.mark.server
def test_four_concurrent_main_jobs_on_a_postgres_backed_server_all_finish(
    mlflow_server_on_postgres: str, tmp_path: Path, embedding_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = cli_command()
    args = [
        "run", str(REPO / "configs" / "rrf_vs_dbsf.yaml"), "--json",
        "--set", f"tracking.uri={mlflow_server_on_postgres}",
        "--set", "tracking.experiment=concurrent-on-postgres",
        "--set", "significance.n_resamples=500", *NO_TIMING,  # the race is the point, not the cost
    ]  # fmt: skip
    processes = [
        subprocess.Popen(
            base + args,
            cwd=tmp_path,
            env=cli_env(embedding_cache),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        for _ in range(4)
    ]
    outputs = [process.communicate(timeout=900) for process in processes]
    for process, (_, stderr) in zip(processes, outputs, strict=True):
        assert process.returncode == 0, stderr[-3000:]
    payloads = [json.loads(stdout) for stdout, _ in outputs]
    client = MlflowClient(tracking_uri=mlflow_server_on_postgres)
    experiments = [e for e in client.search_experiments() if e.name == "concurrent-on-postgres"]
    assert len(experiments) == 1, "one experiment, created once"
    runs = client.search_runs([experiments[0].experiment_id])
    assert len(runs) == 4 * 3, "four comparisons, each a parent and two variants"
    assert {run.info.status for run in runs} == {"FINISHED"}
    parents = {run.info.run_id for run in runs if run.data.tags.get("abcompare.role") == "comparison"}
    assert parents == {payload["parent_run_id"] for payload in payloads}
    means = {json.dumps(payload["means"], sort_keys=True) for payload in payloads}
    assert len(means) == 1, "the same config gives the same numbers in every process"
    # a teammate reads a comparison back through the server alone (artifacts are served, no shared disk)
    from abcompare.tracking.reader import load_comparison

    loaded = load_comparison(payloads[0]["parent_run_id"], tracking_uri=mlflow_server_on_postgres)
    assert set(loaded.per_query) == {"control", "dbsf"}
    for variant, frame in loaded.per_query.items():
        assert len(frame) == 124
        assert frame["ndcg@10"].mean() == pytest.approx(payloads[0]["means"][variant]["ndcg@10"], abs=1e-12)
    assert set(loaded.summary["metric"]) >= {"ndcg@10"} and len(loaded.hits["dbsf"]) > 0
    # and the analysis notebook, pointed at the server by MLFLOW_TRACKING_URI, as at the local SQLite file
    monkeypatch.setenv("MLFLOW_TRACKING_URI", mlflow_server_on_postgres)
    monkeypatch.setenv("ABCOMPARE_RUN_ID", payloads[1]["parent_run_id"])
    stdout, stderr, tables = execute_notebook(tmp_path)
    assert f"store: {mlflow_server_on_postgres}" in stdout
    assert f"(run {payloads[1]['parent_run_id']})" in stdout and "looking at 'dbsf' on ndcg@10" in stdout
    assert stderr == "", stderr[:2000]
    assert "✓" in tables
    assert not (tmp_path / "mlflow.db").exists()


@pytest.mark.server
def test_runs_logging_the_same_dataset_at_once_all_link_to_it(mlflow_server_on_postgres: str) -> None:
    """The server inserts a dataset (or an experiment tag) the first time a run logs it: runs logging the
    same query set and setting the same experiment tag at the same moment race on that insert
    (PostgreSQL's unique key refuses the second). Each must end linked to the one dataset, the tag set,
    and no comparison failed."""
    import threading

    import pandas as pd

    from abcompare.tracking.store import open_tracker

    tracker = open_tracker(mlflow_server_on_postgres, "dataset-race", None)
    frame = pd.DataFrame({"query_id": ["q1", "q2"], "text": ["a", "b"]})
    run_ids = [tracker.start_run(f"r{i}", {"abcompare.role": "control"}) for i in range(8)]
    start = threading.Barrier(len(run_ids))
    errors: list[BaseException] = []

    def log(run_id: str) -> None:
        start.wait()
        try:
            tracker.log_dataset(run_id, frame, name="race", source="race", digest="0123456789abcdef")
            tracker.set_experiment_tags({"abcompare.race": run_id})  # one experiment tag, set by every run
        except BaseException as exc:  # noqa: BLE001 - collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=log, args=(run_id,)) for run_id in run_ids]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    client = MlflowClient(tracking_uri=mlflow_server_on_postgres)
    digests = {
        dataset_input.dataset.digest
        for run_id in run_ids
        for dataset_input in client.get_run(run_id).inputs.dataset_inputs
    }
    assert digests == {"0123456789abcdef"}
    assert all(len(client.get_run(run_id).inputs.dataset_inputs) == 1 for run_id in run_ids)
    assert client.get_experiment(tracker.experiment_id).tags["abcompare.race"] in run_ids
    tracker.end_all("FINISHED")


def _first_sentence(query, hits) -> tuple[str, list[str]]:  # noqa: ANN001 - the generator protocol
    """Answers with the top hit's first 80 characters and cites it: answers anyone can recompute."""
    return hits[0].text[:80].strip() + ".", [hits[0].id]


def _by_length(first: str, second: str) -> int:
    """A judge anyone can recompute: the second text's length in 100-character steps, at most 3."""
    return min(3, len(second) // 100)


@pytest.mark.server
def test_answer_traces_are_written_to_and_read_back_from_the_postgres_backed_server(
    mlflow_server_on_postgres: str, tmp_path: Path
) -> None:
    """The answers stage traced through the team's server: every judged answer a trace of the comparison's
    run, with its spans and the judge's assessments, read back through the server alone."""
    from abcompare.config import load_config
    from abcompare.runner import run_comparison

    config = load_config(
        REPO / "configs" / "answers.yaml",
        [f"tracking.uri={mlflow_server_on_postgres}", "tracking.experiment=answers-on-postgres",
         "efficiency.repeats=0", "significance.n_resamples=200", "answers.max_queries=3",
         "answers.variants.smollm2.generator=python:first", "answers.judge.provider=python",
         "answers.judge.name=length", f"cache_dir={tmp_path / 'cache'}"],
    )  # fmt: skip
    result = run_comparison(config, generators={"first": _first_sentence}, judges={"length": _by_length})
    client = MlflowClient(tracking_uri=mlflow_server_on_postgres)
    run = client.get_run(result.parent_run_id)
    assert run.info.status == "FINISHED"
    found = client.search_traces(locations=[run.info.experiment_id], run_id=result.parent_run_id)
    assert len(found) == 3 * 2, "three queries answered by each of two variants"
    outcome = result.answers
    for trace in found:
        variant, query_id = trace.info.tags["abcompare.variant"], trace.info.tags["abcompare.query_id"]
        full = client.get_trace(trace.info.trace_id)
        spans = {s.name: s for s in full.data.spans}
        assert spans["generation"].outputs["answer"] == outcome.answers[variant].answer(query_id)[0]
        feedback = {a.name: a for a in full.info.assessments}
        relevance = _by_length("", spans["generation"].outputs["answer"])
        assert feedback["answer_relevance"].value == relevance
        assert feedback["answer_relevance"].source.source_id == "python:length"
