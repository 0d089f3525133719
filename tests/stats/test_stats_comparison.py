"""paired_comparison: the tidy table's rows, columns, verdicts, correction, determinism and user errors."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats

import abcompare
from abcompare.core.errors import StatisticsError
from abcompare.stats.comparison import paired_comparison

REQUIRED = [
    "treatment", "metric", "role", "family_size", "alpha_effective", "n_queries", "control_mean",
    "treatment_mean", "delta", "relative_delta", "ci_low", "ci_high", "ci_method", "t_ci_low", "t_ci_high",
    "pct_ci_low", "pct_ci_high", "p_t", "p_permutation", "p_bootstrap", "p_wilcoxon", "p_primary",
    "p_adjusted", "effect_size", "wins", "ties", "losses", "mde", "all_zero", "verdict",
]  # fmt: skip


def metrics_frame(rng: np.random.Generator, n: int = 60) -> pd.DataFrame:
    ids = pd.Index([f"q{i:03d}" for i in range(n)], name="query_id")
    base = rng.integers(0, 11, size=(n, 2)) / 10
    frame = pd.DataFrame(base, index=ids, columns=["ndcg@10", "recall@10"])
    frame["retrieved_count"] = 10
    frame["true_positive_count@10"] = rng.integers(0, 5, n)
    return frame


def treated(control: pd.DataFrame, rng: np.random.Generator, shift: float) -> pd.DataFrame:
    frame = control.copy()
    noise = rng.choice([-0.1, 0.0, 0.0, 0.1], size=(len(frame), 2))
    frame[["ndcg@10", "recall@10"]] = control[["ndcg@10", "recall@10"]] + noise + shift
    return frame


@pytest.fixture
def control() -> pd.DataFrame:
    return metrics_frame(np.random.default_rng(0))


def test_one_row_per_treatment_and_metric_with_every_required_column(control):
    rng = np.random.default_rng(1)
    table = paired_comparison(
        control, {"a": treated(control, rng, 0.0), "b": treated(control, rng, 0.05)}, n_resamples=500
    )
    assert set(REQUIRED) <= set(table.columns)
    assert list(zip(table["treatment"], table["metric"], strict=True)) == [
        ("a", "ndcg@10"), ("a", "recall@10"), ("b", "ndcg@10"), ("b", "recall@10"),
    ]  # fmt: skip
    assert table.attrs == {
        "alpha": 0.05, "n_resamples": 500, "seed": 0, "correction": "holm", "primary": "permutation",
        "primary_metric": "ndcg@10", "min_effect": None, "non_inferiority_margin": None,
        "zero_method": "pratt", "tests": ["t", "permutation", "bootstrap", "wilcoxon"], "power": 0.8,
    }  # fmt: skip
    assert list(table["role"]) == ["primary", "secondary", "primary", "secondary"]


def test_single_frame_is_named_treatment_and_top_level_import_works(control):
    treatment = treated(control, np.random.default_rng(2), 0.0)
    table = abcompare.paired_comparison(control, treatment, n_resamples=99)
    assert set(table["treatment"]) == {"treatment"}


def test_means_counts_and_effect_size_by_hand():
    ids = pd.Index(["a", "b", "c", "d"], name="query_id")
    control = pd.DataFrame({"ndcg@10": [0.5, 0.2, 0.4, 0.0]}, index=ids)
    treatment = pd.DataFrame({"ndcg@10": [0.7, 0.2, 0.1, 0.4]}, index=ids)
    row = paired_comparison(control, treatment, n_resamples=99).iloc[0]
    # d = (0.2, 0, -0.3, 0.4): mean 0.075, sd = sqrt(((.125)^2 + .075^2 + .375^2 + .325^2) / 3)
    sd = np.sqrt((0.125**2 + 0.075**2 + 0.375**2 + 0.325**2) / 3)
    assert row["control_mean"] == pytest.approx(0.275) and row["treatment_mean"] == pytest.approx(0.35)
    assert row["delta"] == pytest.approx(0.075) and row["relative_delta"] == pytest.approx(0.075 / 0.275)
    assert row["effect_size"] == pytest.approx(0.075 / sd)
    assert (row["wins"], row["ties"], row["losses"]) == (2, 1, 1)
    assert row["mde"] == pytest.approx((1.959964 + 0.841621) * sd / 2, rel=1e-6)
    # n = 4 <= 13: the permutation p is exact: |sum| >= 0.3 for sign vectors of (.2, -.3, .4) (the zero
    # flips freely): sums .3, -.5, .9, -.1, .1, -.9, .5, -.3 -> |s| >= .3 in 6 of 8.
    assert row["p_permutation"] == pytest.approx(6 / 8)


def test_p_values_match_scipy_through_the_table(control):
    treatment = treated(control, np.random.default_rng(3), 0.02)
    table = paired_comparison(control, treatment, n_resamples=200, zero_method="zsplit")
    for _, row in table.iterrows():
        x, y = treatment[row["metric"]].to_numpy(), control[row["metric"]].to_numpy()
        assert row["p_t"] == pytest.approx(stats.ttest_rel(x, y).pvalue, rel=1e-12)
        ref = stats.wilcoxon(x - y, zero_method="zsplit").pvalue
        assert row["p_wilcoxon"] == pytest.approx(ref, rel=1e-12)


def test_verdicts_follow_the_adjusted_primary_p_and_the_sign_of_delta(control):
    rng = np.random.default_rng(4)
    table = paired_comparison(
        control,
        {"up": treated(control, rng, 0.1), "down": treated(control, rng, -0.1), "same": control.copy()},
        n_resamples=999,
    )
    verdicts = dict(zip(table["treatment"] + "/" + table["metric"], table["verdict"], strict=True))
    assert verdicts["up/ndcg@10"] == "better" and verdicts["down/recall@10"] == "worse"
    assert verdicts["same/ndcg@10"] == "no significant difference"
    significant = table["p_adjusted"] <= 0.05
    assert (table.loc[significant, "verdict"] != "no significant difference").all()
    assert (table.loc[~significant, "verdict"] == "no significant difference").all()


def test_identical_runs_are_flagged_all_zero_with_p_one_and_no_nan(control):
    table = paired_comparison(control, control.copy(), n_resamples=300)
    assert table["all_zero"].all()
    for column in ("p_t", "p_permutation", "p_bootstrap", "p_wilcoxon", "p_adjusted"):
        assert (table[column] == 1.0).all(), column
    assert not table.isna().any().any()
    assert (table[["delta", "relative_delta", "effect_size", "ci_low", "ci_high", "mde"]] == 0).all().all()
    assert (table["verdict"] == "no significant difference").all()


def test_holm_and_bh_adjust_within_each_role_family(control):
    rng = np.random.default_rng(5)
    treatments = {"a": treated(control, rng, 0.03), "b": treated(control, rng, 0.06)}
    table = paired_comparison(control, treatments, n_resamples=500, primary="t")
    p = table["p_primary"].to_numpy()
    np.testing.assert_array_equal(p, table["p_t"].to_numpy())
    bh = paired_comparison(control, treatments, n_resamples=500, primary="t", correction="bh")
    for role in ("primary", "secondary"):
        rows = (table["role"] == role).to_numpy()  # ndcg@10 of a and b; recall@10 of a and b
        assert (table.loc[rows, "family_size"] == 2).all()
        smallest = np.argmin(np.where(rows, p, np.inf))
        assert table["p_adjusted"].iloc[smallest] == pytest.approx(min(1.0, 2 * p[smallest]))
        expected = stats.false_discovery_control(p[rows], method="bh")
        np.testing.assert_allclose(bh.loc[rows, "p_adjusted"], expected)
    assert (table["p_adjusted"] >= table["p_primary"]).all()


def test_same_seed_gives_an_identical_table_and_another_seed_a_different_one(control):
    treatment = treated(control, np.random.default_rng(6), 0.02)
    first = paired_comparison(control, treatment, n_resamples=400, seed=7)
    again = paired_comparison(control, treatment, n_resamples=400, seed=7)
    pd.testing.assert_frame_equal(first, again, check_exact=True)
    other = paired_comparison(control, treatment, n_resamples=400, seed=8)
    assert not np.array_equal(first["p_permutation"], other["p_permutation"])


def test_selected_tests_leave_the_others_empty_and_fall_back_to_the_t_interval(control):
    treatment = treated(control, np.random.default_rng(7), 0.02)
    table = paired_comparison(control, treatment, tests=["t"], primary="t", n_resamples=100)
    assert table["p_permutation"].isna().all() and table["p_bootstrap"].isna().all()
    assert (table["ci_method"] == "t").all()
    np.testing.assert_array_equal(table["ci_low"], table["t_ci_low"])


def test_explicit_metrics_and_count_columns_are_not_compared_by_default(control):
    treatment = treated(control, np.random.default_rng(8), 0.0)
    assert set(paired_comparison(control, treatment, n_resamples=99)["metric"]) == {"ndcg@10", "recall@10"}
    only = paired_comparison(control, treatment, n_resamples=99, metrics=["recall@10"])
    assert list(only["metric"]) == ["recall@10"]


def test_progress_is_reported_up_to_the_total(control):
    calls: list[tuple[int, int]] = []
    treatments = {"a": control.copy(), "b": treated(control, np.random.default_rng(9), 0.0)}
    paired_comparison(control, treatments, n_resamples=300, progress=lambda s, t: calls.append((s, t)))
    steps = [s for s, _ in calls]
    assert steps == sorted(steps) and calls[-1][0] == calls[-1][1] and len({t for _, t in calls}) == 1


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"alpha": 1.5}, "alpha"),
        ({"n_resamples": 1}, "n_resamples"),
        ({"seed": -1}, "seed"),
        ({"correction": "bonferroni"}, "correction"),
        ({"primary": "sign"}, "primary"),
        ({"tests": ["t"], "primary": "permutation"}, "primary"),
        ({"tests": ["z"]}, "tests"),
        ({"zero_method": "drop"}, "zero_method"),
        ({"power": 0}, "power"),
    ],
)
def test_bad_settings_are_statistics_errors_naming_the_argument(control, kwargs, field):
    with pytest.raises(StatisticsError) as info:
        paired_comparison(control, control.copy(), **kwargs)
    assert info.value.field == field and info.value.hint


def test_unpaired_queries_and_empty_treatments_are_errors(control):
    with pytest.raises(StatisticsError, match="q059"):
        paired_comparison(control, {"short": control.iloc[:-1]})
    with pytest.raises(StatisticsError, match="treatments"):
        paired_comparison(control, {})


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.integers(2, 25).flatmap(
        lambda n: st.tuples(
            st.lists(st.sampled_from([0.0, 0.5, 1.0]), min_size=n, max_size=n),
            st.lists(st.sampled_from([0.0, 0.5, 1.0]), min_size=n, max_size=n),
        )
    )
)
def test_p_values_are_probabilities_and_never_nan_on_small_discrete_runs(scores):
    ids = pd.Index([f"q{i}" for i in range(len(scores[0]))], name="query_id")
    control = pd.DataFrame({"mrr@10": scores[0]}, index=ids)
    treatment = pd.DataFrame({"mrr@10": scores[1]}, index=ids)
    row = paired_comparison(control, treatment, n_resamples=99).iloc[0]
    assert 0 <= row["p_t"] <= 1  # 0 only when every query moved by the same amount (t = inf)
    for column in ("p_permutation", "p_bootstrap", "p_wilcoxon", "p_adjusted"):
        assert 0 < row[column] <= 1, column
    unadjusted = ("boot_ci_low", "boot_ci_high", "t_ci_low", "t_ci_high", "pct_ci_low", "pct_ci_high")
    for column in (*unadjusted, "mde"):
        assert np.isfinite(row[column]), column
    assert row["boot_ci_low"] <= row["boot_ci_high"] and row["pct_ci_low"] <= row["pct_ci_high"]
    # the verdict's interval is never NaN; it is the whole line where the test cannot reject at all
    assert row["ci_low"] <= row["delta"] <= row["ci_high"]
    excludes = row["ci_low"] > 0 or row["ci_high"] < 0
    assert bool(row["ci_agrees"]) == (excludes == (row["p_adjusted"] <= 0.05))
    assert row["wins"] + row["ties"] + row["losses"] == len(ids)


def test_a_constant_shift_with_rounding_noise_counts_as_zero_spread():
    ids = pd.Index(["a", "b", "c", "d"], name="query_id")
    control = pd.DataFrame({"ndcg@10": [0.2, 0.3, 0.7, 0.0]}, index=ids)
    treatment = control + 0.1  # 0.3 - 0.2, 0.4 - 0.3, ... differ from 0.1 in the last bits
    row = paired_comparison(control, treatment, n_resamples=99).iloc[0]
    assert row["sd_delta"] == 0 and row["effect_size"] == np.inf and row["mde"] == 0
    assert row["p_t"] == 0 and row["p_bootstrap"] == pytest.approx(1 / 100)
    # n = 4: the exact sign-flip p is 2 / 16 (all + or all -), and so is Wilcoxon's.
    assert row["p_permutation"] == pytest.approx(2 / 16) and row["p_wilcoxon"] == pytest.approx(2 / 16)
    assert row["boot_ci_low"] == pytest.approx(0.1) and row["boot_ci_high"] == pytest.approx(0.1)
    # 2 of 16 sign vectors reach the observed sum: no level below 1/8 can reject, so the interval at the
    # verdict's level (0.05) is the whole line, as the "no significant difference" verdict says
    assert row["verdict"] == "no significant difference"
    assert row["ci_low"] == -np.inf and row["ci_high"] == np.inf
