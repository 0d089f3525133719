"""Statistics at large n, as people read it: a significant change below the smallest effect of interest
says so in its verdict sentence (and so on the console, in Markdown, report.html, the MLflow description
and ``--json``, which all read it through the view), and ``--fail-on not-better`` counts only a gain of at
least ``significance.min_effect`` when one is set. Every expected sentence is written out by hand."""

from __future__ import annotations

from html import escape

import numpy as np
import pandas as pd
import pytest

from abcompare.core.settings import FamilySettings, PairedComparison, PooledSettings
from abcompare.outcome.gate import failing_treatments
from abcompare.outcome.html import page
from abcompare.outcome.markdown import summary_markdown
from abcompare.outcome.sentences import (
    as_json,
    gate_sentence,
    secondary_summary,
    verdict_run_name,
    verdict_sentence,
)
from abcompare.outcome.verdicts import description_markdown
from abcompare.outcome.view import ComparisonView, ExperimentView
from abcompare.stats.comparison import paired_test

N = 10_000
IDS = pd.Index([f"q{i}" for i in range(N)], name="query_id")
BASE = np.where(np.arange(N) % 2, 0.6, 0.4)  # mean 0.5: 1% of it is 0.005
CONTROL = pd.DataFrame({"ndcg@10": BASE, "recall@10": BASE}, index=IDS)
#: +0.002 / +0.004 alternating: delta 0.003, sd 0.001, so the t interval is 0.003 ± 2e-5 and the MDE
#: (z_.975 + z_.8) · 0.001 / 100 = 0.000028
TINY = CONTROL.add(np.where(np.arange(N) % 2, 0.004, 0.002), axis=0)
#: +0.01 / +0.03 alternating: delta 0.02, above both minimums used here
LARGE = CONTROL.add(np.where(np.arange(N) % 2, 0.03, 0.01), axis=0)


def compare(min_effect: float | None, **treatments: pd.DataFrame) -> PairedComparison:
    return paired_test(CONTROL, treatments, primary_metric="ndcg@10", primary="t", tests=("t",),
                       correction="none", min_effect=min_effect)  # fmt: skip


@pytest.fixture(scope="module")
def default() -> PairedComparison:
    return compare(None, tiny=TINY, large=LARGE)


@pytest.fixture(scope="module")
def configured() -> PairedComparison:
    return compare(0.01, tiny=TINY, large=LARGE)


def test_the_verdict_says_significant_but_below_one_percent_of_the_control_mean(default) -> None:
    sentence = verdict_sentence(default, "tiny")
    assert sentence.startswith("Verdict tiny: better on ndcg@10, +0.003 (+0.6%) [0.003, 0.003], p < 0.0001")
    assert sentence.endswith(
        "; significant but below the minimum effect (0.005, 1% of the control's mean): this query set "
        "detects differences of about 0.000028, and the interval rules out a gain of 0.005 or more."
    )
    assert "minimum effect" not in verdict_sentence(default, "large")  # only where it applies
    assert secondary_summary(default, "tiny") == (
        "Secondary metrics: 1 of 1 better without correction; 1 of them significant but below the minimum "
        "effect (1% of the control's mean)."
    )
    assert secondary_summary(default, "large") == "Secondary metrics: 1 of 1 better without correction."


def test_the_configured_minimum_is_named_with_its_setting(configured) -> None:
    assert verdict_sentence(configured, "tiny").endswith(
        "; significant but below the minimum effect (0.01, significance.min_effect): this query set "
        "detects differences of about 0.000028, and the interval rules out a gain of 0.01 or more."
    )


def test_an_interval_that_still_reaches_the_minimum_is_said() -> None:
    """400 queries, d = -0.01 / +0.016 alternating: delta 0.003, sd 0.013, t interval 0.003 ± 1.966 · 0.013
    / 20 = [0.0017, 0.0043], MDE 2.8016 · 0.013 · sqrt(400/399) / 20 = 0.00182: significant, below a
    minimum of 0.004 by its estimate, not by its interval."""
    ids = IDS[:400]
    control = pd.DataFrame({"ndcg@10": BASE[:400]}, index=ids)
    treatment = control.add(np.where(np.arange(400) % 2, 0.016, -0.01), axis=0)
    table = paired_test(control, {"t": treatment}, primary="t", tests=("t",), min_effect=0.004)
    sentence = verdict_sentence(table, "t")
    assert sentence.startswith("Verdict t: better on ndcg@10, +0.003 (+0.6%) [0.002, 0.004], p < 0.0001")
    assert sentence.endswith(
        "; significant but below the minimum effect (0.004, significance.min_effect): this query set "
        "detects differences of about 0.00182, and the interval does not rule out a gain of 0.004."
    )


def test_a_small_loss_says_loss() -> None:
    table = compare(None, down=CONTROL.sub(TINY - CONTROL))
    assert verdict_sentence(table, "down").endswith("and the interval rules out a loss of 0.005 or more.")


