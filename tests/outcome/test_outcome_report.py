"""One order and one wording in every view: ``report.html``'s tables and hit lists, the judged@k line, a
sweep's alignment line, and the MLflow description's table (``outcome.html``, ``outcome.rows``,
``outcome.console``, ``outcome.sentences``)."""

from __future__ import annotations

import re
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from abcompare.outcome.console import treatments_alignment
from abcompare.outcome.html import HITS_SHOWN, deciding_depth, page
from abcompare.outcome.rows import judged_line
from abcompare.outcome.verdicts import description_markdown
from abcompare.outcome.view import ComparisonView, ExperimentView
from abcompare.stats.comparison import PairedComparison, paired_test

IDS = pd.Index([f"q{i:02d}" for i in range(20)], name="query_id")


def render(view: ComparisonView) -> str:
    """One collection's page, as ``report.html`` renders an experiment of one collection."""
    return page(ExperimentView.shown(view))


@pytest.fixture(scope="module")
def comparison() -> tuple[PairedComparison, dict[str, pd.DataFrame]]:
    """A comparison whose table lists the primary metric (ndcg@10) after a secondary one."""
    rng = np.random.default_rng(3)
    base = rng.integers(0, 11, (20, 2)) / 10
    control = pd.DataFrame({"recall@10": base[:, 1], "ndcg@10": base[:, 0]}, index=IDS)
    better = control + 0.1
    tested = paired_test(control, {"up": better}, primary_metric="ndcg@10", n_resamples=199)
    return tested, {"control": control, "up": better}


def test_the_report_table_puts_the_primary_row_first_as_the_console_does(comparison) -> None:
    tested, per_query = comparison
    table = tested.table
    assert list(table["metric"]) == ["recall@10", "ndcg@10"]  # the table's own order: primary last
    inputs = ComparisonView(
        name="c", description="", dataset="d", n_queries=20, level="document", convention="trec",
        comparison=table, settings=tested.settings, per_query=per_query,
        queries=pd.DataFrame(index=IDS),
    )  # fmt: skip
    html = render(inputs)
    full = html[html.index("<h2>Every comparison</h2>") :]
    body = full[full.index("<tbody>") : full.index("</tbody>")]
    metrics = re.findall(r"<tr><td>up</td><td>(?:<b>)?([a-z]+@\d+)", body)
    assert metrics == ["ndcg@10", "recall@10"]


def hits(relevant_ranks: list[int], depth: int = 20, prefix: str = "d") -> pd.DataFrame:
    """A query's hit list of ``depth`` hits; the hits at ``relevant_ranks`` are graded 1 (relevant), the
    others unjudged (NaN)."""
    ranks = np.arange(1, depth + 1)
    return pd.DataFrame(
        {
            "query_id": "q",
            "rank": ranks,
            "key": [f"{prefix}{r}" for r in ranks],
            "grade": [1.0 if r in relevant_ranks else np.nan for r in ranks],
        }
    )


@pytest.mark.parametrize(
    ("control", "treatment", "cutoff", "depth"),
    [
        ([6], [6], 10, 5),  # the same relevant hit at the same rank: nothing decided beyond the top 5
        ([6], [1], 10, 6),  # the control's relevant hit at 6, the treatment's at 1: shown through 6
        ([], [9], 10, 9),  # only the treatment finds one, at 9
        ([2], [12], 10, 5),  # rank 12 is beyond ndcg@10's cutoff: it decides nothing
        ([3, 8], [3, 7], 10, 8),  # the deepest rank where they differ
        ([20], [1], 25, 20),
    ],
)
def test_a_change_is_shown_through_the_rank_that_decides_it(control, treatment, cutoff, depth) -> None:
    assert deciding_depth(hits(control), hits(treatment, prefix="d"), cutoff, 1) == depth


def test_the_same_key_at_different_ranks_differs_and_a_different_key_at_the_same_rank_too() -> None:
    assert deciding_depth(hits([7]), hits([7], prefix="e"), 10, 1) == 7  # another document at rank 7
    assert HITS_SHOWN == 5


