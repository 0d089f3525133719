"""The cost table's rows for the relevance judge and the answer generators (issues 39, 40), from a run with
both: their counts are what the run's own callables saw (calls asked, queries answered), and a second run
on the same cache answers every judge call from it. The same rows reach ``--json``'s cost object, the
console's stage lines, report.html and MLflow's cost table. No assertion on seconds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from abcompare.answers.generation import Hit, Query
from abcompare.config import load_config
from abcompare.outcome.html import page as render_page
from abcompare.outcome.json_output import result_as_json
from abcompare.outcome.view import ComparisonView, ExperimentView, stage_lines
from abcompare.runner import run_comparison
from abcompare.tracking.reader import load_comparison

pytestmark = pytest.mark.slow

CONFIG = Path(__file__).resolve().parents[2] / "configs" / "answers.yaml"


def by_length(query_text: str, hit_text: str) -> int:
    return min(3, len(hit_text) // 300)


def first_hit(query: Query, hits: list[Hit]) -> tuple[str, list[str]]:
    return hits[0].text[:80] + ".", [hits[0].id]


def test_the_judge_and_each_generator_get_a_cost_row_with_their_counts(tmp_path: Path) -> None:
    config = load_config(
        CONFIG,
        [f"tracking.uri=sqlite:///{tmp_path / 'mlflow.db'}", "efficiency.repeats=0", "answers.judge=null",
         "answers.max_queries=4",
         "answers.variants.smollm2.generator=python:first_hit", f"cache_dir={tmp_path / 'cache'}",
         "judge.provider=python", "judge.name=length", "judge.max_pairs=5", "judge.agreement_pairs=3"],
    )  # fmt: skip
    asked: list[tuple[str, str]] = []
    answered: list[str] = []

    def judge(query_text: str, hit_text: str) -> int:
        asked.append((query_text, hit_text))
        return by_length(query_text, hit_text)

    def generator(query: Query, hits: list[Hit]) -> tuple[str, list[str]]:
        answered.append(query.query_id)
        return first_hit(query, hits)

    result = run_comparison(config, judges={"length": judge}, generators={"first_hit": generator})
    cost = result_as_json(result)["cost"]
    relevance, answer_judge = cost["relevance judge (python:length)"], cost["answer judge (python:length)"]
    # the one callable graded the pool and the agreement sample, then (no answers.judge of its own) the
    # answers: every call it saw is in one of the two judge rows, none answered from the cache
    assert len(asked) > 0 and relevance["calls"] + answer_judge["calls"] == len(asked)
    assert (
        relevance["calls"] == len(result.judge.labels)
        and relevance["source"] == answer_judge["source"] == "judge"
    )
    assert relevance["cache_hits"] == answer_judge["cache_hits"] == 0
    assert len(answered) == 4  # answers.max_queries: the treatment's generator (the control's is extractive)
    assert cost["answers (smollm2)"]["source"] == "generator" and cost["answers (smollm2)"]["calls"] == 4
    assert cost["answers (control)"]["calls"] == 4  # the extractive baseline counts its own calls
    assert set(cost) == {"control", "smollm2", "relevance judge (python:length)", "answers (control)",
                         "answers (smollm2)", "answer judge (python:length)"}  # fmt: skip
    assert "calls" not in cost["smollm2"]  # a variant's row keeps its own columns
    # the console's stage lines say the same counts; report.html tabulates the rows
    (comparison,) = result.collections.values()
    lines = stage_lines(comparison)
    assert any(line.startswith(f"judge cost: {relevance['calls']:.0f} calls") for line in lines), lines
    page = render_page(ExperimentView.shown(ComparisonView.from_result(comparison)))
    assert "<td>relevance judge (python:length)</td>" in page and "<td>answers (smollm2)</td>" in page
    # MLflow's cost table holds the same rows (what the report rebuilt from MLflow shows)
    logged = load_comparison(tracking_uri=f"sqlite:///{tmp_path / 'mlflow.db'}").table("cost")
    assert logged is not None
    logged = logged.set_index("variant") if "variant" in logged.columns else logged
    assert logged.loc["answers (smollm2)", "calls"] == 4
    assert logged.loc["relevance judge (python:length)", "calls"] == relevance["calls"]
    # again on the same cache: every pair either judge graded is a cache hit, no call
    calls = len(asked)
    again = run_comparison(config, judges={"length": judge}, generators={"first_hit": generator})
    rows = json.loads(json.dumps(result_as_json(again)))["cost"]
    assert len(asked) == calls
    for name, first in (
        ("relevance judge (python:length)", relevance),
        ("answer judge (python:length)", answer_judge),
    ):
        assert rows[name]["calls"] == 0 and rows[name]["cache_hits"] == first["calls"], name
