"""The sentences and the compact table, written once from the comparison table (``outcome.sentences``)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from abcompare.outcome.sentences import (
    as_json,
    format_change,
    format_p,
    markdown_table,
    secondary_summary,
    settings_line,
    summary_text,
    treatment_summary,
    tuned_sentence,
    verdict_run_name,
    verdict_sentence,
)
from abcompare.stats.comparison import paired_comparison, paired_test
from abcompare.stats.tuning import TunedComparison

IDS = pd.Index([f"q{i:02d}" for i in range(30)], name="query_id")


def frame(ndcg: np.ndarray, recall: np.ndarray) -> pd.DataFrame:
    return pd.DataFrame({"ndcg@10": ndcg, "recall@10": recall}, index=IDS)


@pytest.fixture(scope="module")
def runs() -> tuple[pd.DataFrame, dict[str, pd.DataFrame]]:
    rng = np.random.default_rng(1)
    base = rng.integers(0, 11, (30, 2)) / 10
    control = frame(base[:, 0], base[:, 1])
    step = rng.choice([-0.1, 0.0, 0.1], (30, 2))
    return control, {
        "up": frame(base[:, 0] + 0.2 + step[:, 0], base[:, 1] + 0.1),
        "down": frame(base[:, 0] - 0.2 + step[:, 0], base[:, 1] - step[:, 1]),
        "same": frame(base[:, 0] + step[:, 0], base[:, 1] + step[:, 1]),
    }


@pytest.mark.parametrize(
    ("p", "text"),
    [(0.0081, "0.008"), (0.0644, "0.064"), (1.0, "1.000"), (0.00042, "0.0004"), (2e-5, "< 0.0001")],
)
def test_format_p(p, text):
    assert format_p(p) == text


def test_format_change_leaves_out_an_infinite_relative_change():
    assert format_change(0.031, 0.045, 0.008, 0.055) == "+0.031 (+4.5%) [0.008, 0.055]"
    assert format_change(0.1, float("inf"), 0.05, 0.15) == "+0.100 [0.050, 0.150]"


def test_sentences_for_one_treatment(runs):
    control, treatments = runs
    table = paired_test(control, {"up": treatments["up"]}, n_resamples=999)
    assert (
        verdict_sentence(table, "up")
        == "Verdict up: better on ndcg@10, +0.217 (+45.5%) [0.188, 0.245], p = 0.001."
    )
    assert secondary_summary(table, "up") == "Secondary metrics: 1 of 1 better."
    assert treatment_summary(table, "up") == verdict_sentence(table, "up") + " " + secondary_summary(
        table, "up"
    )


def test_sentences_with_three_treatments_say_how_the_primary_p_was_adjusted(runs):
    control, treatments = runs
    tested = paired_test(control, treatments, n_resamples=999)
    table = tested.table
    assert verdict_sentence(tested, "down").startswith(
        "Verdict down: worse on ndcg@10, -0.183 (-38.5%) [-0.221, -0.146], p = 0.003"
    )
    assert "(Holm-adjusted over 3 treatments)." in verdict_sentence(tested, "down")
    same = verdict_sentence(tested, "same")
    assert same.startswith("Verdict same: no significant difference on ndcg@10, ")
    row = table[(table["treatment"] == "same") & (table["role"] == "primary")].iloc[0]
    assert f"this query set detects differences of about {row['mde']:.3f} or more" in same
    # the largest p of the family is judged at Holm's last step, at alpha itself
    assert row["alpha_effective"] == 0.05 and same.endswith("(80% power at alpha 0.05).")
    maxt_tested = paired_test(control, treatments, n_resamples=999, correction="maxt")
    maxt = maxt_tested.table
    row = maxt[(maxt["treatment"] == "same") & (maxt["role"] == "primary")].iloc[0]
    assert row["alpha_effective"] < 0.05 and row["mde"] > table.loc[row.name, "mde"]
    assert f"(80% power at alpha {row['alpha_effective']:.2g} after max-T correction)." in verdict_sentence(
        maxt_tested, "same"
    )
    assert (
        secondary_summary(tested, "up")
        == "Secondary metrics: 1 of 1 better after Holm correction over 3 comparisons."
    )
    assert "none of 1 differs significantly" in secondary_summary(tested, "same")
    assert summary_text(tested).splitlines() == [treatment_summary(tested, t) for t in ("up", "down", "same")]


def test_a_difference_larger_than_the_mde_that_is_not_significant_is_explained(runs):
    control, treatments = runs
    tested = paired_test(control, {"same": treatments["same"]}, n_resamples=999)
    table = tested.table
    primary = table.index[table["role"] == "primary"][0]
    table.loc[primary, "mde"] = abs(table.loc[primary, "delta"]) / 2  # as if the normal approximation said so
    sentence = verdict_sentence(tested, "same")
    assert "The difference is that large yet not significant" in sentence
    assert "the permutation test sees how the change is spread over the queries" in sentence


def test_identical_runs_say_so(runs):
    control, _ = runs
    table = paired_test(control, {"copy": control.copy()}, n_resamples=99)
    assert verdict_sentence(table, "copy") == (
        "Verdict copy: no significant difference on ndcg@10: every query scored the same in both runs."
    )


def test_a_treatment_run_is_named_with_its_primary_comparison(runs):
    """The names MLflow's compare view paints on its first screen (figures as the verdict sentences above)."""
    control, treatments = runs
    table = paired_comparison(control, {"up": treatments["up"]}, n_resamples=999)
    assert verdict_run_name(table, "up") == "up · ndcg@10 +0.217 [0.188, 0.245], p = 0.001 · better"
    table = paired_comparison(control, treatments, n_resamples=999)
    assert verdict_run_name(table, "down") == "down · ndcg@10 -0.183 [-0.221, -0.146], p = 0.003 · worse"
    assert verdict_run_name(table, "same").endswith(" · no significant difference")
    tiny = table.copy()
    tiny.loc[(tiny["treatment"] == "up") & (tiny["role"] == "primary"), "p_adjusted"] = 3e-5
    assert verdict_run_name(tiny, "up") == "up · ndcg@10 +0.217 [0.180, 0.254], p < 0.0001 · better"
    same = paired_comparison(control, {"copy": control.copy()}, n_resamples=99)
    assert verdict_run_name(same, "copy") == (
        "copy · ndcg@10 +0.000, every query the same · no significant difference"
    )
    assert verdict_run_name(table, "absent") == "absent"  # no primary row: the bare name