def test_largest_wins_show_the_relevant_hit_at_rank_6(comparison) -> None:
    """qa-048's case: the win comes from a relevant hit at rank 6, so both lists run to rank 6."""
    tested, per_query = comparison
    table = tested.table
    winner = per_query["up"]["ndcg@10"].sub(per_query["control"]["ndcg@10"]).idxmax()
    control_hits = hits([6]).assign(query_id=winner)
    treatment_hits = hits([1]).assign(query_id=winner)
    inputs = ComparisonView(
        name="c", description="", dataset="d", n_queries=20, level="document", convention="trec",
        comparison=table, settings=tested.settings, per_query=per_query,
        queries=pd.DataFrame(index=IDS),
        hits={"control": control_hits, "up": treatment_hits}, focus=["up"],
    )  # fmt: skip
    html = render(inputs)
    block = html[html.index(f"<b>{winner}</b>") :]
    block = block[: block.index('<div class="query">', 1) if '<div class="query">' in block[1:] else None]
    lists = re.findall(r"<ol>(.*?)</ol>", block)
    assert [len(re.findall(r'<span class="rank">', items)) for items in lists[:2]] == [6, 6]
    assert '<span class="rank">6</span><code>d6</code>' in lists[0]


def coverage(shares: dict[str, float]) -> dict[str, dict[str, float]]:
    return {name: {"cutoff": 10, "mean_judged": share} for name, share in shares.items()}


def test_judged_line_lists_a_few_variants_and_summarises_a_sweep() -> None:
    few = judged_line(coverage({"control": 0.11, "dbsf": 0.114}))
    assert few == "judged@10 (share of the top 10 with a judgment): control 0.11, dbsf 0.11"
    sweep = coverage({"control": 0.5, **{f"c{i}": 0.40 + i / 100 for i in range(20)}})
    assert judged_line(sweep) == (
        "judged@10 (share of the top 10 with a judgment): control 0.50, the 20 treatments 0.40-0.59"
    )


def test_a_sweeps_alignment_line_says_all_when_every_id_is_found() -> None:
    report = SimpleNamespace
    complete = [(f"c{i}", report(fraction_in_run=1.0)) for i in range(20)]
    assert treatments_alignment(complete) == (
        "alignment of 20 treatments: all annotated ids appear among hit keys"
    )
    partial = complete[:5] + [("odd", report(fraction_in_run=0.93))]
    assert treatments_alignment(partial) == (
        "alignment of 6 treatments: at least 93% of annotated ids appear among hit keys (lowest: odd)"
    )


def test_the_description_table_is_a_markdown_table_not_a_code_block(comparison) -> None:
    tested, _ = comparison
    text = description_markdown(tested, context="**c**: context.")
    assert "```" not in text
    lines = text.splitlines()
    start = lines.index(next(line for line in lines if line.startswith("| treatment")))
    assert re.fullmatch(r"\|(-+:?\|)+", lines[start + 1])  # the header rule GitHub-style markdown needs
    assert lines[start + 2].startswith("| up        | ndcg@10")  # the primary first
    assert lines[start - 1] == "" and lines[start + 4] == ""  # a block of its own


def test_judged_line_says_when_the_judgments_list_relevant_items_only() -> None:
    """The main job's judgments list relevant items only: judged@10 is then the share of relevant hits,
    and the line says that an unjudged hit is not relevant (the README: the judgments are complete)."""
    line = judged_line(coverage({"control": 0.11, "dbsf": 0.11}), relevant_only=True)
    assert line == (
        "judged@10 (share of the top 10 with a judgment): control 0.11, dbsf 0.11; the judgments list "
        "relevant items only, so every unjudged hit counts as not relevant"
    )


def test_the_report_says_it_too(comparison) -> None:
    tested, per_query = comparison
    table = tested.table
    judged = coverage({"control": 0.11, "up": 0.12})
    common = dict(
        name="c", description="", dataset="d", n_queries=20, level="document", convention="trec",
        comparison=table, settings=tested.settings, per_query=per_query,
        queries=pd.DataFrame(index=IDS), judged=judged,
    )  # fmt: skip
    assert "relevant items only" in render(ComparisonView(**common, judgments_relevant_only=True))
    assert "relevant items only" not in render(ComparisonView(**common))


def test_a_collections_report_leads_back_to_the_comparison_across_collections(comparison) -> None:
    """A collection's page names the whole comparison and links its top run; a comparison of its own
    says nothing of the kind. The name is escaped as HTML (the page is self-contained, names are input)."""
    tested, per_query = comparison
    table = tested.table
    common = dict(
        name="c", description="", dataset="d", n_queries=20, level="document", convention="trec",
        comparison=table, settings=tested.settings, per_query=per_query,
        queries=pd.DataFrame(index=IDS),
    )  # fmt: skip
    link = "http://127.0.0.1:5000/#/experiments/1/runs/abc?workflowType=machine_learning"
    page = render(ComparisonView(**common, part_of=("a<b 2026-12-02 06:00:00", link)))
    assert f'One collection of <a href="{link}">a&lt;b 2026-12-02 06:00:00</a>' in page
    assert "One collection of" not in render(ComparisonView(**common))
