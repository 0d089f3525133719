"""Each row's interval at the verdict's level, checked against an independent computation: every sign
vector enumerated by itertools, t statistics from scipy, Holm from statsmodels, t intervals from scipy."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests

from abcompare.stats.comparison import paired_comparison

N = 10  # 2^10 = 1024 sign vectors: enumerated when n_resamples >= 1024, so every count is exact
METRICS = ["ndcg@10", "recall@10", "precision@10"]


def frames(seed: int, shifts: tuple[float, ...]) -> tuple[pd.DataFrame, dict[str, pd.DataFrame]]:
    rng = np.random.default_rng(seed)
    ids = pd.Index([f"q{i}" for i in range(N)], name="query_id")
    control = pd.DataFrame(rng.uniform(0.2, 0.6, size=(N, len(METRICS))), index=ids, columns=METRICS)
    treatments = {}
    for i, shift in enumerate(shifts):
        noise = rng.normal(0, 0.05, size=(N, len(METRICS)))
        treatments[f"t{i}"] = control + shift + noise
    return control, treatments


def enumerated_t(d: np.ndarray) -> np.ndarray:
    """|t| of every column under every one of the 2^n sign vectors (rows), by scipy's one-sample t."""
    out = []
    for signs in itertools.product([1.0, -1.0], repeat=d.shape[0]):
        flipped = d * np.asarray(signs)[:, None]
        out.append(np.abs(stats.ttest_1samp(flipped, 0.0, axis=0).statistic))
    return np.asarray(out)


def upper_critical(null: np.ndarray, level: float) -> float:
    """The (k+1)-th largest of an enumerated null, k = floor(level 2^n): |t| above it has p <= level."""
    k = int(np.floor(level * null.size))
    return np.inf if k >= null.size else float(np.sort(null)[::-1][k])


def differences(control: pd.DataFrame, treatments: dict[str, pd.DataFrame]) -> np.ndarray:
    return np.hstack([(frame - control)[METRICS].to_numpy() for frame in treatments.values()])


def test_maxt_rows_are_simultaneous_intervals_from_the_family_maximum_of_the_same_sign_flips():
    control, treatments = frames(3, (0.0, 0.04))
    table = paired_comparison(
        control, treatments, metrics=METRICS, primary_metric="ndcg@10", correction="maxt", n_resamples=2000,
        tests=["permutation", "t"],
    )  # fmt: skip
    d = differences(control, treatments)
    null = enumerated_t(d)
    roles = np.array(["primary", "secondary", "secondary"] * 2)
    n = d.shape[0]
    for j, row in enumerate(table.itertuples()):
        family = roles == roles[j]
        c = upper_critical(null[:, family].max(axis=1), 0.05)
        se = d[:, j].std(ddof=1) / np.sqrt(n)
        assert row.ci_low == pytest.approx(d[:, j].mean() - c * se, rel=1e-9)
        assert row.ci_high == pytest.approx(d[:, j].mean() + c * se, rel=1e-9)
        assert row.ci_method == "max-T simultaneous"
        assert row.ci_agrees


def test_holm_rows_use_each_row_s_holm_step_level_on_its_own_sign_flip_null():
    control, treatments = frames(5, (0.02, 0.05))
    table = paired_comparison(
        control, treatments, metrics=METRICS, primary_metric="ndcg@10", correction="holm", n_resamples=2000,
        tests=["permutation", "t"],
    )  # fmt: skip
    d = differences(control, treatments)
    null = enumerated_t(d)
    t_obs = np.abs(stats.ttest_1samp(d, 0.0, axis=0).statistic)
    raw = (null >= t_obs * (1 - 1e-9)).mean(axis=0)  # exact sign-flip p of each column
    np.testing.assert_allclose(table["p_permutation"], raw)
    levels = np.empty(raw.size)
    for role in ("primary", "secondary"):  # each role is one family over both treatments
        family = table["role"].to_numpy() == role
        m = int(family.sum())
        ranks = stats.rankdata(raw[family], method="min")
        levels[family] = 0.05 / (m - ranks + 1)  # Holm holds the r-th smallest p to alpha / (m - r + 1)
        holm = multipletests(raw[family], alpha=0.05, method="holm")[1]
        np.testing.assert_allclose(table.loc[family, "p_adjusted"], holm)
    np.testing.assert_allclose(table["alpha_effective"], levels)
    n = d.shape[0]
    for j, row in enumerate(table.itertuples()):
        c = upper_critical(null[:, j], levels[j])
        se = d[:, j].std(ddof=1) / np.sqrt(n)
        half = c * se if np.isfinite(c) else np.inf
        assert row.ci_low == pytest.approx(d[:, j].mean() - half, rel=1e-9)
        assert row.ci_high == pytest.approx(d[:, j].mean() + half, rel=1e-9)
        excludes = row.ci_low > 0 or row.ci_high < 0
        assert excludes == (raw[j] <= levels[j])  # the interval inverts the raw test at the row's level


def test_t_primary_rows_are_scipy_t_intervals_at_the_holm_level():
    control, treatments = frames(7, (0.03,))
    table = paired_comparison(
        control, treatments, metrics=METRICS, primary_metric="ndcg@10", correction="holm", primary="t",
        tests=["t"],
    )  # fmt: skip
    d = differences(control, treatments)
    for j, row in enumerate(table.itertuples()):
        ci = stats.ttest_1samp(d[:, j], 0.0).confidence_interval(1 - row.alpha_effective)
        assert (row.ci_low, row.ci_high) == pytest.approx((ci.low, ci.high), rel=1e-9)
        assert row.ci_method == "t"
        assert row.ci_agrees == ((row.ci_low > 0 or row.ci_high < 0) == (row.p_adjusted <= 0.05))


def test_the_unadjusted_bootstrap_interval_stays_in_its_own_columns():
    control, treatments = frames(11, (0.05,))
    table = paired_comparison(control, treatments, metrics=METRICS, n_resamples=999)
    assert (table["boot_ci_method"].isin(["bca", "percentile"])).all()
    assert (table["boot_ci_low"] <= table["delta"]).all() and (table["delta"] <= table["boot_ci_high"]).all()
    # the verdict's interval is at a level no looser than 95%: never inside the t interval at 95%
    assert (table["ci_high"] - table["ci_low"] >= 0.9 * (table["t_ci_high"] - table["t_ci_low"])).all()


@pytest.mark.parametrize("correction", ["maxt", "holm", "none"])
def test_an_interval_that_excludes_zero_goes_with_a_significant_verdict_or_says_why(correction):
    for seed in range(6):
        control, treatments = frames(seed, (0.0, 0.015, 0.03))
        table = paired_comparison(
            control, treatments, metrics=METRICS, correction=correction, n_resamples=999
        )
        excludes = (table["ci_low"] > 0) | (table["ci_high"] < 0)
        significant = table["verdict"].isin(["better", "worse"])
        disagree = excludes != significant
        assert (~table.loc[disagree, "ci_agrees"]).all()
        assert (table.loc[disagree, "ci_note"].str.len() > 0).all()
        if correction != "holm":  # only Holm's step-down can stop before a row its level would pass
            assert not disagree.any(), table.loc[disagree, ["metric", "ci_low", "ci_high", "p_adjusted"]]
