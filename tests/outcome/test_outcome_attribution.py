"""Where the change comes from, as people read it: the sentence under each verdict (one wording for the
console, the description and the report), ``--json``'s attribution, the stacked bar and the report's
section (``outcome.sentences``, ``outcome.rows``, ``outcome.svg``, ``outcome.html``)."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET

import numpy as np
import pandas as pd
import pytest

from abcompare.outcome.html import page
from abcompare.outcome.sentences import attribution_json, attribution_sentence
from abcompare.outcome.svg import PART_COLOURS, attribution_svg
from abcompare.outcome.verdicts import description_markdown, verdict_lines
from abcompare.outcome.view import ComparisonView, ExperimentView
from abcompare.stats.comparison import PairedComparison, paired_test

IDS = pd.Index([f"q{i}" for i in range(8)], name="query_id")


def render(view: ComparisonView) -> str:
    """One collection's page, as ``report.html`` renders an experiment of one collection."""
    return page(ExperimentView.shown(view))


def summary(**rows: dict) -> pd.DataFrame:
    """An attribution summary: one row per ``(treatment, metric)`` key, zeros unless given."""
    base = {"delta": 0.0, "new": 0.0, "lost": 0.0, "reorder": 0.0, "ideal": 0.0, "new_count": 0,
            "lost_count": 0, "reorder_count": 0, "unjudged_newcomers": 0, "unit": "hits",
            "n_queries": 8}  # fmt: skip
    records = []
    for key, values in rows.items():
        treatment, metric = key.split("__")
        records.append({"treatment": treatment, "metric": metric.replace("_at_", "@"), **base, **values})
    return pd.DataFrame(records)


def test_the_headline_reads_as_the_issue_writes_it() -> None:
    table = summary(t__ndcg_at_10={"delta": 0.031, "new": 0.044, "lost": -0.018, "reorder": 0.005,
                                   "new_count": 61, "lost_count": 23, "reorder_count": 40})  # fmt: skip
    assert attribution_sentence(table, "t", "ndcg@10") == (
        "Where it comes from: ndcg@10 +0.031 = +0.044 from 61 relevant hits new to the top 10 − 0.018 "
        "from 23 lost + 0.005 from reordering."
    )


def test_the_ideal_part_and_the_unjudged_newcomers_are_said_when_there_are_any() -> None:
    table = summary(t__ndcg_at_5={"delta": 0.0, "lost": -0.387, "ideal": 0.387, "lost_count": 1,
                                  "unjudged_newcomers": 2})  # fmt: skip
    assert attribution_sentence(table, "t", "ndcg@5") == (
        "Where it comes from: ndcg@5 +0.000 = -0.387 from 1 lost relevant hit + 0.387 from the ideal DCG "
        "(the lists' lengths differ); 2 unjudged newcomers in its top 5 (scored 0)."
    )


def test_mrr_counts_queries_in_the_class_of_their_change() -> None:
    counts = {"new_count": 2, "lost_count": 1, "reorder_count": 18, "unit": "queries"}
    table = summary(t__mrr_at_10={"delta": -0.005, "new": 0.002, "lost": -0.001, "reorder": -0.006,
                                  **counts})  # fmt: skip
    assert attribution_sentence(table, "t", "mrr@10") == (
        "Where it comes from: mrr@10 -0.005 = +0.002 from 2 queries with a new first relevant hit − 0.001 "
        "from 1 query with none left − 0.006 from 18 queries whose first relevant hit moved."
    )


def test_no_attribution_no_sentence() -> None:
    assert attribution_sentence(None, "t", "ndcg@10") == ""
    assert attribution_sentence(summary(t__ndcg_at_10={}), "u", "ndcg@10") == ""
    assert attribution_json(None) == {}


def test_json_carries_the_parts_the_counts_and_the_sentence() -> None:
    table = summary(t__recall_at_5={"delta": 0.25, "new": 0.25, "new_count": 2, "unjudged_newcomers": 1})
    figures = attribution_json(table)["t"]["recall@5"]
    assert figures["parts"] == {"new": 0.25, "lost": 0.0, "reorder": 0.0, "ideal": 0.0}
    assert figures["counts"] == {"new": 2, "lost": 0, "reorder": 0}
    assert (figures["unit"], figures["unjudged_newcomers"], figures["n_queries"]) == ("hits", 1, 8)
    assert figures["sentence"] == attribution_sentence(table, "t", "recall@5")


@pytest.fixture(scope="module")
def comparison() -> tuple[PairedComparison, dict[str, pd.DataFrame]]:
    rng = np.random.default_rng(5)
    control = pd.DataFrame({"ndcg@10": rng.integers(0, 11, 8) / 10}, index=IDS)
    better = control + 0.05
    tested = paired_test(control, {"up": better}, primary_metric="ndcg@10", n_resamples=99)
    return tested, {"control": control, "up": better}


