"""The shipped example configs (``abcompare.config.examples``): one set of files with the checkout's
``configs/``, each asking its question once in its header, found by name from any folder."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from support.cli import REPO, error_lines, invoke_cli

from abcompare.config.examples import example_config, example_configs, header_question
from abcompare.core.errors import ConfigError
from abcompare.examples import CONFIGS


def test_the_packaged_examples_are_the_checkouts_configs_folder_itself():
    assert CONFIGS.resolve() == (REPO / "configs").resolve()
    assert (CONFIGS / "runs" / "hr_docs_production.trec").is_file()  # a config's own files travel with it


def test_every_shipped_config_is_an_example_whose_header_asks_its_question():
    listed = {example.name: example for example in example_configs()}
    documents = {path.stem: yaml.safe_load(path.read_text()) for path in (REPO / "configs").glob("*.yaml")}
    configs = sorted(
        n
        for n, data in documents.items()
        if isinstance(data, dict) and "control" in data and {"dataset", "datasets"} & data.keys()
    )
    assert sorted(listed) == configs  # a YAML file that is no config (a file of variants) is not listed
    assert {"rrf_vs_dbsf", "precomputed_run", "fusion_sweep"} <= set(listed)
    for name, example in listed.items():
        assert header_question(example.path.read_text(encoding="utf-8")) == example.question, name
        assert example.question.endswith("?"), name


def test_the_question_is_the_headers_first_sentence_ending_in_a_question_mark():
    # written out from the shipped files' first comment lines
    listed = {example.name: example.question for example in example_configs()}
    assert (
        listed["bm25_vs_hybrid"] == "Is adding a dense retriever (fused with RRF) worth it over BM25 alone?"
    )
    assert listed["precomputed_run"] == (
        "Does another system (e.g. production search), given as a TREC run file, beat our hybrid retrieval?"
    )
    text = "# A note. Does it help\n# at all? More.\nname: x\n# not the header?\n"
    assert header_question(text) == "Does it help at all?"
    assert header_question("\n# No question here.\nname: x\n") is None
    assert header_question("name: x  # a question?\n") is None


def test_an_example_is_found_by_name_and_an_unknown_one_names_the_known_ones():
    assert example_config("rrf_vs_dbsf") == CONFIGS / "rrf_vs_dbsf.yaml"
    assert example_config(" RRF-vs-DBSF.yaml ") == CONFIGS / "rrf_vs_dbsf.yaml"
    with pytest.raises(ConfigError) as caught:
        example_config("rrf")
    assert caught.value.field == "--example"
    assert "known examples: answers, bm25_vs_hybrid, chunk_size," in str(caught.value)


def test_abcompare_examples_lists_each_example_with_its_question(tmp_path: Path, embedding_cache: Path):
    result = invoke_cli(["examples"], tmp_path, embedding_cache)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    for example in example_configs():
        row = next(line for line in lines if line.startswith(f"{example.name} "))
        assert row.split(None, 1)[1] == example.question
    assert "run one from any folder: abcompare run --example NAME" in lines


@pytest.mark.parametrize(
    "args, expected",
    [
        (["run", "--example", "nope"], "error: --example: no example config named 'nope' (known examples: "),
        (["run", "x.yaml", "--example", "rrf_vs_dbsf"], "error: abcompare run: give a CONFIG or --example"),
        (["run"], "error: abcompare run: Missing argument 'CONFIG'. Give a config file, or --example NAME."),
    ],
)
def test_a_bad_example_choice_is_one_line_and_exit_2(
    args: list[str], expected: str, tmp_path: Path, embedding_cache: Path
):
    result = invoke_cli(args, tmp_path, embedding_cache)
    assert result.returncode == 2
    (line,) = error_lines(result.stderr)
    assert line.startswith(expected), line
    assert list(tmp_path.iterdir()) == []  # nothing ran, no store was made
