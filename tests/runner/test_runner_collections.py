"""A comparison across several collections (``datasets:``), run end to end on two tiny ones (the first
queries of hr-docs, and a synthetic BEIR folder written here): each collection's comparison is the one its
own config gives; the pooled delta is the hand-weighted mean of the per-query deltas; the per-collection
family is corrected as one; the console, ``--json`` and ``--fail-on`` read the pooled verdicts; a run file
that covers none of a collection's queries is one located error before anything runs."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from mlflow import MlflowClient
from rich.console import Console
from support.cli import REPO, error_lines, invoke_cli
from support.corrections import holm_by_hand
from support.environment import needs

from abcompare.config import load_config
from abcompare.core.errors import ConfigError
from abcompare.outcome.console import print_report, result_as_json
from abcompare.outcome.results import ComparisonResult
from abcompare.runner import run_comparison

HR_RUN = REPO / "configs" / "runs" / "hr_docs_production.trec"
PRIMARY = "ndcg@10"

DOCS = {
    "d1": "the cat sat on the warm mat by the door",
    "d2": "dogs chase cats across the garden fence",
    "d3": "a recipe for bread with flour water salt and yeast",
    "d4": "sourdough bread needs a starter and a long rise",
    "d5": "the stock market fell as interest rates rose",
    "d6": "central banks raise interest rates to slow inflation",
    "d7": "a mat of moss grows on the north side of trees",
    "d8": "yeast feeds on sugar and makes the dough rise",
}
QUERIES = {
    "s1": ("cat on a mat", {"d1": 2, "d7": 1}),
    "s2": ("bread yeast rise", {"d4": 2, "d8": 1, "d3": 1}),
    "s3": ("interest rates inflation", {"d6": 2, "d5": 1}),
    "s4": ("dogs and cats", {"d2": 2}),
    "s5": ("sourdough starter", {"d4": 2}),
}


def synthetic_beir(folder: Path) -> Path:
    """A BEIR folder of eight one-line documents and five graded queries."""
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": i, "title": "", "text": t}) + "\n" for i, t in DOCS.items())
    )
    (folder / "queries.jsonl").write_text(
        "".join(json.dumps({"_id": q, "text": text}) + "\n" for q, (text, _) in QUERIES.items())
    )
    rows = [f"{q}\t{d}\t{g}" for q, (_, grades) in QUERIES.items() for d, g in grades.items()]
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + "\n".join(rows) + "\n")
    return folder


def config_text(synthetic: Path, rest: str = "") -> str:
    return f"""\
name: two-collections
datasets:
  - name: hr-docs
    level: document
    max_queries: 30
  - name: synthetic
    path: {synthetic}
    level: document
control:
  chunking: {{strategy: none}}
  retrievers: {{bm25: {{}}}}
  depth: 20
  top_k: 10
treatments:
  shallow: {{top_k: 1}}
evaluation:
  cutoffs: [1, 10]
  metrics: [ndcg, recall]
  convention: trec
significance:
  n_resamples: 2000
efficiency: {{repeats: 0}}
tracking: {{enabled: false}}
{rest}"""


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("collections")
    synthetic_beir(root / "synthetic")
    (root / "c.yaml").write_text(config_text(root / "synthetic"))
    return root


@pytest.fixture(scope="module")
def result(folder: Path, embedding_cache: Path) -> ComparisonResult:
    outcome = run_comparison(load_config(folder / "c.yaml"))
    assert isinstance(outcome, ComparisonResult)
    return outcome


def deltas(result: ComparisonResult, name: str) -> pd.Series:
    """One collection's per-query primary deltas (shallow - control), by query id."""
    per_query = result.collections[name].per_query
    return per_query["shallow"][PRIMARY] - per_query["control"][PRIMARY]


def test_each_collection_is_the_comparison_its_own_config_gives(result: ComparisonResult, folder: Path):
    assert list(result.collections) == ["hr-docs", "synthetic"]
    assert [c.n_queries for c in result.collections.values()] == [30, 5]
    alone = run_comparison(load_config(folder / "c.yaml").collections()["synthetic"])
    pd.testing.assert_frame_equal(alone.comparison, result.collections["synthetic"].comparison)
    assert alone.dataset_name == result.collections["synthetic"].dataset_name == "synthetic"


def test_the_pooled_delta_weighs_each_collection_equally_and_the_family_is_corrected_as_one(
    result: ComparisonResult,
):
    row = result.pooled.set_index("treatment").loc["shallow"]
    means = [deltas(result, name).mean() for name in result.collections]
    assert row["delta"] == pytest.approx(np.mean(means), abs=1e-12)  # equal weight per collection
    assert row["collections"] == 2 and row["n_queries"] == 35 and row["weighting"] == "collection"
    assert row["ci_low"] <= row["delta"] <= row["ci_high"]
    per_collection = result.per_collection.set_index("collection")
    for name, collection in result.collections.items():
        own = collection.comparison
        primary = own[(own["treatment"] == "shallow") & (own["metric"] == PRIMARY)].iloc[0]
        assert per_collection.loc[name, "delta"] == pytest.approx(primary["delta"], abs=1e-12)
        assert per_collection.loc[name, "p_value"] == pytest.approx(primary["p_primary"], abs=1e-12)
        assert per_collection.loc[name, "n_queries"] == collection.n_queries
    # one family of every collection's primary test, Holm (the configured correction)
    expected = holm_by_hand(list(result.per_collection["p_value"]))
    assert list(result.per_collection["p_adjusted"]) == pytest.approx(expected, abs=1e-12)


