"""`abcompare run` on hostile but valid input: names with spaces, brackets and accents, a temporary folder
whose parent holds planted symlinks; and errors that must say where (variant, run file, annotation file)."""

from __future__ import annotations

import json
from pathlib import Path

from mlflow import MlflowClient
from support.cli import invoke_cli
from test_runner_bad_input import assert_clean_failure

CONFIG = """\
name: "[hostile] names"
dataset:
  name: hr-docs
{dataset}
control:
  retrievers:
    bm25: {{}}
  top_k: 20
treatments:
{treatments}
significance:
  n_resamples: 200
tracking:
  experiment: hostile
"""


def write(folder: Path, treatments: str, dataset: str = "") -> Path:
    path = folder / "config.yaml"
    path.write_text(CONFIG.format(treatments=treatments, dataset=dataset))
    return path


def test_odd_names_run_and_nothing_is_written_through_planted_symlinks(
    tmp_path: Path, embedding_cache
) -> None:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    target = tmp_path / "target"
    target.mkdir()
    for name in ("run.trec", "hits.parquet", "metric_distribution.svg", "deltas.svg", "x.parquet"):
        (scratch / name).symlink_to(target / name)  # dangling: a write through it would create the target
    for name in ("variants", "comparison", "tables", "plots"):
        (scratch / name).symlink_to(target, target_is_directory=True)
    config = write(tmp_path, '  "a b":\n    top_k: 10\n  "[x]":\n    top_k: 5\n  "größe.v2":\n    top_k: 15')
    result = invoke_cli(["run", str(config)], tmp_path, embedding_cache, TMPDIR=str(scratch))
    assert result.returncode == 0, result.stderr[-3000:]
    assert "[hostile] names" in result.stdout and "[x] vs control" in result.stdout
    assert list(target.iterdir()) == [], "nothing was written outside the run's own temporary folder"
    assert sorted(p.name for p in scratch.iterdir()) == sorted(
        ["run.trec", "hits.parquet", "metric_distribution.svg", "deltas.svg", "x.parquet"]
        + ["variants", "comparison", "tables", "plots"]
    ), "the run's own temporary folder is gone"
    client = MlflowClient(tracking_uri=f"sqlite:///{tmp_path / 'mlflow.db'}")
    experiment = client.get_experiment_by_name("hostile")
    parent = next(
        r
        for r in client.search_runs([experiment.experiment_id])
        if r.data.tags["abcompare.role"] == "comparison"
    )
    for safe in ("a_b", "_x_", "gr__e.v2"):
        assert f"_vs_control.{safe}.ndcg_at_10.delta" in parent.data.metrics
    plots = {a.path for a in client.list_artifacts(parent.info.run_id, "plots")}
    assert {"plots/paired_a_b.svg", "plots/paired__x_.svg", "plots/paired_gr__e.v2.svg"} <= plots


def test_an_alignment_failure_names_the_variant_its_run_file_and_the_annotations(
    tmp_path: Path, embedding_cache
) -> None:
    run_file = tmp_path / "prod.trec"
    run_file.write_text("".join(f"qa-{i:03d} Q0 expense-reimbursement {1} 1 prod\n" for i in range(1, 20)))
    config = write(tmp_path, "  prod:\n    run: {path: prod.trec, format: trec}")
    result = invoke_cli(["run", str(config)], tmp_path, embedding_cache)
    assert_clean_failure(result, "variant 'prod'", f"run file {run_file}", "test.chunks.tsv", "annotated ids")
    assert not (tmp_path / "mlflow.db").exists()  # refused with the inputs' check: no run was ever opened


def test_no_relevant_annotations_names_the_annotation_file(tmp_path: Path, embedding_cache) -> None:
    qrels = tmp_path / "judged.tsv"
    qrels.write_text("query-id\tcorpus-id\tscore\nqa-001\texpense-reimbursement#chunk-0\t0\n")
    config = write(tmp_path, "  other:\n    top_k: 10", dataset="  annotations: judged.tsv")
    result = invoke_cli(["run", str(config)], tmp_path, embedding_cache)
    assert_clean_failure(result, str(qrels), "variant 'control'", "no relevant annotations")
    assert not (tmp_path / "mlflow.db").exists()  # refused with the inputs' check: no run was ever opened


def test_a_name_that_is_a_path_is_refused_before_anything_runs(tmp_path: Path, embedding_cache) -> None:
    config = write(tmp_path, '  "..":\n    top_k: 10')
    result = invoke_cli(["run", str(config), "--json"], tmp_path, embedding_cache)
    assert_clean_failure(result, "config.yaml:10", "treatment name '..'")
    assert result.stdout == ""
    assert not (tmp_path / "mlflow.db").exists()


def test_json_output_survives_hostile_names(tmp_path: Path, embedding_cache) -> None:
    config = write(tmp_path, '  "[/x] y":\n    top_k: 10'.replace("/", ""))
    result = invoke_cli(["run", str(config), "--json"], tmp_path, embedding_cache)
    assert result.returncode == 0, result.stderr[-3000:]
    assert {row["treatment"] for row in json.loads(result.stdout)["comparison"]} == {"[x] y"}
