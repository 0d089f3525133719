"""What a judge and an answers section concluded (``ComparisonView.stage_lines``) is one thing every page
reads: the console prints it under the verdicts, ``report.html`` gives it a section, the Markdown summary
lists it, and it survives ``result.json`` (``to_json``/``from_json``), so a report read back from MLflow
shows it too. A comparison without those sections shows nothing of the kind."""

from __future__ import annotations

import json
from html import escape

import numpy as np
import pandas as pd

from abcompare.outcome.html import page
from abcompare.outcome.markdown import summary_markdown
from abcompare.outcome.view import ComparisonView, ExperimentView
from abcompare.stats.comparison import paired_test

IDS = pd.Index([f"q{i}" for i in range(20)], name="query_id")
LINES = [
    "judge python:length (prompt umbrela-v1): graded 12 pooled hits <& 4 unusable>",
    "judge agreement with people on 30 pairs: weighted kappa 0.12 [-0.05, 0.30]",
    "answers: faithfulness_*_ better",
]


def render(view: ComparisonView) -> str:
    """One collection's page, as ``report.html`` renders an experiment of one collection."""
    return page(ExperimentView.shown(view))


def view(stage_lines: list[str]) -> ComparisonView:
    rng = np.random.default_rng(5)
    control = rng.uniform(0.2, 0.8, IDS.size)
    per_query = {
        "control": pd.DataFrame({"ndcg@10": control}, index=IDS),
        "t": pd.DataFrame({"ndcg@10": control + rng.normal(0, 0.05, IDS.size)}, index=IDS),
    }
    tested = paired_test(per_query["control"], {"t": per_query["t"]}, n_resamples=200)
    table = tested.table
    queries = pd.DataFrame({"text": [f"query {i}" for i in range(IDS.size)]}, index=IDS)
    return ComparisonView(
        name="c", description="", dataset="toy", n_queries=IDS.size, level="chunk", convention="trec",
        comparison=table, settings=tested.settings, per_query=per_query, queries=queries,
        stage_lines=stage_lines,
    )  # fmt: skip


def test_the_lines_are_a_section_of_the_page_and_items_of_the_summary() -> None:
    shown = view(LINES)
    html = render(shown)
    section = html[html.index("<h2>Judged by a model</h2>") :]
    assert [line for line in LINES if f"<p>{escape(line)}</p>" not in section] == []
    markdown = summary_markdown(shown)
    assert "- judge python:length (prompt umbrela-v1): graded 12 pooled hits \\<& 4 unusable>" in markdown
    assert "- answers: faithfulness\\_\\*\\_ better" in markdown


def test_the_lines_survive_result_json() -> None:
    shown = view(LINES)
    data = json.loads(json.dumps(shown.to_json()))
    assert data["stage_lines"] == LINES
    back = ComparisonView.from_json(
        data,
        comparison=shown.comparison,
        settings=shown.settings,
        per_query=shown.per_query,
        queries=shown.queries,
    )
    assert list(back.stage_lines) == LINES and render(back) == render(shown)


def test_without_a_judge_or_answers_nothing_of_the_kind_is_shown() -> None:
    shown = view([])
    assert "Judged by a model" not in render(shown)
    assert "judge" not in summary_markdown(shown)
    legacy = {k: v for k, v in shown.to_json().items() if k != "stage_lines"}  # a result.json from before
    back = ComparisonView.from_json(
        legacy,
        comparison=shown.comparison,
        settings=shown.settings,
        per_query=shown.per_query,
        queries=shown.queries,
    )
    assert tuple(back.stage_lines) == ()
