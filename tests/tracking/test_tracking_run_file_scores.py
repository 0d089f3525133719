"""The logged ``run/run.trec`` carries the real scores (trec convention), so trec_eval on the artifact
reproduces the tool's numbers where scores tie: trec_eval orders ties by docno descending, as the tool's
trec convention does. Before, the file had made-up scores (100, 99, ...) in served order, and on tied runs
trec_eval's nDCG@10 differed (by up to 0.369 on SciFact). Checked with pytrec_eval, an independent
implementation of trec_eval."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.cli import REPO

from abcompare.config import load_config
from abcompare.data.experiment import load_dataset_for_experiment
from abcompare.runner import run_comparison
from abcompare.tracking.artifacts import variant_files
from abcompare.tracking.layout import RUN_FILE

PRODUCTION = REPO / "configs" / "runs" / "hr_docs_production.trec"


def tied_run(path: Path, config_path: Path) -> None:
    """Every query's hits at one score, the judged documents served first, the rest in ascending id order:
    trec_eval's order (ids descending) differs from the served one on every query."""
    dataset = load_dataset_for_experiment(
        load_config(config_path, [f"control.run.path={PRODUCTION}"]).dataset
    )
    documents = sorted(dataset.corpus["doc_id"].astype(str))
    judged = dataset.annotations.groupby("query_id")["key"].apply(list).to_dict()
    with path.open("w") as out:
        for query in dataset.query_ids:
            first = [d for d in judged.get(query, []) if d in documents]
            rest = [d for d in documents if d not in first][:15]
            hits = [{"id": d, "score": 1.0} for d in first + rest]
            out.write(json.dumps({"query_id": query, "hits": hits}) + "\n")


@pytest.mark.filterwarnings("ignore:.*changes nothing")
def test_trec_eval_on_the_logged_run_file_gives_the_tool_s_numbers_on_tied_runs(tmp_path: Path) -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    config_path = tmp_path / "tied.yaml"
    run = tmp_path / "tied.jsonl"
    config_path.write_text(
        f"name: tied\ndataset: {{name: hr-docs, level: document}}\ncontrol:\n  run: {{path: {run}}}\n"
        f"treatments:\n  prod:\n    run: {{path: {PRODUCTION}}}\n"
        f"evaluation: {{cutoffs: [10], metrics: [ndcg], convention: trec}}\n"
        "significance: {n_resamples: 1000}\ntracking: {enabled: false}\n"
    )
    tied_run(run, config_path)
    config = load_config(config_path)
    result = run_comparison(config, config_path=config_path)
    control = result.variants["control"]
    logged = config.model_copy(update={"tracking": config.tracking.model_copy(update={"enabled": True})})
    written = Path(variant_files(logged, control, tmp_path / "scratch")[RUN_FILE])  # what MLflow is given
    lines = [line.split() for line in written.read_text().splitlines()]
    assert {float(line[4]) for line in lines} == {1.0}  # the real (tied) scores, not 100, 99, ...
    runs: dict[str, dict[str, float]] = {}
    for query, _, doc, _, score, _ in lines:
        runs.setdefault(query, {})[doc] = float(score)
    dataset = load_dataset_for_experiment(config.dataset)
    qrels: dict[str, dict[str, int]] = {}
    for query, key, grade in dataset.annotations[["query_id", "key", "grade"]].itertuples(index=False):
        qrels.setdefault(str(query), {})[str(key)] = int(grade)
    theirs = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"}).evaluate(runs)
    ours = control.per_query["ndcg@10"]  # indexed by query id
    assert len(theirs) == len(ours)
    for query, measures in theirs.items():
        assert ours[query] == pytest.approx(measures["ndcg_cut_10"], abs=1e-9), query
    assert any(ours[q] < 1.0 for q in theirs)  # the ties put judged documents below the top: a real test
