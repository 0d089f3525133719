"""An error names the input that holds the problem: a NaN score in a JSONL run names the run's file and
line, one from a Python retriever the retriever and the query (before: the qrels file and an internal
row); ``abcompare init --run`` names that clash as MLflow keys are named by the ``--run`` options (before:
init's own temporary file, gone by then)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.cli import REPO, error_lines, invoke_cli

from abcompare.config import load_config
from abcompare.core.errors import ConfigError, DataError
from abcompare.data.runs import read_run
from abcompare.runner import run_comparison
from abcompare.starter.init import write_initial_config

PRODUCTION = REPO / "configs" / "runs" / "hr_docs_production.trec"


@pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity"])
@pytest.mark.parametrize("field", ["score", "rerank_score", "retrieval_score"])
def test_a_non_finite_score_in_a_jsonl_run_names_its_file_line_and_hit(tmp_path: Path, value, field) -> None:
    path = tmp_path / "run.jsonl"
    good = json.dumps({"query_id": "q1", "hits": [{"id": "d1", "score": 2.0}]})
    hit = f'{{"id": "d2", "{field}": {value}}}'  # json.dumps writes no bare NaN: written by hand
    bad = '{"query_id": "q2", "hits": [{"id": "d1", "%s": 2.0}, %s]}'.replace("%s", field, 1).replace(
        "%s", hit
    )
    path.write_text(f"{good}\n{good.replace('q1', 'q3')}\n{bad}\n")
    with pytest.raises(DataError) as info:
        read_run(path)
    assert (info.value.file, info.value.line, info.value.field) == (str(path), 3, f"hits[1].{field}")


def write_config(folder: Path, control: str, convention: str = "trec") -> Path:
    path = folder / "c.yaml"
    path.write_text(
        f"name: c\ndataset: {{name: hr-docs, level: document}}\ncontrol:\n{control}\n"
        f"treatments:\n  t:\n    run: {{path: {PRODUCTION}, format: trec}}\n"
        f"evaluation: {{cutoffs: [1, 5], convention: {convention}}}\ntracking: {{enabled: false}}\n"
    )
    return path


def hits(score_of_second: float | None):
    def retriever(queries):
        second = {"id": "leave-policy"} | ({} if score_of_second is None else {"score": score_of_second})
        return {q: [{"id": "travel-policy", "score": 2.0}, second] for q in queries["query_id"]}

    return retriever


@pytest.mark.parametrize("second", [float("nan"), None], ids=["nan", "missing"])
def test_a_python_retriever_s_unscored_hit_names_the_retriever_and_query(tmp_path: Path, second) -> None:
    path = write_config(tmp_path, "  run: {python: mine}")
    with pytest.raises(DataError) as info:
        run_comparison(load_config(path), config_path=path, retrievers={"mine": hits(second)})
    text = str(info.value)
    assert "qrels" not in text and "row " not in text
    assert "'mine'" in text and "query '" in text


def test_a_run_file_scored_in_part_names_the_run_file_and_query(tmp_path: Path) -> None:
    run = tmp_path / "part.jsonl"
    run.write_text(
        json.dumps({"query_id": "qa-001", "hits": [{"id": "a", "score": 1.0}, {"id": "b"}]}) + "\n"
    )
    path = write_config(tmp_path, f"  run: {{path: {run}}}")
    with pytest.raises(DataError) as info:
        run_comparison(load_config(path), config_path=path)
    assert info.value.file == str(run) and "query 'qa-001'" in info.value.message


def test_init_names_the_run_options_whose_names_clash(tmp_path: Path) -> None:
    for runs in (["a=" + str(PRODUCTION), "x y=" + str(PRODUCTION), "x_y=" + str(PRODUCTION)],
                 ["a=" + str(PRODUCTION), "Control=" + str(PRODUCTION)]):  # fmt: skip
        with pytest.raises(ConfigError) as info:
            write_initial_config(tmp_path / "out.yaml", dataset="hr-docs", runs=runs, echo=lambda _: None)
        text = str(info.value)
        assert "abcompare-init" not in text and info.value.file is None
        assert info.value.field == "--run" and f"--run {runs[-1]}" in text
    assert list(tmp_path.iterdir()) == []


def test_init_on_the_command_line_names_the_run_options(tmp_path: Path, embedding_cache) -> None:
    runs = [f"c={PRODUCTION}", f"a b={PRODUCTION}", f"a_b={PRODUCTION}"]  # the first is the control
    args = ["init", "--dataset", "hr-docs", *(part for run in runs for part in ("--run", run))]
    result = invoke_cli([*args, "--output", str(tmp_path / "out.yaml")], tmp_path, embedding_cache)
    assert result.returncode == 2, result.stderr[-2000:]
    (line,) = error_lines(result.stderr)
    assert "abcompare-init" not in line and "--run a b=" in line and "--run a_b=" in line
