"""The CI gate's rule and line, the non-inferiority line under each verdict, and the Markdown job summary,
on comparison tables computed from small per-query frames (three treatments: better, worse, unchanged)."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from abcompare.outcome.gate import FAIL_ON, failing_treatments
from abcompare.outcome.markdown import summary_markdown
from abcompare.outcome.sentences import as_json, gate_sentence, non_inferiority_sentence, verdict_sentence
from abcompare.outcome.verdicts import verdict_lines
from abcompare.outcome.view import ComparisonView
from abcompare.stats.comparison import PairedComparison, paired_test

RNG = np.random.default_rng(7)
IDS = pd.Index([f"q{i}" for i in range(40)], name="query_id")
CONTROL = RNG.uniform(0.2, 0.8, IDS.size)
NOISE = RNG.normal(0, 0.02, IDS.size)


def frame(values: np.ndarray) -> pd.DataFrame:
    return pd.DataFrame({"ndcg@10": values, "recall@10": values}, index=IDS)


@pytest.fixture(scope="module")
def tested() -> PairedComparison:
    treatments = {"up": frame(CONTROL + 0.1 + NOISE), "down": frame(CONTROL - 0.1 + NOISE),
                  "same": frame(CONTROL + NOISE)}  # fmt: skip
    return paired_test(frame(CONTROL), treatments, primary="t", n_resamples=200,
                       non_inferiority_margin=0.05)  # fmt: skip


@pytest.fixture(scope="module")
def table(tested: PairedComparison) -> pd.DataFrame:
    return tested.table


def test_the_table_has_the_three_verdicts(table: pd.DataFrame) -> None:
    primary = table[table["role"] == "primary"].set_index("treatment")
    assert dict(primary["verdict"]) == {"up": "better", "down": "worse", "same": "no significant difference"}
    assert dict(primary["non_inferiority"]) == {
        "up": "non-inferior", "down": "not shown non-inferior", "same": "non-inferior",
    }  # fmt: skip


def test_each_gate_fails_the_treatments_it_names(table: pd.DataFrame) -> None:
    assert FAIL_ON == ("worse", "not-better", "inferior")
    assert failing_treatments(table, "worse") == ["down"]
    assert failing_treatments(table, "not-better") == ["down", "same"]
    assert failing_treatments(table, "inferior") == ["down"]
    assert failing_treatments(table[table["treatment"] == "up"], "not-better") == []


def test_the_gate_line_names_the_treatments(table: pd.DataFrame) -> None:
    said = {"metric": "ndcg@10", "margin": 0.05}
    assert gate_sentence(table, "worse", ["down"], **said) == (
        "gate --fail-on worse failed: down is worse than the control on ndcg@10."
    )
    assert gate_sentence(table, "not-better", ["down", "same"], **said) == (
        "gate --fail-on not-better failed: down (worse), same (no significant difference) are not better "
        "than the control on ndcg@10."
    )
    assert gate_sentence(table, "inferior", [], **said) == (
        "gate --fail-on inferior passed: every treatment is non-inferior on ndcg@10 at margin 0.05."
    )


def test_the_non_inferiority_line_stands_under_its_verdict(tested: PairedComparison) -> None:
    table = tested.table
    lines = verdict_lines(tested, None, None)
    kinds = [line.kind for line in lines]
    assert kinds == ["verdict", "non_inferiority", "secondary"] * 3
    down = table[(table["treatment"] == "down") & (table["role"] == "primary")].iloc[0]
    p = down["p_non_inferiority_adjusted"]
    assert non_inferiority_sentence(tested, "down") == (
        f"Non-inferiority: not shown non-inferior on ndcg@10 at margin 0.05, p = {p:.3f} (one-sided t test "
        "of delta > -0.05; Holm-adjusted over 3 treatments)."
    )
    assert as_json(tested)["down"]["non_inferiority"]["verdict"] == "not shown non-inferior"
    assert as_json(tested)["down"]["non_inferiority"]["p"] == p
    at_zero = paired_test(frame(CONTROL), {"up": frame(CONTROL + 0.1 + NOISE)}, primary="t",
                          n_resamples=200, non_inferiority_margin=0.0)  # fmt: skip
    zero = non_inferiority_sentence(at_zero, "up")
    assert "at margin 0, p < 0.0001 (one-sided t test of delta > 0)." in zero
    plain = paired_test(frame(CONTROL), {"up": frame(CONTROL + 0.1 + NOISE)}, n_resamples=200)
    assert non_inferiority_sentence(plain, "up") == "" and "non_inferiority" not in as_json(plain)["up"]


def markdown_tables(text: str) -> list[list[list[str]]]:
    """Every GitHub-flavoured Markdown table of ``text``: rows of cells (the separator row checked and
    dropped), cells split on unescaped pipes."""
    tables, current = [], []
    for line in text.splitlines() + [""]:
        if line.startswith("|"):
            current.append([cell.strip() for cell in re.split(r"(?<!\\)\|", line.strip())[1:-1]])
        elif current:
            header, rule, *body = current
            assert all(re.fullmatch(r":?-{3,}:?", cell) for cell in rule), rule
            assert len(rule) == len(header) and all(len(row) == len(header) for row in body)
            tables.append([header, *body])
            current = []
    return tables


def unescaped(text: str) -> str:
    """Markdown text as it renders: a backslash escape shows the character itself."""
    return re.sub(r"\\(.)", r"\1", text)


def test_the_markdown_summary_has_the_verdicts_and_a_table_that_parses(tested: PairedComparison) -> None:
    table = tested.table
    inputs = ComparisonView(
        name="gate|test", description="", dataset="toy", n_queries=40, level="chunk", convention="ai4j",
        comparison=table, settings=tested.settings, per_query={}, queries=pd.DataFrame(),
    )  # fmt: skip
    text = summary_markdown(inputs)
    paragraphs = [unescaped(p) for p in text.split("\n\n")]
    for name in ("up", "down", "same"):
        assert verdict_sentence(tested, name) in paragraphs  # a paragraph of its own, as written
        assert f"- {non_inferiority_sentence(tested, name)}" in "\n".join(paragraphs)
    (compact,) = markdown_tables(text)
    header, *body = compact
    assert header[:3] == ["treatment", "metric", "role"] and len(body) == len(table)
    assert body[0][:3] == ["up", "ndcg@10", "primary"] and body[0][-1] == "better"
    assert text.startswith("## abcompare: gate\\|test\n")  # a pipe in a name is escaped


def test_the_description_and_report_html_carry_the_non_inferiority_line(tested: PairedComparison) -> None:
    from html import escape

    from abcompare.outcome.html import page as render_page
    from abcompare.outcome.verdicts import description_markdown
    from abcompare.outcome.view import ExperimentView

    table = tested.table

    sentence = non_inferiority_sentence(tested, "same")
    assert f"\n\n{sentence}\n\n" in description_markdown(tested, context="toy")  # its own paragraph
    per_query = {"control": frame(CONTROL), "up": frame(CONTROL + 0.1 + NOISE),
                 "down": frame(CONTROL - 0.1 + NOISE), "same": frame(CONTROL + NOISE)}  # fmt: skip
    inputs = ComparisonView(
        name="toy", description="", dataset="toy", n_queries=40, level="chunk", convention="ai4j",
        comparison=table, settings=tested.settings, per_query=per_query, queries=pd.DataFrame(),
    )  # fmt: skip
    page = render_page(ExperimentView.shown(inputs))
    verdict = escape(verdict_sentence(tested, "same"))
    assert f'{verdict}<br><span class="non_inferiority">{escape(sentence)}</span>' in page


def test_a_sweeps_markdown_summary_tabulates_its_grid(tested: PairedComparison) -> None:
    from abcompare.outcome.sentences import grid_frame

    table = tested.table

    grid = grid_frame(table, {"up": {"fusion.k": 10}, "down": {"fusion.k": 20}, "same": {"fusion.k": 30}})
    inputs = ComparisonView(
        name="sweep", description="", dataset="toy", n_queries=40, level="chunk", convention="ai4j",
        comparison=table, settings=tested.settings, per_query={}, queries=pd.DataFrame(), grid=grid,
        grid_settings=["fusion.k"],
    )  # fmt: skip
    text = summary_markdown(inputs)
    (compact,) = markdown_tables(text)
    assert compact[0][:3] == ["fusion.k", "mean", "delta"]
    assert [row[0] for row in compact[1:]] == ["10", "30", "20"]  # best first
    assert unescaped(text).count("Sweep: 1 of 3 candidates better than the control on ndcg@10") == 1
