"""The pooled comparison across collections on cases worked out by hand: weights, delta, p, tables."""

from __future__ import annotations

import doctest

import numpy as np
import pandas as pd
import pytest

from abcompare.core.errors import StatisticsError
from abcompare.stats import pooled as pooled_module
from abcompare.stats.pooled import (
    PER_COLLECTION_COLUMNS,
    POOLED_COLUMNS,
    pooled_comparison,
    pooling_weights,
    stratified_sign_flip_test,
)


def frame(values, prefix="q"):
    ids = pd.Index([f"{prefix}{i}" for i in range(len(values))], name="query_id")
    return pd.DataFrame({"ndcg@10": np.asarray(values, dtype=float)}, index=ids)


def collections(**diffs):
    """Each collection's control (0.5 everywhere) and treatment ``new`` = control + the given differences."""
    out = {}
    for name, d in diffs.items():
        control = np.full(len(d), 0.5)
        out[name] = {"control": frame(control), "new": frame(control + np.asarray(d))}
    return out


def pooled(per_query, **kw):
    settings = dict(metric="ndcg@10", correction="holm", alpha=0.05, n_resamples=999, seed=0)
    settings.update(kw)
    return pooled_comparison(per_query, **settings)


def test_weights_by_hand():
    assert pooling_weights([4, 6], "collection") == pytest.approx([0.5, 0.5])
    assert pooling_weights([4, 6], "per_query") == pytest.approx([0.4, 0.6])
    with pytest.raises(StatisticsError, match="weighting"):
        pooling_weights([4, 6], "by_size")


def test_pooled_delta_weighs_collections_equally_or_by_queries():
    # a: mean 0.1 over 2 queries; b: mean 0.0 over 8 queries (four +0.1, four -0.1)
    data = collections(a=[0.1, 0.1], b=[0.1, -0.1] * 4)
    by_collection, _ = pooled(data)
    by_query, _ = pooled(data, weighting="per_query")
    assert by_collection.loc[0, "delta"] == pytest.approx(0.5 * 0.1 + 0.5 * 0.0)
    assert by_query.loc[0, "delta"] == pytest.approx(0.2 * 0.1 + 0.8 * 0.0)
    assert by_query.loc[0, "weighting"] == "per_query"


def test_stratified_p_by_hand():
    # a = (1, 1) over 2 queries, b = (2, 0) over 2 queries, equal weights: x = (1/4, 1/4, 1/2, 0).
    # Only 3 queries change sign: 8 sign vectors; |sum| of (±1/4 ±1/4 ±1/2) >= 1 for (+,+,+), (-,-,-): 2/8.
    result = stratified_sign_flip_test([np.array([1.0, 1.0]), np.array([2.0, 0.0])], [0.5, 0.5], 100)
    assert result.exact and result.n_resamples == 8
    assert result.pvalue == pytest.approx(2 / 8)
    assert result.statistic == pytest.approx(1.0)
    # per query (weights 1/2 each here too, as the sizes are equal) the same; with sizes 2 and 4 they differ
    unequal = stratified_sign_flip_test([np.array([1.0, 1.0]), np.array([2.0, 0.0, 0.0, 0.0])], [0.5, 0.5])
    # x = (1/4, 1/4, 1/4, 0, 0, 0): |sum| >= 3/4 only for all + or all -: 2/8
    assert unequal.pvalue == pytest.approx(2 / 8) and unequal.statistic == pytest.approx(0.75)


def test_tables_have_the_agreed_columns_and_counts():
    data = collections(a=[0.1, 0.2, 0.1, 0.3], b=[0.1, -0.1, 0.2, 0.0, 0.1, 0.1], c=[0.0, 0.1, -0.1])
    pool, per = pooled(data)
    assert list(pool.columns) == list(POOLED_COLUMNS)
    assert list(per.columns) == list(PER_COLLECTION_COLUMNS)
    row = pool.iloc[0]
    assert (row["treatment"], row["collections"], row["n_queries"]) == ("new", 3, 13)
    assert list(per["collection"]) == ["a", "b", "c"]
    assert list(per["n_queries"]) == [4, 6, 3]
    assert per["delta"].to_list() == pytest.approx([0.175, 0.4 / 6, 0.0])
    assert per.attrs["correction"] == "holm" and per.attrs["family_size"] == 3


def test_per_collection_family_is_corrected_over_collections_and_treatments():
    data = collections(a=[0.1] * 5 + [0.2] * 3, b=[0.05, -0.05] * 4)
    for variants in data.values():
        variants["other"] = variants["new"] * 0.5
    _, per = pooled(data)
    assert len(per) == 4  # 2 collections x 2 treatments, one family
    expected = _holm(per["p_value"].to_numpy())
    assert per["p_adjusted"].to_numpy() == pytest.approx(expected)


def _holm(p):
    """Holm by hand: sorted p_(j) times (m - j + 1), running maximum, capped at 1."""
    order = np.argsort(p)
    m = len(p)
    running, out = 0.0, np.empty(m)
    for rank, i in enumerate(order):
        running = max(running, (m - rank) * p[i])
        out[i] = min(running, 1.0)
    return out


