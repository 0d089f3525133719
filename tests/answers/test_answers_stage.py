"""The answers stage inside ``run_comparison`` on the shipped example (configs/answers.yaml, with a Python
generator handed over for the treatment and no judge, so it runs in seconds): each variant answered from its
top-k hits, the citation scores compared paired, the lines and the JSON block (no traces: tracking is off
here; tests/answers/test_answers_run.py reads them back); and the bad inputs of the section: a generator
nobody handed over (refused before any run), an answers file with a bad line (its runs closed FAILED), an
unknown generator name in the YAML."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from abcompare.answers import AnswerError, Hit, Query
from abcompare.config.loading import load_config
from abcompare.core.errors import ConfigError
from abcompare.outcome.console import result_as_json
from abcompare.runner import run_comparison

pytestmark = pytest.mark.slow

CONFIG = Path(__file__).resolve().parents[2] / "configs" / "answers.yaml"


def first_hit(query: Query, hits: list[Hit]) -> tuple[str, list[str]]:
    """Copies the top hit's first 80 characters and cites it: a generator whose answers are known."""
    return hits[0].text[:80] + ".", [hits[0].id]


def _config(tmp_path: Path, *overrides: str):
    return load_config(
        CONFIG,
        [f"tracking.uri=sqlite:///{tmp_path / 'mlflow.db'}", "efficiency.repeats=0", "answers.judge=null",
         "answers.variants.smollm2.generator=python:first_hit", "answers.max_queries=4", *overrides],
    )  # fmt: skip


def test_the_stage_answers_with_a_handed_over_generator_and_compares(tmp_path: Path) -> None:
    """Tracking off (the shipped run's test reads the traces and metrics back from MLflow): no trace."""
    config = _config(tmp_path, "tracking.enabled=false")
    result = run_comparison(config, generators={"first_hit": first_hit})
    outcome = result.answers
    assert list(outcome.answers) == ["control", "smollm2"]
    assert outcome.answers["control"].source == "generator:extractive"
    queries = outcome.comparison.queries
    assert len(queries) == 4
    for query_id, answer, cited in outcome.answers["smollm2"].table.itertuples(index=False):
        hits = outcome.answers["smollm2"].hits[query_id]
        assert len(hits) == 2 and all(len(h.text) > 80 for h in hits)  # each hit's own chunk text
        assert answer == hits[0].text[:80].strip() + "." and cited == (hits[0].id,)
    table = outcome.comparison.comparison
    assert set(table["metric"]) == {"citation_precision", "citation_recall"}  # no judge: exact scores only
    assert table.set_index("metric").loc["citation_precision", "role"] == "primary"
    lines = outcome.lines()
    assert lines[0].startswith("answers (control: generator:extractive, smollm2: generator:python:first_hit)")
    assert any(line.startswith("answers smollm2 vs control, citation_precision (primary)") for line in lines)
    assert outcome.n_traces == 0 and outcome.trace_records() == []
    assert not any(line.startswith("answer traces") for line in lines)
    block = json.loads(json.dumps(result_as_json(result)))["answers"]
    assert block["sources"]["smollm2"] == "generator:python:first_hit" and len(block["comparison"]) == 2


def test_a_python_generator_nobody_handed_over_is_one_located_error_before_any_run(tmp_path: Path) -> None:
    with pytest.raises(AnswerError) as info:
        run_comparison(_config(tmp_path), generators={"first": first_hit})
    assert str(info.value).startswith(
        f"{CONFIG}: answers.variants.smollm2.generator: names the Python generator 'first_hit', which nobody "
        "handed over as a callable"
    )
    assert not (tmp_path / "mlflow.db").exists()  # refused before the store was opened


def test_an_unknown_generator_in_the_yaml_is_refused_at_load(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="unknown generator 'my.module:fn'"):
        _config(tmp_path, "answers.generator=my.module:fn")


def test_an_answers_file_with_a_bad_line_is_located(tmp_path: Path) -> None:
    path = tmp_path / "answers.jsonl"
    path.write_text('{"query_id": "no-such-query", "answer": "x", "cited_ids": []}\n')
    config = _config(tmp_path, f"answers.variants.smollm2={{file: {path}}}")
    with pytest.raises(AnswerError) as info:
        run_comparison(config)
    assert str(info.value).startswith(f"{path}:1: query 'no-such-query' is not in the query set")
    from mlflow import MlflowClient  # the stage failed inside the tracking session: its runs are closed

    client = MlflowClient(f"sqlite:///{tmp_path / 'mlflow.db'}")
    experiment = client.get_experiment_by_name(config.tracking.experiment)
    statuses = {r.info.status for r in client.search_runs([experiment.experiment_id])}
    assert statuses == {"FAILED"}
