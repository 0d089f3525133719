"""Query planning as a user meets it: configs/query_planning.yaml runs and gives the verdicts the README
states; a bad variants file or setting is one located line, exit 2, before any run opens."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from mlflow import MlflowClient
from support.cli import NO_TIMING, error_lines, invoke_cli
from support.readme import as_printed, doc_section

HR_DOCS_CONFIG = """\
name: planning
dataset:
  name: hr-docs
control:
  retrievers:
    bm25: {{}}
  top_k: 10
treatments:
  planned:
    query_planning:
{planning}
significance:
  n_resamples: 200
"""


def write_config(folder: Path, planning: str, variants: list[str] | None = None) -> Path:
    """A BM25 comparison whose treatment plans its queries (``planning``: YAML lines under
    query_planning), with ``variants`` as the lines of ``rewrites.jsonl`` beside it."""
    if variants is not None:
        (folder / "rewrites.jsonl").write_text("\n".join(variants) + "\n")
    indented = "\n".join(f"      {line}" for line in planning.splitlines())
    path = folder / "config.yaml"
    path.write_text(HR_DOCS_CONFIG.format(planning=indented))
    return path


def one_error(result) -> str:
    assert result.returncode == 2, (result.returncode, result.stderr[-3000:])
    assert "Traceback" not in result.stderr
    lines = error_lines(result.stderr)
    assert len(lines) == 1, result.stderr
    return lines[0]


def nothing_ran(folder: Path, result) -> None:
    assert "• control" not in result.stderr, result.stderr
    assert not (folder / "mlflow.db").exists()


def config_line(path: Path, text: str) -> int:
    (number,) = [i for i, line in enumerate(path.read_text().splitlines(), 1) if line.strip() == text]
    return number


GOOD = '{"query_id": "qa-001", "variants": ["Lisbon daily allowance"]}'


EMPTY = '{"query_id": "qa-002", "variants": ["a hotel after a cancelled flight", ""]}'
NOT_A_STRING = '{"query_id": "qa-002", "variants": [["nested"]]}'


@pytest.mark.parametrize(
    "command, bad, message",
    [
        ("validate", EMPTY, "variants[1]: query 'qa-002': variant 2 is empty"),
        ("run", EMPTY, "variants[1]: query 'qa-002': variant 2 is empty"),
        ("validate", NOT_A_STRING, "variants[0]: query 'qa-002': variant 1 is not a string ([\"nested\"])"),
    ],
)
def test_an_empty_or_non_string_variant_is_an_error_at_its_line(
    tmp_path, embedding_cache, command, bad, message
):
    config = write_config(tmp_path, "variants: rewrites.jsonl", [GOOD, bad])
    result = invoke_cli([command, str(config)], tmp_path, embedding_cache)
    line = one_error(result)
    assert line.startswith(f"error: {tmp_path / 'rewrites.jsonl'}:2: {message} (")
    nothing_ran(tmp_path, result)


def test_an_unknown_query_id_is_an_error_at_its_line_before_any_run_opens(tmp_path, embedding_cache):
    config = write_config(
        tmp_path, "variants: rewrites.jsonl", [GOOD, "", '{"query_id": "qa-999", "variants": ["x"]}']
    )
    result = invoke_cli(["run", str(config)], tmp_path, embedding_cache)
    line = one_error(result)
    assert line.startswith(
        f"error: {tmp_path / 'rewrites.jsonl'}:3: query_id: unknown query id 'qa-999': the dataset's query "
        "file has no such query ("
    )
    nothing_ran(tmp_path, result)


def test_queries_the_file_lacks_are_one_warning_and_retrieved_by_their_original(tmp_path, embedding_cache):
    config = write_config(tmp_path, "variants: rewrites.jsonl", [GOOD])
    result = invoke_cli(
        ["run", str(config), "--json", "--set", "tracking.enabled=false", *NO_TIMING],
        tmp_path,
        embedding_cache,
    )  # no timing pass: its budget note on a loaded machine is a second warning this test is not about
    assert result.returncode == 0, result.stderr[-3000:]
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert warnings == [
        f"warning: {tmp_path / 'rewrites.jsonl'}: no variants for 123 queries of 124: those are retrieved by "
        "their original text alone"
    ]
    payload = json.loads(result.stdout)
    assert payload["n_queries"] == 124


@pytest.mark.parametrize(
    "planning, key, message",
    [
        ("expansion: rm3", "expansion: rm3",
         "treatments.planned.query_planning.expansion: rm3 expands the queries of BM25 retrievers, and this "
         "variant has none"),
        ("variants: missing.jsonl", "variants: missing.jsonl", "treatments.planned.query_planning.variants: "
         "file not found: {folder}/missing.jsonl"),
    ],
)  # fmt: skip
def test_a_bad_planning_setting_is_an_error_at_its_key(tmp_path, embedding_cache, planning, key, message):
    config = write_config(tmp_path, planning)
    if "rm3" in planning:  # the treatment retrieves densely only
        text = config.read_text().replace(
            "  planned:\n", "  planned:\n    retrievers: {bm25: null, dense: {}}\n"
        )
        config.write_text(text)
    result = invoke_cli(["validate", str(config)], tmp_path, embedding_cache)
    line = one_error(result)
    expected = f"error: {config}:{config_line(config, key)}: {message.format(folder=tmp_path)}"
    assert line.startswith(expected), line
    nothing_ran(tmp_path, result)


# ------------------------------------------------------------------------------ the shipped config
def test_the_shipped_query_planning_config_gives_the_readme_verdicts(shipped_run):
    """configs/query_planning.yaml on the example (its one run of the session, shared with the README's
    scenario table): hand-written variants find more (recall@10 better), RM3 does not significantly change
    it; the README's query-planning paragraph states both, with these means."""
    workdir, result = shipped_run("query_planning")
    assert result.returncode == 0, result.stderr[-3000:]
    payload = json.loads(result.stdout)
    assert payload["n_queries"] == 124
    means = payload["means"]
    verdicts = {name: payload["verdicts"][name]["verdict"] for name in ("variants", "rm3")}
    assert verdicts == {"variants": "better", "rm3": "no significant difference"}
    assert payload["primary_metric"] == "recall@10"
    client = MlflowClient(tracking_uri=f"sqlite:///{workdir / 'mlflow.db'}")
    child = client.get_run(payload["variant_run_ids"]["variants"])
    assert child.data.params["query_planning.variants"].endswith("configs/query_variants/hr_docs.jsonl")

    section = doc_section("docs/index.md", "Query planning")
    row = " ".join(section.split())
    found = re.search(
        r"variants: \*\*better\*\* \(recall@10 (\S+) → (\S+), precision@10 (\S+) → (\S+)\); "
        r"RM3: \*\*no significant difference\*\* \(recall@10 (\S+) → (\S+)\)",
        row,
    )
    assert found, row
    control, variants, rm3 = means["control"], means["variants"], means["rm3"]
    figures = [control["recall@10"], variants["recall@10"], control["precision@10"],
               variants["precision@10"], control["recall@10"], rm3["recall@10"]]  # fmt: skip
    assert [
        as_printed(value, printed) for value, printed in zip(figures, found.groups(), strict=True)
    ] == list(found.groups())
