"""The verdict is about a declared primary metric; the other metric@k form a secondary family.

Pins issue 18's hand-made case: 15 correlated columns that carry one real effect. A gain with raw
p ~ 0.006 on the primary metric is called better, where Holm over all 15 columns (the old family) would
have made it p = 0.073.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from stats_synthetic import METRICS, frames, paired_runs

from abcompare.core.errors import StatisticsError
from abcompare.core.vocabulary import default_primary_metric
from abcompare.outcome.sentences import secondary_summary, verdict_sentence
from abcompare.stats.comparison import paired_comparison
from abcompare.stats.correction import holm, per_test_alpha
from abcompare.stats.maxt import max_t_sign_flip
from abcompare.stats.paired import paired_differences
from abcompare.stats.power import minimum_detectable_effect


@pytest.fixture(scope="module")
def one_real_effect() -> tuple[pd.DataFrame, pd.DataFrame]:
    """300 queries; the treatment moves the relevant document up for 10% of them (seed picked once so
    that the primary metric's raw p is near the issue's 0.008)."""
    return frames(*paired_runs(np.random.default_rng(28), 300, gain=0.1))


def test_fifteen_correlated_columns_with_one_real_effect(one_real_effect):
    control, treatment = one_real_effect
    table = paired_comparison(control, {"hybrid": treatment}, correction="maxt")
    primary = table[table["role"] == "primary"]
    assert list(primary["metric"]) == ["ndcg@10"] and table.attrs["primary_metric"] == "ndcg@10"
    row = primary.iloc[0]
    # one treatment: the primary family has one member, so the verdict uses the raw p
    assert row["p_permutation"] == pytest.approx(0.0062993700629937, abs=1e-15)
    assert row["p_adjusted"] == row["p_permutation"] and row["family_size"] == 1
    assert row["verdict"] == "better" and row["alpha_effective"] == 0.05
    # the MDE agrees with the verdict: the difference it needs for significance (50% power) is smaller
    # than the gain, and the gain is close to what the query set detects 80% of the time
    critical = row["mde"] * 1.959964 / (1.959964 + 0.841621)
    assert critical < row["delta"] and row["mde"] == pytest.approx(0.0626, abs=1e-4)
    # the old family, Holm over all 15 columns, would have buried it
    assert holm(table["p_permutation"].to_numpy())[METRICS.index("ndcg@10")] == pytest.approx(
        0.0735, abs=5e-4
    )
    secondary = table[table["role"] == "secondary"]
    assert len(secondary) == 14 and (secondary["family_size"] == 14).all()
    assert (secondary["p_adjusted"] >= secondary["p_permutation"]).all()
    assert verdict_sentence(table, "hybrid") == (
        "Verdict hybrid: better on ndcg@10, +0.062 (+11.9%) [0.016, 0.105], p = 0.006."
    )
    assert secondary_summary(table, "hybrid") == "Secondary metrics: 7 of 14 better after max-T correction."
    holm_table = paired_comparison(control, {"hybrid": treatment}, correction="holm")
    assert secondary_summary(holm_table, "hybrid") == (
        "Secondary metrics: none of 14 differs significantly after Holm correction."
    )


@pytest.mark.parametrize(
    ("metrics", "expected"),
    [
        (["precision@10", "ndcg@5", "ndcg@10", "ndcg@20"], "ndcg@10"),
        (["ndcg@1", "ndcg@5", "ndcg@100"], "ndcg@5"),
        (["ndcg@1", "ndcg@30", "mrr@10"], "ndcg@1"),
        (["ndcg@5", "ndcg@15"], "ndcg@5"),  # a tie: the smaller cutoff
        (["recall@1", "recall@20", "mrr@10", "mrr@20"], "recall@1"),
        (["map", "recall@10"], "map"),
    ],
)
def test_default_primary_metric(metrics, expected):
    assert default_primary_metric(metrics) == expected


def test_a_primary_metric_that_is_not_compared_is_an_error(one_real_effect):
    control, treatment = one_real_effect
    with pytest.raises(StatisticsError) as info:
        paired_comparison(control, treatment, primary_metric="ndcg@20", n_resamples=99)
    assert info.value.field == "primary_metric" and "ndcg@10" in str(info.value)
    table = paired_comparison(control, treatment, primary_metric="mrr@5", n_resamples=99)
    assert list(table.loc[table["role"] == "primary", "metric"]) == ["mrr@5"]


@pytest.fixture(scope="module")
def three_treatments() -> tuple[pd.DataFrame, dict[str, pd.DataFrame]]:
    rng = np.random.default_rng(3)
    control, first = paired_runs(rng, 120, gain=0.15)
    _, second = paired_runs(rng, 120, gain=0.0)
    _, third = paired_runs(rng, 120, gain=0.05)
    frame, treated = frames(control, first)
    return frame, {"a": treated, "b": frames(control, second)[1], "c": frames(control, third)[1]}


def test_max_t_is_the_same_function_over_treatments_and_metrics(three_treatments):
    control, treatments = three_treatments
    table = paired_comparison(
        control, treatments, correction="maxt", seed=5, n_resamples=2000, tests=["permutation"]
    )
    d = np.hstack([paired_differences(control, frame).d for frame in treatments.values()])
    roles = ["primary" if m == "ndcg@10" else "secondary" for m in METRICS] * 3
    rng = np.random.Generator(np.random.PCG64(5))  # the sign vectors are the generator's first draws
    expected = max_t_sign_flip(d, roles, n_resamples=2000, rng=rng)
    np.testing.assert_array_equal(table["p_adjusted"], expected.pvalue_adjusted)
    np.testing.assert_array_equal(table["p_permutation"], expected.pvalue)
    primary = (table["role"] == "primary").to_numpy()
    assert (table.loc[primary, "family_size"] == 3).all() and (table.loc[~primary, "family_size"] == 42).all()
    np.testing.assert_allclose(table["alpha_effective"], expected.alpha_effective(0.05))


@pytest.mark.parametrize("correction", ["holm", "bh", "none"])
def test_the_correction_changes_no_raw_p_value_and_sets_the_level_of_the_mde(three_treatments, correction):
    control, treatments = three_treatments
    table = paired_comparison(control, treatments, correction=correction, n_resamples=999)
    maxt = paired_comparison(control, treatments, correction="maxt", n_resamples=999)
    for column in ("p_t", "p_permutation", "p_bootstrap", "ci_low", "ci_high"):
        np.testing.assert_array_equal(table[column], maxt[column])
    for role in ("primary", "secondary"):
        rows = (table["role"] == role).to_numpy()
        expected = per_test_alpha(table.loc[rows, "p_primary"].to_numpy(), correction, 0.05)
        np.testing.assert_allclose(table.loc[rows, "alpha_effective"], expected)
    mde = minimum_detectable_effect(table["sd_delta"].to_numpy(), 120, table["alpha_effective"].to_numpy())
    np.testing.assert_allclose(table["mde"], mde)
    assert (table["alpha_effective"] <= 0.05).all()
    if correction != "none":
        assert (maxt["alpha_effective"] < 0.05).all() and (maxt["p_adjusted"] >= maxt["p_primary"]).all()


def test_holm_level_by_hand():
    # ranks 1..4 of (0.01, 0.04, 0.03, 0.005) are 2, 4, 3, 1; Holm steps alpha/4, /3, /2, /1
    np.testing.assert_allclose(
        per_test_alpha(np.array([0.01, 0.04, 0.03, 0.005]), "holm", 0.05), [0.05 / 3, 0.05, 0.025, 0.0125]
    )
    # tied p-values stand or fall together: Holm at their first step, BH at their last
    np.testing.assert_allclose(per_test_alpha(np.array([0.02, 0.02, 0.5]), "holm", 0.06), [0.02, 0.02, 0.06])
    np.testing.assert_allclose(per_test_alpha(np.array([0.02, 0.02, 0.5]), "bh", 0.06), [0.04, 0.04, 0.06])


def test_min_effect_makes_an_undecided_interval_inconclusive():
    ids = pd.Index([f"q{i}" for i in range(40)], name="query_id")
    rng = np.random.default_rng(8)
    control = pd.DataFrame({"ndcg@10": rng.random(40)}, index=ids)
    noisy = control + rng.normal(0.0, 0.1, (40, 1))
    kwargs = {"n_resamples": 999, "tests": ["t", "permutation", "bootstrap"]}
    plain = paired_comparison(control, noisy, **kwargs).iloc[0]
    assert plain["verdict"] == "no significant difference" and plain["ci_low"] < 0 < plain["ci_high"]
    wide = paired_comparison(control, noisy, min_effect=0.02, **kwargs)
    assert wide["verdict"].iloc[0] == "inconclusive"  # the interval reaches beyond +-0.02
    assert "includes both zero and the smallest effect you care about (0.02)" in verdict_sentence(
        wide, "treatment"
    )
    narrow = paired_comparison(control, noisy, min_effect=0.2, **kwargs)
    assert narrow["verdict"].iloc[0] == "no significant difference"
    assert "rules out a change of 0.2 or more either way" in verdict_sentence(narrow, "treatment")
    assert narrow.attrs["min_effect"] == 0.2


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"correction": "maxt", "primary": "t"}, "correction"),
        ({"min_effect": 0}, "min_effect"),
        ({"min_effect": "big"}, "min_effect"),
    ],
)
def test_bad_settings(one_real_effect, kwargs, field):
    control, treatment = one_real_effect
    with pytest.raises(StatisticsError) as info:
        paired_comparison(control, treatment, n_resamples=99, **kwargs)
    assert info.value.field == field and info.value.hint


def test_everything_after_the_data_is_keyword_only(one_real_effect):
    control, treatment = one_real_effect
    with pytest.raises(TypeError):
        paired_comparison(control, treatment, 0.05)  # type: ignore[misc]