def test_no_secondary_metrics_no_line_and_uncorrected_families(runs):
    control, treatments = runs
    only = paired_test(control, {"up": treatments["up"]}, metrics=["ndcg@10"], n_resamples=99)
    assert secondary_summary(only, "up") == ""
    raw = paired_test(control, treatments, correction="none", n_resamples=99)
    assert "(not adjusted for the 3 treatments)" in verdict_sentence(raw, "up")
    assert secondary_summary(raw, "up").endswith(" without correction.")


def test_settings_line(runs):
    control, treatments = runs
    table = paired_test(control, treatments, correction="maxt", n_resamples=499, seed=3)
    assert settings_line(table) == (
        "paired tests on 30 queries; primary metric ndcg@10 (permutation test, max-T correction over 3); "
        "secondary metrics: max-T correction over 3 comparisons; alpha 0.05, B = 499, seed 3; "
        "CI: 95% simultaneous over the row's family (max-T critical value, the p's sign flips)"
    )


def test_markdown_table_is_aligned_rounded_and_puts_the_primary_metric_first(runs):
    control, treatments = runs
    table = paired_comparison(control, treatments, metrics=["recall@10", "ndcg@10"], n_resamples=99)
    lines = markdown_table(table).splitlines()
    assert len({len(line) for line in lines}) == 1  # every line is as wide: it reads as a table in plain text
    assert lines[0].startswith("| treatment | metric    | role      | control mean |")
    assert lines[1].startswith("|-----------|-----------|-----------|-------------:|")
    assert [line.split("|")[2].strip() for line in lines[2:]] == ["ndcg@10", "recall@10"] * 3
    assert "| +0.217 |" in lines[2] and "[0.176, 0.257]" in lines[2]
    assert len(markdown_table(table, ["down"]).splitlines()) == 4


def test_as_json(runs):
    control, treatments = runs
    table = paired_test(control, {"up": treatments["up"]}, n_resamples=99)
    assert as_json(table) == {
        "up": {
            "metric": "ndcg@10",
            "verdict": "better",
            "sentence": verdict_sentence(table, "up"),
            "secondary": secondary_summary(table, "up"),
        }
    }


def tuned(p_value: float, delta: float) -> TunedComparison:
    return TunedComparison(
        metric="ndcg@10", delta=delta, ci_low=delta - 0.01, ci_high=delta + 0.01, p_value=p_value,
        choices=("fusion.k=30", "fusion.k=30", "fusion.k=10", "fusion.k=30", "fusion.k=60"),
        held_out=pd.DataFrame(), candidates=("fusion.k=10", "fusion.k=30", "fusion.k=60"), folds=5,
        alpha=0.05, n_resamples=10_000, seed=0, exact=False,
    )  # fmt: skip


def test_tuned_sentence():
    assert tuned_sentence(tuned(0.004, 0.012)) == (
        "Tuning over this grid of 3 settings gains +0.012 ndcg@10 on unseen queries [0.002, 0.022], "
        "p = 0.004 (5-fold cross-validation); the setting chosen most often is fusion.k=30 (3 of 5 folds)."
    )
    assert "loses -0.012" in tuned_sentence(tuned(0.004, -0.012))
    assert (
        "changes +0.003 ndcg@10 on unseen queries [-0.007, 0.013], p = 0.400 (5-fold cross-validation; "
        "not significant at alpha 0.05)"
    ) in tuned_sentence(tuned(0.4, 0.003))


@pytest.mark.parametrize(
    ("grade", "threshold", "mark"),
    [(2.0, 1, "✓"), (1.0, 1, "✓"), (0.0, 1, "○"), (1.0, 2, "○"), (None, 1, ""), (float("nan"), 1, "")],
)
def test_a_hit_is_marked_relevant_judged_or_unjudged(grade, threshold, mark) -> None:
    from abcompare.core.vocabulary import relevance_mark

    assert relevance_mark(grade, threshold) == mark
