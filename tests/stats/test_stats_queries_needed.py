"""How many queries are enough: the closed form, statsmodels' power solvers, the bootstrap range of sd(d)
(seeded, deterministic), and the table the runner builds from a comparison."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.power import NormalIndPower, TTestPower

import abcompare
from abcompare.stats.comparison import paired_test
from abcompare.stats.power import minimum_detectable_effect, queries_for_effect, queries_needed_table


@pytest.mark.parametrize(
    ("sd", "effect", "alpha", "power"), [(0.2, 0.01, 0.05, 0.8), (0.15, 0.03, 0.01, 0.9)]
)
def test_the_closed_form_matches_statsmodels_normal_power_and_the_t_test_power_within_a_few_queries(
    sd, effect, alpha, power
):
    # by hand: z_{0.975} = 1.959964, z_{0.8} = 0.841621: ((2.801585 * 0.2 / 0.01) ** 2 = 3139.55
    closed = queries_for_effect(sd, effect, alpha, power)
    if (sd, effect, alpha, power) == (0.2, 0.01, 0.05, 0.8):
        assert closed == pytest.approx((2.801585 * 20) ** 2, rel=1e-6)
    normal = NormalIndPower().solve_power(effect_size=effect / sd, alpha=alpha, power=power, ratio=0)
    t = TTestPower().solve_power(effect_size=effect / sd, alpha=alpha, power=power)
    assert closed == pytest.approx(normal, rel=1e-4)  # statsmodels adds the far tail's sliver of power
    assert closed >= normal
    assert 0 < t - closed < 4  # the t test needs a few queries more than its normal approximation


def test_it_inverts_the_minimum_detectable_effect():
    n = queries_for_effect(0.12, 0.02)
    assert minimum_detectable_effect(0.12, n) == pytest.approx(0.02, rel=1e-9)


def test_no_spread_needs_the_minimum_and_no_change_cannot_be_sized():
    assert queries_for_effect(0.0, 0.01) == 0.0
    assert queries_for_effect(0.1, 0.0) == np.inf
    needed = abcompare.queries_needed(np.zeros(10), effect=0.01)
    assert needed.n == 2 and needed.low == needed.high == 2
    assert abcompare.queries_needed([0.1, -0.1, 0.1, -0.1]).n == np.inf  # the observed delta is 0


def test_the_range_comes_from_a_seeded_bootstrap_of_sd_and_is_deterministic():
    d = np.random.default_rng(7).normal(0.01, 0.2, size=150)
    first = abcompare.queries_needed(d, effect=0.02, seed=3)
    again = abcompare.queries_needed(d, effect=0.02, seed=3)
    other = abcompare.queries_needed(d, effect=0.02, seed=4)
    assert first == again
    assert (first.sd_low, first.sd_high) != (other.sd_low, other.sd_high)
    assert first.sd_low < first.sd < first.sd_high
    assert first.low < first.n < first.high
    # the bootstrap by hand: the 2.5% and 97.5% quantiles of sd over resamples drawn as the API draws them
    rng = np.random.Generator(np.random.PCG64(3))
    index = np.minimum((rng.random((2000, d.size)) * d.size).astype(np.int64), d.size - 1)
    low, high = np.quantile(d[index].std(axis=1, ddof=1), [0.025, 0.975])
    assert (first.sd_low, first.sd_high) == pytest.approx((low, high), rel=1e-12)
    assert first.n == np.ceil(queries_for_effect(d.std(ddof=1), 0.02))


def test_without_an_effect_it_sizes_the_observed_delta():
    d = np.random.default_rng(2).normal(0.01, 0.1, size=80)
    needed = abcompare.queries_needed(d)
    assert needed.effect_source == "observed" and needed.effect == pytest.approx(abs(d.mean()))


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError):
        abcompare.queries_needed([0.1])
    with pytest.raises(ValueError):
        abcompare.queries_needed([0.1, 0.2], effect=-1.0)


def test_the_table_uses_min_effect_the_effective_level_and_the_comparisons_seed():
    rng = np.random.default_rng(5)
    ids = pd.Index([f"q{i}" for i in range(60)], name="query_id")
    control = pd.DataFrame({"ndcg@10": rng.uniform(0, 1, 60)}, index=ids)
    treatments = {
        "a": control + rng.normal(0.0, 0.05, (60, 1)),
        "b": control + rng.normal(0.002, 0.08, (60, 1)),
    }
    tested = paired_test(control, treatments, n_resamples=200, seed=11, min_effect=0.01)
    table = tested.table
    needed = queries_needed_table(control, treatments, tested)
    assert list(needed["treatment"]) == ["a", "b"]
    for row in needed.itertuples():
        primary = table[(table["treatment"] == row.treatment) & (table["role"] == "primary")].iloc[0]
        d = (treatments[row.treatment] - control)["ndcg@10"].to_numpy()
        expected = abcompare.queries_needed(d, 0.01, alpha=primary["alpha_effective"], seed=11)
        assert (row.queries_needed, row.queries_low, row.queries_high) == (
            expected.n,
            expected.low,
            expected.high,
        )
        assert row.alpha == primary["alpha_effective"] and row.effect_source == "min_effect"