def test_maxt_uses_holm_for_the_collections_family_and_says_so():
    data = collections(a=[0.1, 0.2, 0.1, 0.3, 0.2], b=[0.1, -0.1, 0.2, 0.0, 0.1, 0.1])
    _, per = pooled(data, correction="maxt")
    assert per.attrs["correction"] == "holm"
    assert "Holm" in per.attrs["correction_note"]


def test_verdict_lists_and_disagreement():
    up = [0.2, 0.3, 0.25, 0.2, 0.3, 0.35, 0.2, 0.3, 0.25, 0.3]
    down = [-x for x in up]
    data = collections(up=up, down=down, flat=[0.1, -0.1] * 5)
    pool, per = pooled(data, n_resamples=2000)
    assert dict(zip(per["collection"], per["verdict"], strict=True)) == {
        "up": "better",
        "down": "worse",
        "flat": "no significant difference",
    }
    row = pool.iloc[0]
    assert (row["better"], row["worse"], row["no_difference"]) == ("up", "down", "flat")
    assert bool(row["disagree"])
    assert row["delta"] == pytest.approx(0.0, abs=1e-12)
    assert row["verdict"] == "no significant difference"


def test_collections_must_share_the_treatments():
    data = collections(a=[0.1, 0.2], b=[0.1, 0.0])
    data["b"]["extra"] = data["b"]["new"]
    with pytest.raises(StatisticsError, match="treatments"):
        pooled(data)


def test_identical_runs_give_p_one_a_point_interval_and_no_meta_analysis(recwarn):
    data = collections(a=[0.0, 0.0, 0.0], b=[0.0, 0.0])
    pool, per = pooled(data)
    row = pool.iloc[0]
    assert (row["delta"], row["ci_low"], row["ci_high"], row["p_value"]) == (0.0, 0.0, 0.0, 1.0)
    assert bool(row["exact"]) and row["verdict"] == "no significant difference"
    assert np.isnan(row["meta_effect"]) and np.isnan(row["i2"])  # variance 0: infinite weight, undefined
    assert list(per["p_value"]) == [1.0, 1.0]
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


def test_maxt_over_identical_treatments_costs_nothing_where_holm_doubles():
    d = [0.1, 0.2, 0.1, 0.3, 0.2, -0.1, 0.2, 0.1, 0.1, 0.2, 0.3, -0.1]
    data = collections(a=d[:5], b=d[5:])
    for variants in data.values():
        variants["twin"] = variants["new"].copy()
    settings = dict(n_resamples=20_000)  # 12 changed queries: 4,096 sign vectors, enumerated
    by_maxt, _ = pooled(data, correction="maxt", **settings)
    by_holm, _ = pooled(data, correction="holm", **settings)
    assert by_maxt.attrs["correction"] == "maxt" and bool(by_maxt.loc[0, "exact"])
    raw = by_holm.loc[0, "p_value"]
    assert list(by_maxt["p_value"]) == pytest.approx([raw, raw])
    assert list(by_maxt["p_adjusted"]) == pytest.approx([raw, raw])  # the family's maximum is either twin
    assert list(by_holm["p_adjusted"]) == pytest.approx([min(1.0, 2 * raw)] * 2)