def test_per_query_pooling_weighs_each_query_equally(folder: Path, result: ComparisonResult):
    config = load_config(folder / "c.yaml", ["significance.pooling=per_query"])
    pooled = run_comparison(config)
    row = pooled.pooled.set_index("treatment").loc["shallow"]
    every = pd.concat([deltas(result, name) for name in result.collections])
    assert row["delta"] == pytest.approx(every.mean(), abs=1e-12) and row["weighting"] == "per_query"
    assert pooled.weighting == "per_query"


def test_the_console_shows_each_collection_then_the_pooled_verdict_and_table(result: ComparisonResult):
    console = Console(file=StringIO(), width=200, color_system=None, highlight=False)
    print_report(result, console)
    text = console.file.getvalue()
    lines = [line.rstrip() for line in text.splitlines()]
    assert (
        "two-collections  across 2 collections (queries: hr-docs (30), synthetic (5)), convention trec"
        in lines
    )
    at = {line.split("  ")[0]: i for i, line in enumerate(lines) if line.startswith("collection ")}
    assert list(at) == ["collection hr-docs", "collection synthetic"]
    assert lines[at["collection hr-docs"] + 1].startswith("  Verdict shallow: ")
    pooled_at = lines.index("pooled across 2 collections")
    assert pooled_at > at["collection synthetic"]
    sentence = lines[pooled_at + 1]
    assert sentence.startswith("Verdict shallow across 2 collections: ")
    assert lines[pooled_at + 2].startswith("  random effects: ")
    table = [line for line in lines[pooled_at:] if line.startswith("│")]
    assert [cells.split("│")[1].strip() for cells in table] == ["hr-docs", "synthetic", "pooled (collection)"]
    as_json = result_as_json(result)
    json.dumps(as_json)  # plain JSON
    assert as_json["pooled"][0]["sentence"] == sentence
    assert list(as_json["collections"]) == ["hr-docs", "synthetic"]
    assert as_json["collections"]["synthetic"]["n_queries"] == 5
    assert [row["collection"] for row in as_json["per_collection"]] == ["hr-docs", "synthetic"]


def test_fail_on_gates_on_the_pooled_verdict(folder: Path, result: ComparisonResult, embedding_cache: Path):
    verdict = result.pooled.set_index("treatment").loc["shallow", "verdict"]
    assert verdict == "worse"  # top 1 of 10 loses relevant hits on hr-docs
    run = invoke_cli(["run", str(folder / "c.yaml"), "--json", "--fail-on", "worse"], folder, embedding_cache)
    assert run.returncode == 4, run.stderr[-2000:]
    assert json.loads(run.stdout)["pooled"][0]["verdict"] == "worse"
    assert run.stderr.splitlines()[-1] == (
        "gate --fail-on worse failed: shallow is worse than the control on ndcg@10 pooled across 2 "
        "collections."
    )
    refused = invoke_cli(["run", str(folder / "c.yaml"), "--fail-on", "inferior"], folder, embedding_cache)
    assert refused.returncode == 2 and "• control" not in refused.stderr  # no margin: refused before work
    assert len(error_lines(refused.stderr)) == 1 and "significance.non_inferiority_margin" in refused.stderr


@pytest.mark.parametrize(("margin", "code", "said"), [
    (0.01, 4, "gate --fail-on inferior failed: shallow is not shown non-inferior"),
    (0.99, 0, "gate --fail-on inferior passed: every treatment is non-inferior"),
])  # fmt: skip
def test_fail_on_inferior_gates_on_the_pooled_non_inferiority_test(
    folder: Path, result: ComparisonResult, embedding_cache: Path, margin: float, code: int, said: str
):
    """With a margin, the pooled one-sided test (signs flipped within collections) decides the gate: its
    verdict is the JSON's and the line says it."""
    store = folder / f"gate-{code}"
    args = [
        "run", str(folder / "c.yaml"), "--json", "--fail-on", "inferior",
        "--set", f"significance.non_inferiority_margin={margin}", "--set", "tracking.enabled=true",
        "--set", f"tracking.uri=sqlite:///{store}.db", "--set", f"tracking.artifact_location={store}",
    ]  # fmt: skip
    run = invoke_cli(args, folder, embedding_cache)
    assert run.returncode == code, run.stderr[-2000:]
    assert run.stderr.splitlines()[-1] == (
        f"{said} on ndcg@10 pooled across 2 collections at margin {margin:g}."
    )
    (row,) = json.loads(run.stdout)["pooled"]  # the p's own check, by brute force, is in tests/stats
    assert row["non_inferiority"] == ("non-inferior" if code == 0 else "not shown non-inferior")
    assert (row["p_non_inferiority_adjusted"] <= 0.05) == (code == 0)
    assert row["non_inferiority_sentence"].startswith(
        f"Non-inferiority across 2 collections: {row['non_inferiority']} on ndcg@10 at margin {margin:g}, p "
    )
    assert row["delta"] == result.pooled.loc[0, "delta"]  # the margin moves no other figure
    top = MlflowClient(tracking_uri=f"sqlite:///{store}.db").get_run(json.loads(run.stdout)["parent_run_id"])
    key = "_pooled.shallow.ndcg_at_10.non_inferiority"
    assert top.data.metrics[f"{key}_p"] == row["p_non_inferiority_adjusted"]
    assert top.data.metrics[key] == (1.0 if code == 0 else 0.0)
    assert row["non_inferiority_sentence"] in top.data.tags["mlflow.note.content"]