def test_the_attribution_line_follows_its_verdict_in_every_view(comparison) -> None:
    tested, per_query = comparison
    table = tested.table
    parts = summary(up__ndcg_at_10={"delta": 0.05, "new": 0.06, "lost": -0.01, "new_count": 3,
                                    "lost_count": 1})  # fmt: skip
    sentence = attribution_sentence(parts, "up", "ndcg@10")
    lines = verdict_lines(tested, None, None, parts)
    assert [line.kind for line in lines] == ["verdict", "attribution"]
    assert lines[1].text == sentence
    assert [line.kind for line in verdict_lines(tested, None, None)] == ["verdict"]  # none without one
    assert sentence in description_markdown(tested, context="c", attribution=parts)
    inputs = ComparisonView(
        name="c", description="", dataset="d", n_queries=8, level="chunk", convention="ai4j",
        comparison=table, settings=tested.settings, per_query=per_query,
        queries=pd.DataFrame({"text": list("abcdefgh")}, index=IDS),
        attribution=parts,
        attribution_per_query=pd.DataFrame({
            "treatment": "up", "metric": "ndcg@10", "query_id": IDS, "delta": 0.05,
            "new": [0.48, 0, 0, 0, 0, 0, 0, 0], "lost": [0, -0.08, 0, 0, 0, 0, 0, 0], "reorder": 0.0,
            "ideal": 0.0, "new_count": [3, 0, 0, 0, 0, 0, 0, 0], "lost_count": [0, 1, 0, 0, 0, 0, 0, 0],
            "reorder_count": 0, "unjudged_newcomers": 0, "change": "",
        }),
    )  # fmt: skip
    html = render(inputs)
    section = html[html.index("<h2>Where the change comes from</h2>") :]
    assert sentence in html[: html.index("<h2>Where the change comes from</h2>")]  # under the verdict
    assert "<td>q0</td><td>a</td><td>+0.4800</td><td>+0.0600</td>" in section  # new carried by q0
    assert "<td>q1</td><td>b</td><td>-0.0800</td><td>-0.0100</td>" in section
    assert "<td>q2</td>" not in section  # a query that carries no part is not named
    assert "Where the change comes from" not in render(
        ComparisonView(**{**inputs.__dict__, "attribution": None})
    )


def test_the_stacked_bar_stacks_each_side_of_zero_and_marks_the_net_delta() -> None:
    rows = pd.DataFrame({"treatment": ["a", "b"], "delta": [0.02, -0.01], "new": [0.05, 0.0],
                         "lost": [-0.03, -0.01], "reorder": [0.0, 0.0], "ideal": [0.0, 0.0]})  # fmt: skip
    svg = attribution_svg(rows, "ndcg@10", "title")
    tree = ET.fromstring(svg)
    bars = [el for el in tree.iter("{http://www.w3.org/2000/svg}rect") if el.find("{*}title") is not None]
    tips = [bar.find("{*}title").text for bar in bars]
    assert tips == [
        "new relevant hits: +0.0500",
        "lost relevant hits: -0.0300",
        "lost relevant hits: -0.0100",
    ]
    assert {bar.get("fill") for bar in bars} == {PART_COLOURS["new"], PART_COLOURS["lost"]}
    new, lost = bars[0], bars[1]  # a: new right of 0, lost left of it, meeting at 0
    assert float(lost.get("x")) + float(lost.get("width")) == pytest.approx(float(new.get("x")), abs=0.15)
    assert "+0.0200" in svg and "-0.0100" in svg and "net delta" in svg


def test_the_reordering_part_says_what_moved_up_and_what_moved_down() -> None:
    """Two relevant hits swap ranks 1 and 3 (grades 2 and 1): nDCG@3 by hand, gains 2 and 1, discounts 1,
    1/log2(3) and 1/log2(4) = 0.5, ideal DCG 2 + 1/log2(3) = 2.6309. The grade-1 hit moves up:
    (1 - 0.5) / 2.6309 = +0.190; the grade-2 hit moves down: (2 * 0.5 - 2) / 2.6309 = -0.380; net -0.190."""
    from abcompare.evaluation.attribution import attribution, attribution_summary, scored_lists

    query = ["q1"]
    run = lambda keys: pd.DataFrame(  # noqa: E731
        [("q1", r, k, 1.0 / r) for r, k in enumerate(keys, start=1)],
        columns=["query_id", "rank", "key", "score"],
    )
    judgments = pd.DataFrame([("q1", "a", 2), ("q1", "c", 1)], columns=["query_id", "key", "grade"])
    options = {"measures": ["ndcg"], "cutoffs": [3], "convention": "trec", "relevance_threshold": 1,
               "unjudged": "nonrelevant"}  # fmt: skip
    before = scored_lists(run(["a", "b", "c"]), judgments, query, **options)
    after = scored_lists(run(["c", "b", "a"]), judgments, query, **options)
    summary = attribution_summary(attribution(before, after, ["ndcg@3"], name="t"))
    row = summary.iloc[0]
    ideal = 2 + 1 / math.log2(3)
    assert row["reorder"] == pytest.approx(-0.5 / ideal) and row["reorder_up"] == pytest.approx(0.5 / ideal)
    assert attribution_sentence(summary, "t", "ndcg@3") == (
        "Where it comes from: ndcg@3 -0.190 = -0.190 from reordering (+0.190 up, −0.380 down)."
    )
