"""``abcompare init``: a commented, valid config from what a dataset and its run files hold, the alignment
of each run said before anything is written, and a located error for a folder it cannot use."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from support.cli import NO_TIMING, REPO, error_lines, invoke_cli

from abcompare.config import load_config
from abcompare.core.errors import AbcompareError
from abcompare.starter.init import write_initial_config

PRODUCTION = REPO / "configs" / "runs" / "hr_docs_production.trec"


def init(tmp_path: Path, dataset: str | None, *runs: str, **files: Path) -> tuple[Path, list[str]]:
    """``write_initial_config`` into ``tmp_path/config.yaml``: the file and the lines it said."""
    said: list[str] = []
    output = tmp_path / "config.yaml"
    write_initial_config(output, dataset=dataset, runs=list(runs), echo=said.append, **files)
    return output, said


def written(path: Path) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


# ------------------------------------------------------------------------------- what it chooses
def test_cranfield_graded_document_judgments_give_a_trec_ndcg_config_that_validates(
    tmp_path: Path, datasets_dir: Path
):
    config, said = init(tmp_path, str(datasets_dir / "cranfield"))
    raw, text = written(config), config.read_text()
    assert raw["dataset"] == {"path": str(datasets_dir / "cranfield"), "split": "test", "level": "document"}
    assert raw["evaluation"]["convention"] == "trec" and raw["evaluation"]["primary_metric"] == "ndcg@10"
    assert "# graded qrels (grades 1-4): nDCG uses each grade as its gain" in text  # the README: 1-4
    assert raw["control"]["chunking"] == {"strategy": "none"}  # abstracts, whole
    assert raw["control"]["retrievers"] == {"bm25": {}}
    assert raw["treatments"]["hybrid-rrf"]["retrievers"] == {"dense": {"model": "all-MiniLM-L6-v2"}}
    assert (
        said[0]
        == "dataset cranfield: 225 queries, 1,612 judgments of 225 queries (graded 1-4), 1,400 documents"
    )
    assert (
        said[1] == "level: document (830 of 830 judged ids are corpus documents)"
    )  # README: 830 distinct docs
    assert load_config(config).evaluation.primary_metric == "ndcg@10"


@pytest.mark.parametrize(
    "name, judged, other_splits",
    [("scifact", "binary qrels", " (other splits: train)"), ("cisi", "binary qrels", "")],
)
def test_binary_beir_collections_give_configs_that_validate(
    name: str, judged: str, other_splits: str, tmp_path: Path, datasets_dir: Path
):
    config, _ = init(tmp_path, str(datasets_dir / name))
    text = config.read_text()
    assert f"# {judged} (grade 1 = relevant)" in text
    assert f"# qrels/test.tsv{other_splits}" in text
    assert written(config)["dataset"]["level"] == "document"
    assert load_config(config).dataset.split == "test"


def test_the_shipped_example_by_name_with_a_run_file_is_bm25_against_that_run(tmp_path: Path):
    config, said = init(tmp_path, "hr-docs", f"prod={PRODUCTION}")
    raw = written(config)
    assert raw["dataset"] == {"name": "hr-docs", "split": "test", "level": "document"}
    assert raw["control"]["chunking"]["strategy"] == "recursive"  # handbook pages, not abstracts
    assert raw["treatments"] == {"prod": {"run": {"path": str(PRODUCTION)}}}
    assert raw["evaluation"]["cutoffs"] == [1, 5, 10]  # the run lists 20 hits a query
    assert said[2].startswith(
        f"run prod ({PRODUCTION}): alignment: 35/35 annotated ids appear among hit keys"
    )
    config_file = load_config(config)
    assert list(config_file.treatments) == ["prod"]


def test_two_runs_are_the_control_and_the_treatment_and_paths_inside_the_folder_stay_relative(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.chdir(tmp_path)  # run files are named as typed, from the current folder
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "a.trec").write_bytes(PRODUCTION.read_bytes())
    reversed_scores = [line.rsplit(" ", 2) for line in PRODUCTION.read_text().splitlines()]
    (runs / "b.trec").write_text("".join(f"{h} {-float(s)} {t}\n" for h, s, t in reversed_scores))
    config, said = init(tmp_path, "hr-docs", "old=runs/a.trec", "new=runs/b.trec")
    raw = written(config)
    assert raw["control"] == {"run": {"path": "runs/a.trec"}}
    assert raw["treatments"] == {"new": {"run": {"path": "runs/b.trec"}}}
    assert [line.split(":")[0] for line in said if line.startswith("run ")] == [
        "run old (runs/a.trec)",
        "run new (runs/b.trec)",
    ]
    assert load_config(config).variants()["new"].run.path == runs / "b.trec"


@pytest.mark.filterwarnings("ignore:.*changes nothing")  # the same run twice: only the config is checked
def test_queries_and_qrels_files_without_a_corpus_need_two_runs(tmp_path: Path):
    example = REPO / "abcompare" / "examples" / "hr_docs"
    files = {"queries": example / "queries.jsonl", "qrels": example / "qrels" / "test.chunks.tsv"}
    with pytest.raises(AbcompareError, match="the dataset has no corpus to retrieve from, and 1 run given"):
        init(tmp_path, None, f"prod={PRODUCTION}", **files)
    config, said = init(tmp_path, None, f"a={PRODUCTION}", f"b={PRODUCTION}", **files)
    assert (
        said[1] == "level: chunk (120 of 120 judged ids are chunk keys (document#...))"
    )  # sort -u of the file
    raw = written(config)
    assert raw["dataset"]["level"] == "chunk" and raw["evaluation"]["convention"] == "ai4j"
    assert raw["dataset"]["annotations"] == str(files["qrels"])
    load_config(config)


# ------------------------------------------------------------------------------- what it refuses
def test_bad_folders_and_runs_are_located_errors_and_nothing_is_written(tmp_path: Path):
    empty = tmp_path / "empty"
    empty.mkdir()
    no_qrels = tmp_path / "no-qrels"
    no_qrels.mkdir()
    (no_qrels / "queries.jsonl").write_text('{"_id": "q1", "text": "a question"}\n')
    a_file = tmp_path / "file.txt"
    a_file.write_text("x\n")
    garbage = tmp_path / "garbage.trec"
    garbage.write_text("qa-001 Q0 doc 1 high tag\n")
    cases = [
        (str(empty), [], f"{empty}: --dataset: the dataset folder has no queries.jsonl"),
        (
            str(no_qrels),
            [],
            f"{no_qrels}: --dataset: the dataset folder has no judgments: no qrels/<split>.tsv",
        ),
        (str(a_file), [], f"{a_file}: --dataset: expected a BEIR folder"),
        (str(tmp_path / "nowhere"), [], f"{tmp_path / 'nowhere'}: --dataset: no such folder"),
        ("hr-docs", [f"bad={garbage}"], f"{garbage}:1: "),
        ("hr-docs", ["prod"], "--run: expected NAME=FILE, got 'prod'"),
        ("hr-docs", [f"a/b={PRODUCTION}"], "--run: run name 'a/b' contains a path separator"),
    ]
    out = tmp_path / "out"
    out.mkdir()
    for dataset, runs, expected in cases:
        with pytest.raises(AbcompareError) as caught:
            init(out, dataset, *runs)
        assert str(caught.value).startswith(expected), (str(caught.value), expected)
    assert list(out.iterdir()) == []


def test_the_command_says_the_alignment_before_it_writes_and_refuses_to_overwrite(
    tmp_path: Path, embedding_cache: Path
):
    args = ["init", "--dataset", "hr-docs", "--run", f"prod={PRODUCTION}"]
    result = invoke_cli(args, tmp_path, embedding_cache)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    aligned = next(i for i, line in enumerate(lines) if line.startswith("run prod ("))
    wrote = next(i for i, line in enumerate(lines) if line.startswith("wrote config.yaml: "))
    assert aligned < wrote
    before = (tmp_path / "config.yaml").read_text()
    assert before.startswith(f"# Written by `abcompare init --dataset hr-docs --run prod={PRODUCTION}`")

    again = invoke_cli(args, tmp_path, embedding_cache)
    assert again.returncode == 2
    assert error_lines(again.stderr) == [
        "error: --output: config.yaml: the file exists (use --force to overwrite it)"
    ]
    assert again.stdout == "" and (tmp_path / "config.yaml").read_text() == before
    empty = tmp_path / "empty"
    empty.mkdir()
    bad = invoke_cli(["init", "--dataset", str(empty), "-o", "other.yaml"], tmp_path, embedding_cache)
    assert bad.returncode == 2 and len(error_lines(bad.stderr)) == 1, bad.stderr
    assert not (tmp_path / "other.yaml").exists()


# ------------------------------------------------------------------------------- what it runs
@pytest.mark.slow
def test_the_configs_it_writes_run_on_the_example_and_on_cranfield(
    tmp_path: Path, datasets_dir: Path, embedding_cache: Path
):
    example = tmp_path / "example"
    example.mkdir()
    made = invoke_cli(
        ["init", "--dataset", "hr-docs", "--run", f"prod={PRODUCTION}"], example, embedding_cache
    )
    assert made.returncode == 0, made.stderr
    ran = invoke_cli(
        ["run", "config.yaml", "--json", "--set", "significance.n_resamples=1000", *NO_TIMING],
        example,
        embedding_cache,
    )
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert json.loads(ran.stdout)["verdicts"]["prod"]["metric"] == "ndcg@10"

    # Cranfield with two run files (no retrieval): the judged documents of each query, and the same
    # lists reversed, each after two unjudged documents
    cranfield = tmp_path / "cranfield"
    cranfield.mkdir()
    qrels = [
        line.split("\t")
        for line in (datasets_dir / "cranfield" / "qrels" / "test.tsv").read_text().splitlines()[1:]
    ]
    by_query: dict[str, list[str]] = {}
    for query, doc, _ in qrels:
        by_query.setdefault(query, []).append(doc)
    for name, order in (("first", 1), ("second", -1)):
        lines = []
        for query, docs in by_query.items():
            unjudged = [d for d in ("471", "995") if d not in docs]
            for rank, doc in enumerate(unjudged + docs[::order], start=1):
                lines.append(f"{query} Q0 {doc} {rank} {1000 - rank} {name}\n")
        (cranfield / f"{name}.trec").write_text("".join(lines))
    made = invoke_cli(
        [
            "init",
            "--dataset",
            str(datasets_dir / "cranfield"),
            "--run",
            "first=first.trec",
            "--run",
            "second=second.trec",
        ],
        cranfield,
        embedding_cache,
    )
    assert made.returncode == 0, made.stderr
    ran = invoke_cli(
        ["run", "config.yaml", "--json", "--set", "significance.n_resamples=1000", *NO_TIMING],
        cranfield,
        embedding_cache,
    )
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert json.loads(ran.stdout)["verdicts"]["second"]["metric"] == "ndcg@10"
