"""The verdict is about a declared primary metric; the other metric@k form a secondary family.

Pins issue 18's hand-made case: 15 correlated columns that carry one real effect. A gain with raw
p ~ 0.006 on the primary metric is called better, where Holm over all 15 columns (the old family) would
have made it p = 0.073.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from stats_synthetic import METRICS, frames, paired_runs

from abcompare.core.errors import StatisticsError
from abcompare.core.vocabulary import default_primary_metric
from abcompare.outcome.sentences import secondary_summary, verdict_sentence
from abcompare.stats.comparison import paired_comparison, paired_test
from abcompare.stats.correction import holm, per_test_alpha


@pytest.fixture(scope="module")
def one_real_effect() -> tuple[pd.DataFrame, pd.DataFrame]:
    """300 queries; the treatment moves the relevant document up for 10% of them (seed picked once so
    that the primary metric's raw p is near the issue's 0.008)."""
    return frames(*paired_runs(np.random.default_rng(28), 300, gain=0.1))


def test_fifteen_correlated_columns_with_one_real_effect(one_real_effect):
    control, treatment = one_real_effect
    tested = paired_test(control, {"hybrid": treatment}, correction="maxt")
    table = tested.table
    primary = table[table["role"] == "primary"]
    assert list(primary["metric"]) == ["ndcg@10"] and tested.settings.primary_metric == "ndcg@10"
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
    assert verdict_sentence(tested, "hybrid") == (
        "Verdict hybrid: better on ndcg@10, +0.062 (+11.9%) [0.017, 0.107], p = 0.006."
    )
    assert secondary_summary(tested, "hybrid") == "Secondary metrics: 7 of 14 better after max-T correction."
    holm_table = paired_test(control, {"hybrid": treatment}, correction="holm")
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


@pytest.fixture(scope="module")
def ten_queries() -> tuple[pd.DataFrame, dict[str, pd.DataFrame]]:
    """Three treatments on 10 queries: few enough that all 2^10 sign vectors are enumerated."""
    rng = np.random.default_rng(11)
    ids = pd.Index([f"q{i}" for i in range(10)], name="query_id")
    control = pd.DataFrame(rng.random((10, len(METRICS))), index=ids, columns=METRICS)
    shifts = {"a": 0.15, "b": 0.0, "c": 0.05}
    return control, {name: control + rng.normal(s, 0.2, control.shape) for name, s in shifts.items()}


def brute_force_max_t(d: np.ndarray, families: np.ndarray, alpha: float) -> dict[str, np.ndarray]:
    """Westfall-Young single-step max-T by enumerating every sign vector (docs/statistics.md): raw p, the
    adjusted p (the share of vectors whose largest |t*| in the column's family reaches |t|), and the level
    2 (1 - Phi(c)) of the critical value c above which the adjusted p is <= alpha."""
    signs = np.array(list(itertools.product([1.0, -1.0], repeat=d.shape[0])))  # row 0: the observed d
    flipped = signs[:, :, None] * d[None, :, :]
    t = flipped.mean(axis=1) / (flipped.std(axis=1, ddof=1) / np.sqrt(d.shape[0]))
    observed = np.abs(t[0]) * (1 - 1e-9)  # equal in exact arithmetic counts as reaching
    raw = (np.abs(t) >= observed).mean(axis=0)
    adjusted, level = np.empty(d.shape[1]), np.empty(d.shape[1])
    for family in set(families):
        columns = families == family
        maxima = np.abs(t[:, columns]).max(axis=1)
        adjusted[columns] = (maxima[:, None] >= observed[columns]).mean(axis=0)
        critical = max(v for v in maxima if (maxima >= v).sum() > alpha * maxima.size)
        level[columns] = 2 * stats.norm.sf(critical)
    return {"p_permutation": raw, "p_adjusted": adjusted, "alpha_effective": level}


def test_max_t_runs_over_treatments_and_metrics_in_two_families(ten_queries):
    control, treatments = ten_queries
    table = paired_comparison(control, treatments, correction="maxt", n_resamples=2000, tests=["permutation"])
    assert table["permutation_exact"].all()
    rows = [(name, metric) for name in treatments for metric in METRICS]
    table = table.set_index(["treatment", "metric"]).loc[rows]
    d = np.hstack([(frame - control)[METRICS].to_numpy() for frame in treatments.values()])
    families = np.array(["primary" if metric == "ndcg@10" else "secondary" for _, metric in rows])
    expected = brute_force_max_t(d, families, 0.05)
    for column, values in expected.items():
        np.testing.assert_allclose(table[column], values, rtol=1e-12, err_msg=column)
    assert (table["role"].to_numpy() == families).all()
    assert (table.loc[families == "primary", "family_size"] == 3).all()
    assert (table.loc[families == "secondary", "family_size"] == 42).all()


def documented_level(p: np.ndarray, correction: str, alpha: float) -> np.ndarray:
    """docs/statistics.md: Holm alpha / (m - r + 1) (ties at their first step), BH alpha r / m (ties at
    their last), none alpha; r is the rank of p among the family's m p-values."""
    m = p.size
    if correction == "holm":
        return alpha / (m - stats.rankdata(p, method="min") + 1)
    if correction == "bh":
        return alpha * stats.rankdata(p, method="max") / m
    return np.full(m, alpha)


def documented_mde(sd: np.ndarray, n: int, level: np.ndarray, power: float = 0.8) -> np.ndarray:
    """docs/statistics.md: (z_{1-a/2} + z_power) sd(d) / sqrt(n)."""
    return (stats.norm.ppf(1 - level / 2) + stats.norm.ppf(power)) * sd / np.sqrt(n)


@pytest.mark.parametrize("correction", ["holm", "bh", "none"])
def test_the_correction_changes_no_raw_p_value_and_sets_the_level_of_the_mde(three_treatments, correction):
    control, treatments = three_treatments
    table = paired_comparison(control, treatments, correction=correction, n_resamples=999)
    maxt = paired_comparison(control, treatments, correction="maxt", n_resamples=999)
    # the raw p-values and the unadjusted bootstrap interval do not depend on the correction (the row's
    # interval does: it is at the level the correction holds the row to, see test_stats_intervals)
    for column in ("p_t", "p_permutation", "p_bootstrap", "boot_ci_low", "boot_ci_high"):
        np.testing.assert_array_equal(table[column], maxt[column])
    for role in ("primary", "secondary"):
        rows = (table["role"] == role).to_numpy()
        expected = documented_level(table.loc[rows, "p_primary"].to_numpy(), correction, 0.05)
        np.testing.assert_allclose(table.loc[rows, "alpha_effective"], expected, rtol=1e-12)
    sd = np.array(
        [
            (treatments[name][metric] - control[metric]).std(ddof=1)
            for name, metric in table[["treatment", "metric"]].itertuples(index=False)
        ]
    )
    np.testing.assert_allclose(table["sd_delta"], sd, rtol=1e-12)
    np.testing.assert_allclose(
        table["mde"], documented_mde(sd, 120, table["alpha_effective"].to_numpy()), rtol=1e-12
    )
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
    wide = paired_test(control, noisy, min_effect=0.02, **kwargs)
    assert wide.table["verdict"].iloc[0] == "inconclusive"  # the interval reaches beyond +-0.02
    assert "includes both zero and the smallest effect you care about (0.02)" in verdict_sentence(
        wide, "treatment"
    )
    narrow = paired_test(control, noisy, min_effect=0.2, **kwargs)
    assert narrow.table["verdict"].iloc[0] == "no significant difference"
    assert "rules out a change of 0.2 or more either way" in verdict_sentence(narrow, "treatment")
    assert narrow.settings.min_effect == 0.2


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
