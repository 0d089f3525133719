"""The top run's ``report.html`` of a comparison across collections, from hand-written pooled tables: the
pooled verdict, the forest, the per-collection table in ``outcome.rows``' formats with a link to each
collection's run, names escaped, nothing fetched."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from html import escape

import pandas as pd

from abcompare.core.settings import FamilySettings, PooledSettings
from abcompare.outcome.console import random_effects_line
from abcompare.outcome.html import (
    PER_COLLECTION_HEADERS,
    page,
    per_collection_cells,
    per_collection_markdown,
    per_collection_rows,
)
from abcompare.outcome.view import ExperimentView, PooledView
from abcompare.stats.pooled import PER_COLLECTION_COLUMNS, POOLED_COLUMNS


def render_collections(view: PooledView) -> str:
    """The top run's page, as ``report.html`` renders an experiment's pooled section alone."""
    return page(ExperimentView.shown(pooled=view))


NOSIG = "no significant difference"
POOLED_ROW = {
    "treatment": "hybrid", "metric": "ndcg@10", "weighting": "collection", "collections": 2, "n_queries": 150,
    "delta": 0.024, "ci_low": 0.011, "ci_high": 0.038, "p_value": 0.001, "p_adjusted": 0.001, "exact": False,
    "meta_effect": 0.0215, "meta_ci_low": 0.004, "meta_ci_high": 0.039, "meta_p_value": 0.02, "tau2": 0.00012,
    "i2": 0.41, "q": 1.7, "q_p_value": 0.19, "verdict": "better", "better": "sci<fact", "worse": "",
    "no_difference": "cranfield", "disagree": False,
}  # fmt: skip
PER_ROWS = [
    {"collection": "sci<fact", "treatment": "hybrid", "metric": "ndcg@10", "n_queries": 100, "delta": 0.0312,
     "ci_low": 0.008, "ci_high": 0.055, "p_value": 0.0002, "p_adjusted": 0.0004, "verdict": "better"},
    {"collection": "cranfield", "treatment": "hybrid", "metric": "ndcg@10", "n_queries": 50, "delta": -0.004,
     "ci_low": -0.02, "ci_high": 0.012, "p_value": 0.6, "p_adjusted": 0.6, "verdict": NOSIG},
]  # fmt: skip
SENTENCE = "Verdict hybrid across 2 collections: better on ndcg@10 (hand-written for this page)."


def inputs(**changes) -> PooledView:
    pooled = pd.DataFrame([POOLED_ROW], columns=list(POOLED_COLUMNS))
    per = pd.DataFrame(PER_ROWS, columns=list(PER_COLLECTION_COLUMNS))
    values = dict(
        name="bm25 vs hybrid", description="Across two collections.", primary_metric="ndcg@10",
        weighting="collection", pooled=pooled, per_collection=per, sentences={"hybrid": SENTENCE},
        settings=PooledSettings(metric="ndcg@10"), family=FamilySettings(metric="ndcg@10"),
        links={"sci<fact": "http://127.0.0.1:5000/#/experiments/1/runs/abc?workflowType=machine_learning"},
    )  # fmt: skip
    values.update(changes)
    return PooledView(**values)


def test_the_cells_use_the_shared_formats_and_the_pooled_row_comes_last() -> None:
    page = inputs()
    rows = per_collection_rows(page.per_collection, page.pooled, "hybrid")
    # by hand: a signed delta with four decimals, the interval with four, p with four decimals
    assert [per_collection_cells(row) for row in rows] == [
        ["sci<fact", "100", "+0.0312", "[0.0080, 0.0550]", "0.0004", "★ better"],
        ["cranfield", "50", "-0.0040", "[-0.0200, 0.0120]", "0.6000", NOSIG],
        ["pooled (collection)", "150", "+0.0240", "[0.0110, 0.0380]", "0.0010", "★ better"],
    ]
    assert [row["pooled"] for row in rows] == [False, False, True]
    lines = per_collection_markdown(page.per_collection, page.pooled, "hybrid").splitlines()
    assert [c.strip() for c in lines[0].strip("|").split("|")] == list(PER_COLLECTION_HEADERS)
    assert lines[2].startswith("| sci<fact ") and "+0.0312" in lines[2] and len(lines) == 5
    assert lines[-1].startswith("| pooled (collection) ")


def test_the_page_shows_the_pooled_verdict_forest_and_linked_table() -> None:
    page = render_collections(inputs())
    assert SENTENCE in page and "Across two collections." in page
    assert "2 collections (sci&lt;fact, cranfield)" in page and "equal weight per collection" in page
    link = "http://127.0.0.1:5000/#/experiments/1/runs/abc?workflowType=machine_learning"
    assert f'<a href="{link}">sci&lt;fact</a>' in page
    assert "<td>cranfield</td>" in page  # no run to link to: the name alone
    assert "sci<fact" not in page  # every name escaped
    # the console's random-effects line (outcome.console.random_effects_line) under the verdict
    shown = random_effects_line(POOLED_ROW)
    assert shown in page and "I² = 41%" in shown
    assert "<b>pooled (collection)</b>" in page
    assert "<script" not in page and "src=" not in page
    svg = page[page.index("<svg") : page.index("</svg>") + len("</svg>")]
    ET.fromstring(svg)  # one well-formed inline figure
    assert page.count("<svg") == 1


def test_per_query_weighting_is_named() -> None:
    assert "weighted by queries" in render_collections(inputs(weighting="per_query", links={}))


def test_the_pooled_non_inferiority_line_is_under_its_verdict() -> None:
    line = "Non-inferiority across 2 collections: non-inferior on ndcg@10 at margin 0.01, p = 0.003 (...)."
    page = render_collections(inputs(non_inferiority={"hybrid": line}))
    verdict = page[page.index(SENTENCE) : page.index("</section>", page.index(SENTENCE))]
    assert escape(line) in verdict  # in the verdict's own box, after the random-effects line
    assert verdict.index(escape(random_effects_line(POOLED_ROW))) < verdict.index(escape(line))
    assert "Non-inferiority" not in render_collections(inputs())