def test_a_run_file_that_covers_none_of_a_collections_queries_is_located(
    tmp_path: Path, embedding_cache: Path
):
    synthetic_beir(tmp_path / "synthetic")
    text = config_text(tmp_path / "synthetic").replace(
        "  shallow: {top_k: 1}", f"  production: {{run: {{path: {HR_RUN}}}}}"
    )  # hr-docs' run file, given for both collections: it has no query of the synthetic one
    path = tmp_path / "c.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as caught:
        run_comparison(load_config(path))
    error = caught.value
    assert error.field == "treatments.production.run.path" and error.file == str(path)
    assert error.line == text.splitlines().index(f"  production: {{run: {{path: {HR_RUN}}}}}") + 1
    assert error.message == (
        f"collection 'synthetic': the run file {HR_RUN} of variant 'production' covers none of its 5 queries"
    )
    # the collection's own file, named in its entry: located there
    other = tmp_path / "other.trec"
    other.write_text("x1 Q0 d1 1 1.0 prod\n")
    text = text.replace(
        "    level: document\ncontrol:", "    level: document\n    runs: {production: other.trec}\ncontrol:"
    )
    path.write_text(text)
    line = text.splitlines().index("    runs: {production: other.trec}") + 1
    for command in ("validate", "run"):  # validate reads the query file, run the evaluated queries
        result = invoke_cli([command, str(path)], tmp_path, embedding_cache)
        assert result.returncode == 2 and "Traceback" not in result.stderr
        assert error_lines(result.stderr) == [
            f"error: {path}:{line}: datasets.1.runs.production: collection 'synthetic': the run file {other} "
            "of variant 'production' covers none of its 5 queries (give this collection's own run file of "
            "'production' (datasets.<i>.runs.production: a file with its query ids))"
        ]
        assert "• control" not in result.stderr and not (tmp_path / "mlflow.db").exists()


# ------------------------------------------------------------------------------------------ on Ray
@needs("ray")
def test_on_ray_every_collection_is_in_flight_and_the_session_is_released_after_the_last(
    ray_in_process, folder: Path, embedding_cache: Path
):
    from abcompare.config import ExecutionSettings
    from abcompare.data.experiment import load_dataset_for_experiment
    from abcompare.execution.local import LocalExecutor
    from abcompare.execution.ray import RayExecutor
    from abcompare.execution.ray_session import RaySession

    collections = load_config(folder / "c.yaml").collections()
    datasets = {name: load_dataset_for_experiment(c.dataset) for name, c in collections.items()}
    stops: list[str] = []
    session = RaySession("this process's Ray", stop=lambda: stops.append("stopped"))
    executor = RayExecutor(ExecutionSettings(backend="ray"), session)
    produced = {
        name: executor.variant_runs(c.variants(), datasets[name], embedding_cache)
        for name, c in collections.items()
    }
    assert executor._in_flight == 2  # both collections' tasks submitted before the first is collected
    on_ray = {"hr-docs": list(produced["hr-docs"])}
    assert stops == [] and session._stopping is None  # the first collection back: Ray is still needed
    on_ray["synthetic"] = list(produced["synthetic"])
    session.close()  # waits for the release the last variant started
    assert stops == ["stopped"]
    local = LocalExecutor()
    for name, collection in collections.items():
        expected = local.variant_runs(collection.variants(), datasets[name], embedding_cache)
        for ours, theirs in zip(on_ray[name], expected, strict=True):
            assert ours.name == theirs.name
            pd.testing.assert_frame_equal(ours.run, theirs.run)


def test_the_random_effects_line_is_written_in_the_sentences_formats():
    from abcompare.outcome.console import random_effects_line

    row = {"meta_effect": 0.04083, "meta_ci_low": 0.02577, "meta_ci_high": 0.05589, "meta_p_value": 8e-8,
           "tau2": 4.71e-5, "i2": 0.178, "q": 3.6499, "q_p_value": 0.3021}  # fmt: skip
    assert random_effects_line(row) == (
        "random effects: +0.041 [0.026, 0.056], p < 0.0001; heterogeneity tau² = 4.7e-05, I² = 18%, Q = 3.65 "
        "(p = 0.302)"
    )
    nothing = {**row, "meta_effect": float("nan")}
    assert (
        random_effects_line(nothing)
        == "random effects: not computed (some collection's per-query deltas do not vary)"
    )