def test_the_docstring_example_runs():
    result = doctest.testmod(pooled_module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


def test_unpaired_queries_name_the_collection():
    data = collections(a=[0.1, 0.2], b=[0.1, 0.0, 0.2])
    data["b"]["new"] = data["b"]["new"].rename(index={"q2": "elsewhere"})
    with pytest.raises(StatisticsError, match=r"collection 'b': control and new are not paired") as caught:
        pooled(data)
    assert caught.value.field == "per_query.b"


# ----------------------------------------------------------------------------- pooled non-inferiority
def brute_force_one_sided(differences, weights, margin):
    """p = #{sign vectors s: sum s_i x_i >= sum x_i} / 2^n over every query, x_i = W_c (d_i + m) / n_c."""
    import itertools

    pairs = zip(differences, weights, strict=True)
    x = np.concatenate([w * (np.asarray(d, float) + margin) / len(d) for d, w in pairs])
    observed = x.sum()
    signs = np.array(list(itertools.product((1.0, -1.0), repeat=len(x))))
    return float(np.mean(signs @ x >= observed - 1e-12))


def test_pooled_non_inferiority_p_by_hand():
    # a = (-0.02, 0.01), b = (0.00, -0.01, 0.03), margin 0.01, equal weights: x = (-0.0025, 0.005) and
    # (1/600, 0, 1/150): 5 queries, one of them zero; the one-sided p counts sign vectors reaching sum(x)
    differences = [np.array([-0.02, 0.01]), np.array([0.0, -0.01, 0.03])]
    result = pooled_module.stratified_non_inferiority(
        differences, [0.5, 0.5], 0.01, correction="holm", alpha=0.05, n_resamples=1000,
        rng=np.random.default_rng(0),
    )  # fmt: skip
    expected = brute_force_one_sided(differences, [0.5, 0.5], 0.01)
    assert float(result.pvalue[0]) == pytest.approx(expected)
    # the statistic: the pooled delta + margin = 0.5 * (-0.005) + 0.5 * (0.02 / 3) + 0.01
    assert float(result.statistic[0]) == pytest.approx(0.5 * -0.005 + 0.5 * 0.02 / 3 + 0.01)


def test_pooled_non_inferiority_of_one_collection_is_the_one_comparison_test():
    from abcompare.stats.noninferiority import non_inferiority_test

    rng = np.random.default_rng(5)
    d = rng.normal(-0.005, 0.05, 40)
    pooled_test = pooled_module.stratified_non_inferiority(
        [d], [1.0], 0.02, correction="holm", alpha=0.05, n_resamples=2000, rng=np.random.default_rng(1)
    )
    alone = non_inferiority_test(d, 0.02, n_resamples=2000, rng=np.random.default_rng(1))
    assert float(pooled_test.pvalue[0]) == pytest.approx(float(np.atleast_1d(alone.pvalue)[0]))
    assert pooled_test.verdict[0] == np.atleast_1d(alone.verdict)[0]


def test_pooled_comparison_adds_non_inferiority_without_moving_the_other_figures():
    data = collections(a=[-0.01, 0.02, 0.0, -0.03], b=[0.01, -0.02, 0.0, 0.01, 0.0])
    plain, _ = pooled(data)
    tested, _ = pooled(data, non_inferiority_margin=0.05)
    assert "non_inferiority" not in plain and tested.attrs["non_inferiority_margin"] == 0.05
    pd.testing.assert_frame_equal(plain, tested[plain.columns])  # the same draws before the new ones
    differences = [np.array([-0.01, 0.02, 0.0, -0.03]), np.array([0.01, -0.02, 0.0, 0.01, 0.0])]
    expected = brute_force_one_sided(differences, [0.5, 0.5], 0.05)  # 9 queries: 2^9 <= 999, exact
    assert tested.loc[0, "p_non_inferiority"] == pytest.approx(expected)
    assert tested.loc[0, "non_inferiority"] == (
        "non-inferior" if expected <= 0.05 else "not shown non-inferior"
    )
    with pytest.raises(StatisticsError, match="non_inferiority_margin"):
        pooled(data, non_inferiority_margin=-0.1)


def test_the_pooled_interval_is_at_its_verdicts_level_by_hand() -> None:
    """Two collections, every query better: a (3 queries, +0.1 each) and b (2 queries, +0.2 each), equal
    weights. The pooled delta is (0.1 + 0.2) / 2 = 0.15; the 2^5 = 32 sign vectors are enumerated and only
    all-plus and all-minus reach the observed |t|, so p = 2/32 = 0.0625 > 0.05: no significant difference.
    At alpha 0.05 the critical value is the 2nd largest |t*| of 32 (k = floor(0.05 * 32) = 1), which is
    the observed |t| itself, so the interval is delta +- delta = [0, 0.3]: it reaches 0, as its verdict
    says. The bootstrap interval stays beside it."""
    a = pd.DataFrame({"ndcg@10": [0.2, 0.5, 0.1]}, index=["a1", "a2", "a3"])
    b = pd.DataFrame({"ndcg@10": [0.4, 0.3]}, index=["b1", "b2"])
    pooled, _ = pooled_comparison(
        {"a": {"control": a, "new": a + 0.1}, "b": {"control": b, "new": b + 0.2}},
        metric="ndcg@10", correction="holm", alpha=0.05, n_resamples=999, seed=0,
    )  # fmt: skip
    row = pooled.iloc[0]
    assert row["p_adjusted"] == 2 / 32 and row["verdict"] == "no significant difference"
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((0.0, 0.3), abs=1e-12)
    assert row["alpha_effective"] == 0.05 and bool(row["ci_agrees"]) and row["ci_note"] == ""
    assert row["boot_ci_low"] <= row["delta"] <= row["boot_ci_high"]
    # every query +0.1 in a, +0.2 in b, now 4 and 3 queries: 2/128 = 0.0156 <= 0.05, better; the interval
    # excludes 0 with it
    a4 = pd.DataFrame({"ndcg@10": [0.2, 0.5, 0.1, 0.3]}, index=["a1", "a2", "a3", "a4"])
    b3 = pd.DataFrame({"ndcg@10": [0.4, 0.3, 0.6]}, index=["b1", "b2", "b3"])
    pooled, _ = pooled_comparison(
        {"a": {"control": a4, "new": a4 + 0.1}, "b": {"control": b3, "new": b3 + 0.2}},
        metric="ndcg@10", correction="holm", alpha=0.05, n_resamples=999, seed=0,
    )  # fmt: skip
    row = pooled.iloc[0]
    assert row["p_adjusted"] == 2 / 128 and row["verdict"] == "better"
    assert 0 < row["ci_low"] < row["delta"] < row["ci_high"] and bool(row["ci_agrees"])
