"""The pooled verdict sentence and the forest of the collections, from hand-written pooled tables."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET

import pandas as pd
import pytest

from abcompare.core.settings import PooledSettings
from abcompare.outcome.pooled_sentences import pooled_sentence, pooled_sentence_parts
from abcompare.outcome.svg import VERDICT_COLOURS, collections_forest_svg
from abcompare.stats.pooled import PER_COLLECTION_COLUMNS, POOLED_COLUMNS

NS = {"svg": "http://www.w3.org/2000/svg"}
NOSIG = "no significant difference"


def tables(rows, collections, i2=0.41):
    """Pooled rows (treatment, delta, low, high, p_adjusted, verdict, disagree) and per-collection rows
    (collection, treatment, delta, low, high, verdict), with the columns pooled_comparison writes."""
    pooled = pd.DataFrame(
        [
            {
                "treatment": t, "metric": "ndcg@10", "weighting": "collection",
                "collections": len({c[0] for c in collections}), "n_queries": 700, "delta": d, "ci_low": lo,
                "ci_high": hi, "p_value": p, "p_adjusted": p, "exact": False, "meta_effect": d * 0.9,
                "meta_ci_low": lo - 0.01, "meta_ci_high": hi + 0.01, "meta_p_value": p, "tau2": 1e-4,
                "i2": i2, "q": 5.0, "q_p_value": 0.17, "verdict": v, "better": "", "worse": "",
                "no_difference": "", "disagree": dis,
            }
            for t, d, lo, hi, p, v, dis in rows
        ],
        columns=list(POOLED_COLUMNS),
    )  # fmt: skip
    per = pd.DataFrame(
        [
            {"collection": c, "treatment": t, "metric": "ndcg@10", "n_queries": 100, "delta": d, "ci_low": lo,
             "ci_high": hi, "p_value": 0.01, "p_adjusted": 0.04, "verdict": v}
            for c, t, d, lo, hi, v in collections
        ],
        columns=list(PER_COLLECTION_COLUMNS),
    )  # fmt: skip
    return pooled, per


FOUR = [
    ("scifact", "hybrid", 0.03, 0.01, 0.05, "better"),
    ("hr-docs", "hybrid", 0.04, 0.02, 0.06, "better"),
    ("cisi", "hybrid", 0.02, 0.005, 0.035, "better"),
    ("cranfield", "hybrid", 0.004, -0.01, 0.02, NOSIG),
]


def test_the_sentence_of_the_issue():
    pooled, per = tables([("hybrid", 0.024, 0.011, 0.038, 0.001, "better", False)], FOUR)
    settings = PooledSettings(metric="ndcg@10", correction="holm")
    assert pooled_sentence(pooled, per, settings, "hybrid") == (
        "Verdict hybrid across 4 collections: better on ndcg@10, +0.024 [0.011, 0.038], p = 0.001 "
        "(stratified permutation); better on 3 (scifact, hr-docs, cisi), "
        "no significant difference on cranfield; heterogeneity I² = 41%."
    )


def test_disagreeing_collections_are_said_first():
    rows = [
        ("a", "x", 0.05, 0.02, 0.08, "better"),
        ("b", "x", -0.04, -0.07, -0.01, "worse"),
        ("c", "x", -0.05, -0.08, -0.02, "worse"),
        ("d", "x", 0.0, -0.02, 0.02, NOSIG),
    ]
    pooled, per = tables([("x", -0.01, -0.03, 0.01, 0.4, NOSIG, True)], rows, i2=0.873)
    settings = PooledSettings(metric="ndcg@10", correction="holm")
    assert pooled_sentence(pooled, per, settings, "x") == (
        "Verdict x across 4 collections: the collections disagree, better on a but worse on 2 (b, c); "
        "pooled, no significant difference on ndcg@10, -0.010 [-0.030, 0.010], p = 0.400 "
        "(stratified permutation); no significant difference on d; heterogeneity I² = 87%."
    )


def test_the_verdict_part_runs_through_the_pooled_figures_even_when_the_collections_disagree():
    """What a view sets in bold (the top run's description): the verdict through its p, also where the
    sentence says the disagreement first (its first ';' comes before the pooled figures)."""
    rows = [("a", "x", 0.05, 0.02, 0.08, "better"), ("b", "x", -0.04, -0.07, -0.01, "worse")]
    pooled, per = tables([("x", -0.01, -0.03, 0.01, 0.4, NOSIG, True)], rows, i2=0.5)
    settings = PooledSettings(metric="ndcg@10", correction="holm")
    verdict, rest = pooled_sentence_parts(pooled, per, settings, "x")
    assert verdict == (
        "Verdict x across 2 collections: the collections disagree, better on a but worse on b; "
        "pooled, no significant difference on ndcg@10, -0.010 [-0.030, 0.010], p = 0.400 "
        "(stratified permutation)"
    )
    assert rest == "; heterogeneity I² = 50%."
    assert verdict + rest == pooled_sentence(pooled, per, settings, "x")


def test_several_treatments_note_the_correction_and_one_collection_has_no_i2():
    rows = [("only", "x", 0.05, 0.02, 0.08, "better"), ("only", "y", 0.0, -0.01, 0.01, NOSIG)]
    pooled, per = tables(
        [("x", 0.05, 0.02, 0.08, 0.00004, "better", False), ("y", 0.0, -0.01, 0.01, 0.9, NOSIG, False)],
        rows,
        i2=math.nan,
    )
    settings = PooledSettings(metric="ndcg@10", correction="holm")
    assert pooled_sentence(pooled, per, settings, "x") == (
        "Verdict x across 1 collection: better on ndcg@10, +0.050 [0.020, 0.080], p < 0.0001 (stratified "
        "permutation, Holm-adjusted over 2 treatments); better on only."
    )


def test_forest_has_a_row_per_collection_two_diamonds_per_treatment_and_a_zero_line():
    flipped = {"better": "worse"}
    per_rows = FOUR + [(c, "dense", -d, -hi, -lo, flipped.get(v, v)) for c, _, d, lo, hi, v in FOUR]
    pooled, per = tables(
        [("hybrid", 0.024, 0.011, 0.038, 0.001, "better", False),
         ("dense", -0.024, -0.038, -0.011, 0.001, "worse", False)],
        per_rows,
    )  # fmt: skip
    svg = collections_forest_svg(pooled, per, "bm25 vs hybrid")
    root = ET.fromstring(svg)
    circles = root.findall(".//svg:circle", NS)
    tips = [c.findtext("svg:title", namespaces=NS) for c in circles]
    assert sum(t is not None and t.startswith(("scifact", "hr-docs", "cisi", "cranfield")) for t in tips) == 8
    diamonds = root.findall(".//svg:polygon", NS)
    assert len(diamonds) == 4  # pooled and random effects, per treatment
    fills = [d.get("fill") for d in diamonds]
    assert fills.count(VERDICT_COLOURS["better"]) == 1 and fills.count(VERDICT_COLOURS["worse"]) == 1
    texts = [t.text for t in root.iter("{http://www.w3.org/2000/svg}text")]
    assert "hybrid vs control" in texts and "dense vs control" in texts
    assert "★ pooled (equal weight)" in texts and texts.count("random effects") >= 2
    # the pooled diamond spans its interval: its left and right points sit where 0.011 and 0.038 do,
    # on the same scale as the zero line and the ticks
    ticks = {}
    for t in root.iter("{http://www.w3.org/2000/svg}text"):
        try:
            ticks[float(t.text.replace("−", "-"))] = float(t.get("x"))
        except ValueError:
            continue
    zero, top = ticks[0.0], max(ticks)
    at = lambda value: zero + (ticks[top] - zero) * value / top  # noqa: E731
    points = [tuple(map(float, p.split(","))) for p in diamonds[0].get("points").split()]
    assert (points[0][0], points[1][0], points[2][0]) == pytest.approx(
        (at(0.011), at(0.024), at(0.038)), abs=0.2
    )
    zero_lines = [
        ln for ln in root.iter("{http://www.w3.org/2000/svg}line")
        if ln.get("x1") == ln.get("x2") and float(ln.get("x1")) == pytest.approx(zero, abs=0.1)
        and ln.get("stroke") == "#222"
    ]  # fmt: skip
    assert zero_lines