def test_json_adds_the_minimum_only_where_it_applies(default, configured) -> None:
    verdicts = as_json(default)
    assert verdicts["tiny"]["below_min_effect"] == {"min_effect": pytest.approx(0.005, abs=1e-12),
                                                    "source": "1% of the control's mean"}  # fmt: skip
    assert "below_min_effect" not in verdicts["large"]
    assert as_json(configured)["tiny"]["below_min_effect"] == {
        "min_effect": 0.01, "source": "significance.min_effect",
    }  # fmt: skip


def test_every_renderer_shows_the_words_through_the_view(default) -> None:
    view = ComparisonView(
        name="large", description="", dataset="toy", n_queries=N, level="document", convention="trec",
        comparison=default.table, settings=default.settings,
        per_query={"control": CONTROL, "tiny": TINY, "large": LARGE},
        queries=pd.DataFrame(),
    )  # fmt: skip
    sentence = verdict_sentence(default, "tiny")
    clause = sentence[sentence.index("; significant but below") :]
    assert clause in summary_markdown(view)
    assert clause in description_markdown(default, context="toy")
    assert escape(clause) in page(ExperimentView.shown(view))
    # the treatment's MLflow run name, which the compare view shows first
    assert verdict_run_name(default.table, "tiny").endswith(
        ", p < 0.0001 · better (below the minimum effect)"
    )
    assert verdict_run_name(default.table, "large").endswith(", p < 0.0001 · better")


def test_not_better_fails_a_gain_below_the_configured_minimum(configured) -> None:
    said = {"metric": "ndcg@10", "margin": None}
    assert failing_treatments(configured.table, "not-better") == ["tiny"]
    assert gate_sentence(configured.table, "not-better", ["tiny"], **said) == (
        "gate --fail-on not-better failed: tiny (better by +0.003) is not better than the control on ndcg@10 "
        "by at least the minimum effect 0.01."
    )
    large = configured.table[configured.table["treatment"] == "large"]
    assert failing_treatments(large, "not-better") == []
    assert gate_sentence(large, "not-better", [], **said) == (
        "gate --fail-on not-better passed: every treatment is better than the control on ndcg@10 by at "
        "least the minimum effect 0.01."
    )


def test_the_one_percent_default_is_named_not_gated(default) -> None:
    assert failing_treatments(default.table, "not-better") == []
    assert gate_sentence(default.table, "not-better", [], metric="ndcg@10", margin=None) == (
        "gate --fail-on not-better passed: every treatment is better than the control on ndcg@10; not "
        "gated: gains below 1% of the control's mean (tiny +0.003); set significance.min_effect to require "
        "a minimum gain."
    )


def test_the_worse_gate_still_fails_any_significant_loss() -> None:
    """The minimum effect is the smallest change of interest, not a tolerated loss (that is the
    non-inferiority margin's job): a significant loss below it still fails --fail-on worse."""
    table = compare(0.01, down=CONTROL.sub(TINY - CONTROL))
    assert failing_treatments(table.table, "worse") == ["down"]
    assert gate_sentence(table.table, "worse", ["down"], metric="ndcg@10", margin=None) == (
        "gate --fail-on worse failed: down is worse than the control on ndcg@10."
    )


def test_a_table_recorded_before_the_columns_reads_as_before(default) -> None:
    table = default.table.drop(columns=["below_min_effect", "min_effect_used", "min_effect_source"])
    old = PairedComparison(table, default.settings)
    assert verdict_sentence(old, "tiny") == verdict_sentence(default, "tiny").split("; significant")[0] + "."
    assert failing_treatments(table, "not-better") == []
    assert "below_min_effect" not in as_json(old)["tiny"]
    assert gate_sentence(table, "not-better", [], metric="ndcg@10", margin=None).endswith("on ndcg@10.")


def test_a_pooled_gain_is_gated_by_the_configured_minimum_only() -> None:
    """Across collections the gate reads the pooled rows (``gate._pooled_rows``): they have no control
    mean, so only ``significance.min_effect`` applies; a pooled gain of 0.004 fails it at 0.01."""
    from abcompare.outcome.gate import _pooled_rows
    from abcompare.outcome.view import PooledView

    pooled = pd.DataFrame({"treatment": ["small", "large"], "metric": ["ndcg@10"] * 2, "delta": [0.004, 0.02],
                           "verdict": ["better", "better"]})  # fmt: skip
    section = PooledView(name="x", description="", primary_metric="ndcg@10", weighting="collection",
                         pooled=pooled, per_collection=pd.DataFrame(), sentences={},
                         settings=PooledSettings(metric="ndcg@10"), family=FamilySettings())  # fmt: skip
    assert failing_treatments(_pooled_rows(section, 3, 0.01).table, "not-better") == ["small"]
    assert failing_treatments(_pooled_rows(section, 3, None).table, "not-better") == []
    gated = _pooled_rows(section, 3, 0.01)
    assert gate_sentence(gated.table, "not-better", ["small"], metric=gated.metric, margin=gated.margin) == (
        "gate --fail-on not-better failed: small (better by +0.004) is not better than the control on "
        "ndcg@10 pooled across 3 collections by at least the minimum effect 0.01."
    )
