"""The random-effects meta-analysis equals statsmodels' combine_effects, a hand DerSimonian-Laird formula and
a hand Paule-Mandel root, and is NaN where it is undefined."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import optimize, stats
from statsmodels.stats.meta_analysis import combine_effects

from abcompare.stats.meta_analysis import collection_effects, random_effects
from abcompare.stats.pooled import pooled_comparison

# Four collections' mean deltas and their variances var(d)/n: heterogeneous (Q well above its 3 df).
EFFECTS = np.array([0.024, 0.051, -0.012, 0.030])
VARIANCES = np.array([0.00010, 0.00025, 0.00008, 0.00040])
Z = stats.norm.isf(0.025)


def hand_dersimonian_laird(y, v):
    w = 1 / v
    mu_fe = np.sum(w * y) / np.sum(w)
    q = np.sum(w * (y - mu_fe) ** 2)
    c = np.sum(w) - np.sum(w**2) / np.sum(w)
    tau2 = max(0.0, (q - (len(y) - 1)) / c)
    ws = 1 / (v + tau2)
    mu = np.sum(ws * y) / np.sum(ws)
    se = 1 / np.sqrt(np.sum(ws))
    return mu, mu - Z * se, mu + Z * se, tau2, q, max(0.0, (q - (len(y) - 1)) / q)


def hand_paule_mandel_tau2(y, v):
    """The root of sum (y - mu(tau2))^2 / (v + tau2) = k - 1 (0 when even tau2 = 0 gives less)."""

    def excess(tau2):
        w = 1 / (v + tau2)
        mu = np.sum(w * y) / np.sum(w)
        return np.sum(w * (y - mu) ** 2) - (len(y) - 1)

    return 0.0 if excess(0.0) <= 0 else optimize.brentq(excess, 0.0, 1.0, xtol=1e-14)


def test_dersimonian_laird_equals_the_hand_formula():
    meta = random_effects(EFFECTS, VARIANCES, method="dl")
    mu, low, high, tau2, q, i2 = hand_dersimonian_laird(EFFECTS, VARIANCES)
    assert tau2 > 0  # the case is heterogeneous, so the truncation does not hide anything
    assert (meta.effect, meta.ci_low, meta.ci_high) == pytest.approx((mu, low, high), rel=1e-10)
    assert (meta.tau2, meta.q, meta.i2) == pytest.approx((tau2, q, i2), rel=1e-10)
    assert meta.q_p_value == pytest.approx(stats.chi2.sf(q, 3), rel=1e-10)
    assert meta.p_value == pytest.approx(2 * stats.norm.sf(abs(mu) / ((high - low) / (2 * Z))), rel=1e-9)


def test_default_paule_mandel_equals_statsmodels_and_the_hand_root():
    meta = random_effects(EFFECTS, VARIANCES)
    ref = combine_effects(EFFECTS, VARIANCES, method_re="iterated", use_t=False)
    assert meta.method == "pm"
    assert meta.effect == pytest.approx(ref.mean_effect_re, rel=1e-12)
    assert (meta.ci_low, meta.ci_high) == pytest.approx(tuple(ref.conf_int(use_t=False)[1]), rel=1e-12)
    assert meta.tau2 == pytest.approx(ref.tau2, rel=1e-12)
    assert meta.q == pytest.approx(ref.q, rel=1e-12)
    assert meta.q_p_value == pytest.approx(ref.test_homogeneity().pvalue, rel=1e-12)
    assert meta.i2 == pytest.approx(ref.i2, rel=1e-12)  # positive here, so Higgins' truncation is inactive
    assert meta.tau2 == pytest.approx(hand_paule_mandel_tau2(EFFECTS, VARIANCES), rel=1e-3)


def test_homogeneous_effects_truncate_tau2_and_i2_at_zero():
    y = np.array([0.020, 0.021, 0.019])
    v = np.array([0.0004, 0.0003, 0.0005])
    with np.errstate(invalid="ignore"):  # statsmodels' own DL is not truncated: sqrt of a negative variance
        assert combine_effects(y, v, method_re="dl").tau2 < 0
    for method in ("pm", "dl"):
        meta = random_effects(y, v, method=method)
        assert meta.tau2 == 0.0 and meta.i2 == 0.0  # statsmodels' DL alone would give tau2 < 0, I² < 0
        w = 1 / v
        assert meta.effect == pytest.approx(np.sum(w * y) / np.sum(w), rel=1e-12)  # the fixed effect
        assert meta.ci_high - meta.ci_low == pytest.approx(2 * Z / np.sqrt(np.sum(w)), rel=1e-12)


def test_one_collection_is_its_own_normal_interval():
    meta = random_effects([0.03], [0.0001])
    assert meta.effect == pytest.approx(0.03)
    assert (meta.ci_low, meta.ci_high) == pytest.approx((0.03 - Z * 0.01, 0.03 + Z * 0.01))
    assert meta.tau2 == 0.0 and np.isnan(meta.i2) and np.isnan(meta.q_p_value)


def test_a_collection_without_spread_leaves_it_undefined():
    meta = random_effects([0.03, 0.0], [0.0001, 0.0])
    assert np.isnan(meta.effect) and np.isnan(meta.tau2) and np.isnan(meta.i2)


def test_collection_effects_are_mean_and_variance_of_the_mean():
    effects, variances = collection_effects([np.array([0.1, 0.3]), np.array([0.0, 0.1, 0.2])])
    assert effects == pytest.approx([0.2, 0.1])
    assert variances == pytest.approx([0.02 / 2, 0.01 / 3])  # var(ddof=1): 0.02 and 0.01


def test_the_pooled_table_carries_the_meta_analysis_of_its_collections():
    rng = np.random.default_rng(8)
    per_query, diffs = {}, []
    for name, n, shift in (("a", 20, 0.05), ("b", 35, -0.01), ("c", 12, 0.02)):
        ids = pd.Index([f"{name}{i}" for i in range(n)], name="query_id")
        control = pd.DataFrame({"ndcg@10": rng.uniform(0.2, 0.7, n)}, index=ids)
        d = rng.normal(shift, 0.08, n)
        per_query[name] = {"control": control, "new": control + d[:, None]}
        diffs.append((control["ndcg@10"] + d - control["ndcg@10"]).to_numpy())
    pooled, _ = pooled_comparison(
        per_query, metric="ndcg@10", correction="holm", alpha=0.05, n_resamples=500, seed=0
    )
    y = np.array([x.mean() for x in diffs])
    v = np.array([x.var(ddof=1) / x.size for x in diffs])
    ref = combine_effects(y, v, method_re="iterated", use_t=False)
    row = pooled.iloc[0]
    assert row["meta_effect"] == pytest.approx(ref.mean_effect_re, rel=1e-9)
    assert (row["meta_ci_low"], row["meta_ci_high"]) == pytest.approx(tuple(ref.conf_int(use_t=False)[1]))
    assert row["tau2"] == pytest.approx(ref.tau2, rel=1e-9, abs=1e-15)
    assert row["q"] == pytest.approx(ref.q, rel=1e-9)
    assert row["i2"] == pytest.approx(max(0.0, ref.i2), abs=1e-12)
