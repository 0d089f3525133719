"""Judgments end to end: one threshold rule in the CLI, the API and trec_eval; unjudged hits made visible;
the pooling loop that fills the holes."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from mlflow import MlflowClient
from support.cli import NO_TIMING, REPO, CliResult, cli_command, cli_env, error_lines, invoke_cli
from support.configs import cranfield_bm25
from support.environment import require_module
from support.frames import qrels_dict
from support.readme import commands_and_output, doc_section, readme_match, shows

from abcompare.data.annotations import read_annotations
from abcompare.evaluation.batch import evaluate_run
from abcompare.tracking.reader import load_comparison

CUTOFFS = (1, 5, 10, 20)


def cranfield_config(folder: Path, datasets_dir: Path) -> Path:
    config = folder / "cranfield.yaml"
    config.write_text(
        cranfield_bm25(datasets_dir / "cranfield", "cranfield-thresholds")
        + """\
treatments:
  k1-low:
    retrievers:
      bm25: {k1: 0.9}
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
    qrels = qrels_dict(datasets_dir / "cranfield" / "qrels" / "test.tsv")
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    for threshold in (1, 2, 3):
        args = ["run", str(config), "--json", "--set", f"evaluation.relevance_threshold={threshold}"]
        result = invoke_cli([*args, *NO_TIMING], tmp_path, embedding_cache)  # the numbers, not the cost
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
            assert child["metrics.ndcg_at_10"] == payload["means"][variant]["ndcg@10"]  # every digit
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
    result = invoke_cli(["run", str(config), "--json"], tmp_path, embedding_cache)
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
    # MLflow's figures are the computed ones, every digit
    assert parent.data.metrics["mean.sparse.judged_at_5"] == payload["means"]["sparse"]["judged@5"]
    assert payload["means"]["sparse"]["judged@5"] == pytest.approx(payload["judged"]["sparse"]["mean_judged"])
    assert parent.data.tags["abcompare.judgments"] == "60 judgments (24 at grade >= 1) on 12 queries"
    assert parent.data.tags["abcompare.annotation_files"].startswith("qrels.txt sha256:")
    # condensed lists drop the unjudged hits: the treatment then ranks the same judged documents higher
    condensed = invoke_cli(
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
def readme_loop() -> list[tuple[str, list[str]]]:
    """The README's loop on the shipped example: each command with the output lines shown under it."""
    section = doc_section("docs/judgments.md", "Incomplete judgments: unjudged hits and pooling")
    block = re.search(r"\*\*The loop on the shipped example\.\*\*.*?```bash\n(.*?)```", section, re.S)
    assert block, "README shows the loop on the shipped example as a bash block"
    return commands_and_output(block.group(1))


def as_argv(command: str, folder: Path) -> list[str]:
    """A README command line as this test runs it in ``folder``: ``$PWD`` is the folder, ``abcompare`` the
    installed command, ``python`` this interpreter (the checkout's paths are linked into the folder)."""
    argv = shlex.split(command.replace("$PWD", str(folder)))
    program = {"abcompare": cli_command(), "python": [sys.executable]}[argv[0]]
    return program + argv[1:]


def run_step(command: str, folder: Path, cache: Path) -> CliResult | subprocess.CompletedProcess:
    """One command of the loop in ``folder``: ``abcompare`` in this process (``run`` untimed), ``python``
    a script in a new process."""
    if not command.startswith("abcompare "):
        return subprocess.run(
            as_argv(command, folder), cwd=folder, env=cli_env(cache), capture_output=True, text=True,
            timeout=600,
        )  # fmt: skip
    args = shlex.split(command.replace("$PWD", str(folder)))[1:]
    return invoke_cli(args + (NO_TIMING if args[0] == "run" else []), folder, cache)


def primary_delta(stdout: str) -> str:
    """The delta the console's comparison table prints on the primary row (four decimals)."""
    found = re.search(r"│ ndcg@10 +│ primary +│ +\S+ │ +\S+ │ +(\S+) │", stdout)
    assert found, stdout[-2000:]
    return found.group(1)


@pytest.mark.slow
def test_the_readme_loop_on_the_shipped_example_shows_what_the_readme_says(tmp_path, embedding_cache):
    """The README's loop, run command by command as printed (in a folder laid out like the checkout): every
    line the README shows under a command is in that command's output, and the four-decimal deltas of its
    explanation are the comparison tables'. Holes hide the hybrid's gain; the pool brings it back.

    The ``abcompare`` commands run in this process (:func:`invoke_cli`; the console script is tested
    elsewhere) and each ``run`` skips the latency timing pass (``NO_TIMING``): the loop shows no cost line
    and the pass changes no quality number. The scripts run as processes, as printed."""
    for name in ("configs", "scripts"):
        (tmp_path / name).symlink_to(REPO / name)
    (tmp_path / "abcompare").mkdir()
    (tmp_path / "abcompare" / "examples").symlink_to(REPO / "abcompare" / "examples")
    steps = readme_loop()
    assert [command.split()[:2] for command, _ in steps] == [
        ["abcompare", "run"], ["python", "scripts/judgment_holes.py"], ["abcompare", "run"],
        ["abcompare", "pool"], ["python", "scripts/judgment_holes.py"], ["abcompare", "run"],
    ]  # fmt: skip
    runs = []
    for command, shown in steps:
        done = run_step(command, tmp_path, embedding_cache)
        assert done.returncode == 0, (command, done.stderr[-3000:])
        output = done.stdout + "\n" + done.stderr
        missing = [line for line in shown if not shows(line, output)]
        assert not missing, (command, missing, output[-3000:])
        if command.startswith("abcompare run"):
            runs.append(done.stdout)
        if command.startswith("abcompare pool"):
            pooled = pd.read_csv(tmp_path / "pool.csv", dtype=str, keep_default_na=False)
    explained = readme_match(
        r"The holes hid a real gain \(nDCG@10 (\S+) with the complete judgments, (\S+) with the holes\); the "
        r"pooled judgments restore it \((\S+); the small difference from (\S+) is",
        doc_section("docs/judgments.md", "Incomplete judgments: unjudged hits and pooling"),
    ).groups()
    full, holed, restored = (primary_delta(stdout) for stdout in runs)
    assert (full, holed, restored, full) == explained

    complete = read_annotations(REPO / "abcompare/examples/hr_docs/qrels/test.tsv")
    holes = read_annotations(tmp_path / "holes.tsv")
    assert len(holes) == len(complete) - round(len(complete) / 3)  # "removes the third of them"
    assert list(pooled.columns) == [
        "query_id", "key", "grade", "query", "document_id", "retrieved_by", "best_rank", "text",
    ]  # fmt: skip
    (said,) = [line for command, shown in steps if command.startswith("abcompare pool") for line in shown]
    assert f"{len(pooled):,}" == re.match(r"pooled ([0-9,]+) unjudged hits", said).group(1)
    assert (pooled["grade"] == "").all() and not pooled.duplicated(["query_id", "key"]).any()
    judged_pairs = set(zip(holes["query_id"], holes["key"], strict=True))
    assert not any(pair in judged_pairs for pair in zip(pooled["query_id"], pooled["key"], strict=True))
    filled = pd.read_csv(tmp_path / "pool.csv", dtype=str, keep_default_na=False)
    assert filled[["query_id", "key"]].equals(pooled[["query_id", "key"]]) and (filled["grade"] != "").all()


def test_pool_writes_jsonl_and_refuses_span_level_in_one_line(tmp_path, embedding_cache):
    config = write_handmade(tmp_path)
    result = invoke_cli(["pool", str(config), "-o", "pool.jsonl", "--depth", "5"], tmp_path, embedding_cache)
    assert result.returncode == 0, result.stderr[-3000:]
    records = [json.loads(line) for line in (tmp_path / "pool.jsonl").read_text().splitlines()]
    assert len(records) == 8 * 2 + 4 * 3  # pairs: each query's own unjudged hits (u, v, w in four queries)
    assert {r["key"] for r in records} >= {"u", "v", "w", "u1a", "u1b"}
    assert all(r["grade"] is None for r in records)
    span = invoke_cli(
        ["pool", str(REPO / "configs" / "chunk_size.yaml"), "--set", "dataset.level=span"],
        tmp_path,
        embedding_cache,
    )
    assert span.returncode == 2
    (line,) = error_lines(span.stderr)
    assert (
        "dataset.level" in line and "nothing to pool at span level" in line and "Traceback" not in span.stderr
    )


def test_an_empty_list_of_annotation_files_is_a_located_config_error(tmp_path, embedding_cache):
    config = write_handmade(tmp_path)
    config.write_text(config.read_text().replace("annotations: qrels.txt", "annotations: []"))
    result = invoke_cli(["validate", str(config)], tmp_path, embedding_cache)
    assert result.returncode == 2
    assert "handmade.yaml:4: dataset.annotations: " in result.stderr
    assert "at least one annotation file" in result.stderr
