"""The pooled tests agree with independent implementations: brute-force enumeration of every sign vector,
a plain loop over stratified bootstrap resamples, and (one collection) the ordinary paired comparison."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from abcompare.stats.bootstrap import paired_bootstrap
from abcompare.stats.comparison import paired_comparison
from abcompare.stats.pooled import (
    pooled_comparison,
    pooling_weights,
    stratified_bootstrap,
    stratified_sign_flip_test,
)


def brute_force_p(differences, weights):
    """Two-sided p of the pooled weighted mean over every sign vector of every query (zeros included)."""
    sizes = [len(d) for d in differences]
    flat = np.concatenate([np.asarray(d, dtype=float) for d in differences])
    scale = np.concatenate([np.full(n, w / n) for n, w in zip(sizes, weights, strict=True)])
    observed = abs(float(np.sum(scale * flat)))
    hits = total = 0
    for signs in itertools.product((1.0, -1.0), repeat=flat.size):
        value = abs(float(np.sum(scale * flat * np.array(signs))))
        hits += value >= observed - 1e-12
        total += 1
    return hits / total


CASES = [
    ([[0.1, 0.2, 0.0], [0.3, -0.1, 0.2, 0.1]], "collection"),
    ([[0.1, 0.2, 0.0], [0.3, -0.1, 0.2, 0.1]], "per_query"),
    ([[0.5, -0.25], [0.1, 0.1, 0.1, 0.0, -0.2], [0.0, 0.3, 0.3]], "collection"),
    ([[0.2, 0.2, -0.2, 0.4, 0.1, -0.1], [0.05, -0.05]], "per_query"),
]


@pytest.mark.parametrize(("diffs", "weighting"), CASES)
def test_stratified_p_equals_brute_force_enumeration(diffs, weighting):
    arrays = [np.array(d) for d in diffs]
    weights = pooling_weights([len(d) for d in arrays], weighting)
    result = stratified_sign_flip_test(arrays, weights, n_resamples=10_000, rng=np.random.default_rng(0))
    assert result.exact
    assert result.pvalue == pytest.approx(brute_force_p(arrays, weights), rel=1e-12)


@settings(max_examples=25)
@given(
    st.lists(
        st.lists(st.sampled_from([-0.3, -0.1, 0.0, 0.1, 0.2, 0.5]), min_size=2, max_size=4),
        min_size=1,
        max_size=3,
    ),
    st.sampled_from(["collection", "per_query"]),
)
def test_stratified_p_equals_brute_force_on_drawn_cases(diffs, weighting):
    arrays = [np.array(d) for d in diffs]
    weights = pooling_weights([len(d) for d in arrays], weighting)
    result = stratified_sign_flip_test(arrays, weights, n_resamples=5000, rng=np.random.default_rng(0))
    assert result.pvalue == pytest.approx(brute_force_p(arrays, weights), rel=1e-9)


def test_pooled_table_p_equals_brute_force_for_each_treatment():
    control = {"a": [0.2, 0.4, 0.6, 0.1], "b": [0.5, 0.5, 0.3, 0.2, 0.7]}
    gains = {"one": {"a": [0.1, 0.0, 0.2, 0.1], "b": [0.0, -0.1, 0.2, 0.1, 0.1]},
             "two": {"a": [-0.1, 0.0, 0.1, -0.2], "b": [0.0, 0.0, -0.1, 0.1, -0.3]}}  # fmt: skip
    per_query = {}
    for c, values in control.items():
        ids = pd.Index([f"{c}{i}" for i in range(len(values))], name="query_id")
        base = pd.DataFrame({"ndcg@10": values}, index=ids)
        per_query[c] = {"control": base} | {t: base + np.array(g[c])[:, None] for t, g in gains.items()}
    pooled, _ = pooled_comparison(
        per_query, metric="ndcg@10", correction="none", alpha=0.05, n_resamples=10_000, seed=3
    )
    for t, g in gains.items():
        row = pooled.set_index("treatment").loc[t]
        arrays = [np.array(g[c]) for c in control]
        assert bool(row["exact"])
        assert row["p_value"] == pytest.approx(brute_force_p(arrays, [0.5, 0.5]), rel=1e-9)
        assert row["delta"] == pytest.approx(np.mean(arrays[0]) / 2 + np.mean(arrays[1]) / 2)


def test_monte_carlo_p_agrees_with_enumeration_within_its_error():
    rng = np.random.default_rng(4)
    arrays = [rng.choice([-0.2, -0.1, 0.1, 0.2, 0.3], size=n) for n in (5, 11)]
    weights = pooling_weights([5, 11], "collection")
    exact = stratified_sign_flip_test(arrays, weights, n_resamples=2**16).pvalue
    b = 4000
    mc = stratified_sign_flip_test(arrays, weights, n_resamples=b, rng=np.random.default_rng(9))
    assert not mc.exact and mc.n_resamples == b
    assert abs(mc.pvalue - exact) <= 5 * np.sqrt(exact * (1 - exact) / b) + 1 / b


def loop_bootstrap(arrays, weights, b, seed, alpha=0.05):
    """An independent stratified bootstrap: draw each collection's queries with rng.choice, B times."""
    rng = np.random.default_rng(seed)
    means = np.empty(b)
    for r in range(b):
        resample = [rng.choice(d, size=d.size, replace=True) for d in arrays]
        means[r] = sum(w * x.mean() for x, w in zip(resample, weights, strict=True))
    return np.percentile(means, [100 * alpha / 2, 100 * (1 - alpha / 2)]), means


