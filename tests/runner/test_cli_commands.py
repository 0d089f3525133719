"""The small commands as a user types them: ``schema`` is a JSON Schema every shipped config satisfies,
``validate`` prints one exact line (exit 0) or one located error (exit 2), and ``pool --format jsonl``
writes the CSV format's rows as JSON lines."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import jsonschema
import pytest
import yaml
from support.cli import NO_TIMING, REPO, error_lines, invoke_cli
from support.configs import MINIMAL

SHIPPED = sorted((REPO / "configs").glob("*.yaml"))
POOL_CONFIG = """\
name: pool-formats
dataset:
  name: hr-docs
  level: chunk
control:
  retrievers:
    bm25: {}
  top_k: 10
treatments:
  deeper-bm25:
    retrievers:
      bm25: {k1: 0.9}
tracking:
  enabled: false
"""


@pytest.fixture(scope="module")
def schema(tmp_path_factory: pytest.TempPathFactory, embedding_cache: Path) -> jsonschema.Validator:
    """``abcompare schema``'s output as a validator (the command must succeed and print only JSON)."""
    result = invoke_cli(["schema"], tmp_path_factory.mktemp("schema"), embedding_cache)
    assert result.returncode == 0, result.stderr[-3000:]
    document = json.loads(result.stdout)
    validator = jsonschema.validators.validator_for(document)
    validator.check_schema(document)  # a well-formed JSON Schema of the draft it declares (else the latest)
    return validator(document)


def errors_at(validator: jsonschema.Validator, config: dict) -> list[tuple[str, str]]:
    """Each schema error as (dotted key path, the JSON Schema keyword that failed)."""
    return [(".".join(map(str, e.absolute_path)), e.validator) for e in validator.iter_errors(config)]


@pytest.mark.parametrize("path", SHIPPED, ids=[p.name for p in SHIPPED])
def test_the_schema_accepts_every_shipped_config(schema: jsonschema.Validator, path: Path) -> None:
    assert errors_at(schema, yaml.safe_load(path.read_text())) == []


def test_the_schema_refuses_a_bad_config_at_the_bad_key(schema: jsonschema.Validator) -> None:
    config = yaml.safe_load((REPO / "configs" / "rrf_vs_dbsf.yaml").read_text())
    # the README: "n_resamples up to 1,000,000, depth and top_k up to 10,000"
    config["significance"]["n_resamples"] = 1_000_000
    config["control"]["top_k"] = 10_000
    assert errors_at(schema, config) == []
    config["significance"]["n_resamples"] = 1_000_001
    config["control"]["top_k"] = 10_001
    config["evaluation"]["cutofs"] = [5]
    assert sorted(errors_at(schema, config)) == [
        ("control.top_k", "maximum"),
        ("evaluation", "additionalProperties"),
        ("significance.n_resamples", "maximum"),
    ]
    del config["treatments"]  # neither treatments nor a sweep: nothing to compare
    assert ("", "anyOf") in errors_at(schema, config)


def test_validate_prints_one_exact_line_and_exits_0(tmp_path: Path, embedding_cache: Path) -> None:
    config = REPO / "configs" / "chunk_size.yaml"  # one treatment, chunks-500, on the hr-docs example
    result = invoke_cli(["validate", str(config)], tmp_path, embedding_cache)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout == f"{config}: valid — control vs chunks-500 on hr-docs\n"
    assert not (tmp_path / "mlflow.db").exists(), "validate runs nothing and opens no store"


def test_validate_refuses_a_bad_value_with_one_located_line_and_exits_2(
    tmp_path: Path, embedding_cache: Path
) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(POOL_CONFIG.replace("top_k: 10", "top_k: many"))
    result = invoke_cli(["validate", str(config)], tmp_path, embedding_cache)
    assert result.returncode == 2, result.stderr[-3000:]
    assert result.stdout == ""
    assert "Traceback" not in result.stderr
    (line,) = error_lines(result.stderr)
    assert line.startswith(f"error: {config}:8: control.top_k: Input should be a valid integer"), line


def read_csv_pool(path: Path) -> tuple[list[str], list[list[str]]]:
    """The CSV pool's header and rows, as text, with the standard library's reader."""
    with path.open(newline="", encoding="utf-8") as handle:
        header, *rows = list(csv.reader(handle))
    return header, rows


def as_csv_text(value: object) -> str:
    """How a JSON value is spelled in a CSV cell: null is an empty cell, numbers and strings as written."""
    return "" if value is None else str(value)


def test_pool_jsonl_holds_the_csv_rows_as_json_lines(tmp_path: Path, embedding_cache: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(POOL_CONFIG)
    for name, fmt in (("pool.csv", "csv"), ("pool.out", "jsonl")):  # the format flag, not the suffix
        result = invoke_cli(
            ["pool", str(config), "-o", name, "--format", fmt, "--depth", "5"], tmp_path, embedding_cache
        )
        assert result.returncode == 0, result.stderr[-3000:]
    header, rows = read_csv_pool(tmp_path / "pool.csv")
    assert header[:3] == ["query_id", "key", "grade"]  # docs/data.md: a `query_id,key,grade,...` header
    lines = (tmp_path / "pool.out").read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    assert len(rows) > 100 and len(records) == len(rows)
    assert all(list(record) == header for record in records)
    assert all(record["grade"] is None for record in records)  # nothing judged yet
    assert [[as_csv_text(record[column]) for column in header] for record in records] == rows


def test_json_keeps_progress_on_stderr_and_stdout_just_json(tmp_path: Path, embedding_cache: Path) -> None:
    """docs/cli.md: "--json prints the whole result as JSON on stdout ... Progress goes to stderr, so stdout
    stays parseable": the stage lines still show (a long first run is not silent), and stdout is one JSON
    document and nothing else; ``--quiet`` is what silences progress."""
    config = tmp_path / "config.yaml"
    config.write_text(MINIMAL + "significance:\n  n_resamples: 200\ntracking:\n  enabled: false\n")
    args = ["run", str(config), "--json", *NO_TIMING]
    result = invoke_cli(args, tmp_path, embedding_cache)
    assert result.returncode == 0, result.stderr[-3000:]
    payload = json.loads(result.stdout)  # the whole of stdout parses: no progress line mixed in
    assert payload["primary_metric"] and "loose" in payload["verdicts"]
    stages = [line for line in result.stderr.splitlines() if line.startswith("• ")]
    assert any(line.startswith("• control") for line in stages), result.stderr[-3000:]
    assert any(line.startswith("• treatment loose") for line in stages), result.stderr[-3000:]
    assert not any(line.startswith("• ") for line in result.stdout.splitlines())
    quiet = invoke_cli([*args, "--quiet"], tmp_path, embedding_cache)
    assert quiet.returncode == 0 and json.loads(quiet.stdout)["verdicts"].keys() == payload["verdicts"].keys()
    assert not any(line.startswith("• ") for line in quiet.stderr.splitlines()), quiet.stderr[-3000:]
