"""Statistics at large n: a significant change below the smallest effect of interest is flagged per row
(``below_min_effect``, ``min_effect_used``, ``min_effect_source``), against ``min_effect`` when set and
1% of the control's mean otherwise. Expected values are computed by hand in each test."""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
import pandas as pd
import pytest

from abcompare.stats.comparison import paired_comparison
from abcompare.stats.verdict import FROM_CONFIG, FROM_CONTROL_MEAN, minimum_effect_columns

N = 10_000
IDS = pd.Index([f"q{i}" for i in range(N)], name="query_id")
#: Control: 0.4 and 0.6 alternating (mean 0.5, so 1% of it is 0.005); recall: 0.1 and 0.3 (mean 0.2).
CONTROL = pd.DataFrame(
    {"ndcg@10": np.where(np.arange(N) % 2, 0.6, 0.4), "recall@10": np.where(np.arange(N) % 2, 0.3, 0.1)},
    index=IDS,
)
#: Per-query change: +0.002 and +0.004 alternating on both metrics: delta 0.003, sd(d) = 0.001·sqrt(n/(n-1)).
CHANGE = np.where(np.arange(N) % 2, 0.004, 0.002)
TINY = CONTROL.add(CHANGE, axis=0)


def compare(min_effect: float | None = None, treatment: pd.DataFrame = TINY) -> pd.DataFrame:
    return paired_comparison(CONTROL, {"tiny": treatment}, primary_metric="ndcg@10", primary="t",
                             tests=("t",), min_effect=min_effect)  # fmt: skip


def row(table: pd.DataFrame, metric: str = "ndcg@10") -> pd.Series:
    return table[table["metric"] == metric].iloc[0]


def test_a_tiny_change_at_ten_thousand_queries_is_significant_and_flagged_against_one_percent() -> None:
    primary = row(compare())
    # by hand: t = 0.003 / (0.001 / 100) = 300, far past any level; the t interval is 0.003 ± 2e-5
    assert primary["verdict"] == "better"
    assert primary["delta"] == pytest.approx(0.003, abs=1e-12)
    assert primary["min_effect_used"] == pytest.approx(0.005, abs=1e-12)  # 1% of the control's mean 0.5
    assert primary["min_effect_source"] == FROM_CONTROL_MEAN == "1% of the control's mean"
    assert bool(primary["below_min_effect"]) is True
    sd = 0.001 * math.sqrt(N / (N - 1))
    z = NormalDist().inv_cdf(0.975) + NormalDist().inv_cdf(0.8)
    assert primary["mde"] == pytest.approx(z * sd / math.sqrt(N), rel=1e-9)  # 2.8e-5: the query set's reach
    assert primary["ci_high"] < 0.005  # the interval too lies below the minimum


def test_each_row_is_read_against_its_own_control_mean() -> None:
    secondary = row(compare(), "recall@10")
    assert secondary["min_effect_used"] == pytest.approx(0.002, abs=1e-12)  # 1% of 0.2
    assert bool(secondary["below_min_effect"]) is False  # 0.003 reaches 0.002


def test_min_effect_replaces_the_default_on_every_row() -> None:
    table = compare(min_effect=0.01)
    assert list(table["min_effect_used"]) == [0.01, 0.01]
    assert list(table["min_effect_source"]) == [FROM_CONFIG] * 2 == ["significance.min_effect"] * 2
    assert table["below_min_effect"].tolist() == [True, True]
    reached = compare(min_effect=0.002)
    assert reached["below_min_effect"].tolist() == [False, False]  # 0.003 >= 0.002
    assert reached["verdict"].tolist() == ["better", "better"]  # the verdict itself is unchanged


def test_a_loss_is_read_by_its_size() -> None:
    table = compare(treatment=CONTROL.sub(CHANGE, axis=0))
    assert row(table)["verdict"] == "worse" and bool(row(table)["below_min_effect"]) is True


def test_a_change_that_is_not_significant_is_never_flagged() -> None:
    rng = np.random.default_rng(3)
    noisy = CONTROL.add(rng.normal(0, 0.5, N), axis=0)  # se 0.005 at this n: no significant change
    primary = row(compare(treatment=noisy))
    assert primary["verdict"] == "no significant difference" and bool(primary["below_min_effect"]) is False


@pytest.mark.parametrize(
    ("verdict", "delta", "control", "min_effect", "used", "source", "below"),
    [
        ("better", 0.004, 0.5, None, 0.005, FROM_CONTROL_MEAN, True),
        ("better", 0.005, 0.5, None, 0.005, FROM_CONTROL_MEAN, False),  # at the minimum: reaches it
        ("worse", -0.004, -0.5, None, 0.005, FROM_CONTROL_MEAN, True),  # |control mean|, |delta|
        ("better", 0.004, 0.0, None, 0.0, FROM_CONTROL_MEAN, False),  # a control mean of 0: nothing below 0
        ("no significant difference", 0.001, 0.5, None, 0.005, FROM_CONTROL_MEAN, False),
        ("inconclusive", 0.001, 0.5, 0.01, 0.01, FROM_CONFIG, False),
        ("better", 0.02, 0.5, 0.01, 0.01, FROM_CONFIG, False),
        ("worse", -0.009, 0.5, 0.01, 0.01, FROM_CONFIG, True),
    ],
)
def test_the_rule_row_by_row(verdict, delta, control, min_effect, used, source, below) -> None:
    got = minimum_effect_columns(np.array([verdict]), np.array([delta]), np.array([control]), min_effect)
    assert got["min_effect_used"][0] == pytest.approx(used, abs=1e-15)
    assert got["min_effect_source"][0] == source
    assert bool(got["below_min_effect"][0]) is below


def test_without_a_control_mean_only_the_configured_minimum_applies() -> None:
    """A pooled row has no control mean: no 1% default, only significance.min_effect."""
    none = minimum_effect_columns(np.array(["better"]), np.array([0.001]), None, None)
    assert math.isnan(none["min_effect_used"][0]) and none["min_effect_source"][0] == ""
    assert bool(none["below_min_effect"][0]) is False
    given = minimum_effect_columns(np.array(["better"]), np.array([0.001]), None, 0.01)
    assert bool(given["below_min_effect"][0]) is True and given["min_effect_source"][0] == FROM_CONFIG