@pytest.mark.parametrize("weighting", ["collection", "per_query"])
def test_bootstrap_interval_agrees_with_an_independent_loop(weighting):
    rng = np.random.default_rng(21)
    arrays = [rng.normal(0.03, 0.2, size=12), rng.normal(0.0, 0.1, size=30), rng.normal(0.05, 0.3, size=7)]
    weights = pooling_weights([a.size for a in arrays], weighting)
    b = 4000
    ours = stratified_bootstrap(arrays, weights, b, np.random.default_rng(1))
    (low, high), means = loop_bootstrap(arrays, weights, b, seed=2)
    # the analytic standard error of the pooled mean: sqrt(sum W_c^2 var_c / n_c) (var with ddof=0: plug-in)
    se = np.sqrt(sum(w**2 * a.var() / a.size for a, w in zip(arrays, weights, strict=True)))
    assert np.std(ours.means) == pytest.approx(se, rel=0.06)
    assert np.std(means) == pytest.approx(se, rel=0.06)
    # two independent estimates of a 2.5% quantile, each with a Monte-Carlo sd near 0.05 se: allow 0.25 se
    assert ours.pct_low == pytest.approx(low, abs=0.25 * se)
    assert ours.pct_high == pytest.approx(high, abs=0.25 * se)
    assert ours.statistic == pytest.approx(sum(w * a.mean() for a, w in zip(arrays, weights, strict=True)))
    # BCa moves the percentile interval by less than its Monte-Carlo noise plus a small skewness correction
    assert ours.ci_method == "bca"
    assert ours.bca_low == pytest.approx(ours.pct_low, abs=0.3 * se)


def test_one_collection_bootstrap_is_the_ordinary_paired_bootstrap():
    d = np.random.default_rng(2).normal(0.02, 0.1, size=25)
    ours = stratified_bootstrap([d], [1.0], 999, np.random.default_rng(7))
    ref = paired_bootstrap(d, 999, np.random.default_rng(7))
    np.testing.assert_allclose(ours.means, ref.means, rtol=0, atol=1e-15)
    assert (ours.pct_low, ours.pct_high) == pytest.approx((ref.pct_low, ref.pct_high), rel=1e-12)
    assert (ours.bca_low, ours.bca_high) == pytest.approx((ref.bca_low, ref.bca_high), rel=1e-9)


@pytest.mark.parametrize("n", [10, 40])  # 10: enumerated (2^10 <= 2000); 40: Monte Carlo, the same draws
def test_one_collection_equals_the_ordinary_paired_comparison(n):
    rng = np.random.default_rng(n)
    ids = pd.Index([f"q{i}" for i in range(n)], name="query_id")
    control = pd.DataFrame({"ndcg@10": rng.uniform(0.2, 0.8, n)}, index=ids)
    treatment = control + rng.choice([-0.1, 0.05, 0.1, 0.2], size=(n, 1))  # no zero difference
    settings = dict(alpha=0.05, n_resamples=2000, seed=5)
    table = paired_comparison(control, {"new": treatment}, metrics=["ndcg@10"], correction="holm", **settings)
    pooled, per = pooled_comparison(
        {"only": {"control": control, "new": treatment}}, metric="ndcg@10", correction="holm",
        comparisons={"only": table}, **settings,
    )  # fmt: skip
    ref, row = table.iloc[0], pooled.iloc[0]
    assert bool(row["exact"]) == bool(ref["permutation_exact"]) == (n == 10)
    assert row["p_value"] == ref["p_permutation"]
    assert row["delta"] == pytest.approx(ref["delta"], rel=1e-12)
    # beside it, the stratified bootstrap: with one collection, the ordinary bootstrap's
    assert (row["boot_ci_low"], row["boot_ci_high"]) == pytest.approx(
        (ref["boot_ci_low"], ref["boot_ci_high"]), rel=1e-9
    )
    # the pooled interval is at its verdict's level (issue 41), on the same sign vectors as the p: with one
    # collection and one treatment, the comparison row's own interval
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((ref["ci_low"], ref["ci_high"]), rel=1e-9)
    assert row["alpha_effective"] == pytest.approx(0.05) and bool(row["ci_agrees"]) and row["ci_note"] == ""
    # the per-collection row's interval is at its verdict's level on the comparison's own sign vectors
    only = per.iloc[0]
    assert (only["ci_low"], only["ci_high"]) == pytest.approx((ref["ci_low"], ref["ci_high"]), rel=1e-12)
    assert row["verdict"] == ref["verdict"] == per.iloc[0]["verdict"]
    assert per.iloc[0]["p_value"] == ref["p_primary"] and per.iloc[0]["p_adjusted"] == ref["p_adjusted"]
