"""The non-inferiority test: the one-sided p of H0 mean(d) <= -margin equals a hand computation, scipy's
``ttest_rel(treatment + margin, control, alternative="greater")`` and a brute-force enumeration of sign
flips; it keeps its level when the true difference is exactly -margin; the comparison table carries it on
the primary rows, adjusted over the treatments."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from abcompare.core.errors import StatisticsError
from abcompare.stats.comparison import paired_comparison
from abcompare.stats.correction import holm
from abcompare.stats.noninferiority import non_inferiority_test
from abcompare.stats.permutation import sign_flip_test

CONTROL = np.array([0.50, 0.20, 0.80, 0.40, 0.60, 0.30, 0.70, 0.10])
TREATMENT = np.array([0.45, 0.25, 0.70, 0.40, 0.62, 0.20, 0.75, 0.08])
MARGIN = 0.05


def test_t_form_equals_a_hand_computation_and_scipys_one_sided_ttest_rel() -> None:
    d = TREATMENT - CONTROL
    n = d.size
    mean = sum(d) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in d) / (n - 1))
    t = (mean + MARGIN) / (sd / math.sqrt(n))
    by_hand = stats.t.sf(t, n - 1)  # P(T_{n-1} >= t): H1 is mean(d) > -margin
    scipy_rel = stats.ttest_rel(TREATMENT + MARGIN, CONTROL, alternative="greater").pvalue
    scipy_1samp = stats.ttest_1samp(d + MARGIN, 0.0, alternative="greater").pvalue
    ours = non_inferiority_test(d, MARGIN, test="t", correction="none")
    assert float(ours.pvalue[0]) == pytest.approx(by_hand, rel=1e-12)
    assert float(ours.pvalue[0]) == pytest.approx(scipy_rel, rel=1e-12)
    assert float(ours.pvalue[0]) == pytest.approx(scipy_1samp, rel=1e-12)
    assert ours.statistic[0] == pytest.approx(mean + MARGIN)


def test_permutation_form_equals_brute_force_enumeration_of_sign_flips() -> None:
    shifted = TREATMENT - CONTROL + MARGIN
    observed = shifted.sum()
    flips = list(itertools.product((1.0, -1.0), repeat=shifted.size))
    at_least = sum(1 for signs in flips if np.dot(signs, shifted) >= observed - 1e-12)
    ours = non_inferiority_test(TREATMENT - CONTROL, MARGIN, test="permutation", correction="none",
                                n_resamples=10_000)  # fmt: skip
    assert float(ours.pvalue[0]) == at_least / len(flips)  # 2^8 = 256 <= B: every sign vector, exactly
    assert 0 < at_least < len(flips)


def test_one_sided_sign_flip_by_hand() -> None:
    # d = (1, 2, 3): the 8 flipped sums are 6, 4, 2, 0, 0, -2, -4, -6; only the observed 6 is >= 6.
    assert sign_flip_test(np.array([1.0, 2.0, 3.0]), 100, alternative="greater").pvalue == 1 / 8
    # d = (-1, -2, -3): every flipped sum is >= -6.
    assert sign_flip_test(np.array([-1.0, -2.0, -3.0]), 100, alternative="greater").pvalue == 1.0


@pytest.mark.parametrize("test", ["t", "permutation"])
def test_level_at_the_margin_is_alpha(test: str) -> None:
    """A/A at the boundary: the true difference is exactly -margin, so every rejection is a false
    'non-inferior'; over 400 seeded data sets of 40 queries the rate stays near alpha = 0.05 (3 binomial
    standard errors: 0.017 to 0.083)."""
    rng = np.random.default_rng(2027)
    reps, n, margin, alpha = 400, 40, 0.02, 0.05
    d = rng.normal(-margin, 0.1, size=(n, reps))  # one column per simulated comparison
    result = non_inferiority_test(d, margin, test=test, correction="none", alpha=alpha, n_resamples=999,
                                  rng=np.random.default_rng(1))  # fmt: skip
    rate = float((result.pvalue_adjusted <= alpha).mean())
    se = math.sqrt(alpha * (1 - alpha) / reps)
    assert abs(rate - alpha) <= 3 * se, rate
    # and the test has power where the treatment is truly no worse (true difference 0)
    better = non_inferiority_test(d + margin, margin, test=test, correction="none", alpha=alpha,
                                  n_resamples=999, rng=np.random.default_rng(1))  # fmt: skip
    assert float((better.pvalue_adjusted <= alpha).mean()) > 3 * alpha


def _frames(*treatments: np.ndarray) -> tuple[pd.DataFrame, dict[str, pd.DataFrame]]:
    ids = pd.Index([f"q{i}" for i in range(CONTROL.size)], name="query_id")
    control = pd.DataFrame({"ndcg@10": CONTROL, "recall@10": CONTROL}, index=ids)
    named = {
        f"t{i}": pd.DataFrame({"ndcg@10": values, "recall@10": values}, index=ids)
        for i, values in enumerate(treatments)
    }
    return control, named


def test_the_comparison_table_carries_it_on_the_primary_rows_adjusted_over_the_treatments() -> None:
    worse, margin = TREATMENT - 0.2, 0.1
    control, treatments = _frames(TREATMENT, worse)
    table = paired_comparison(control, treatments, primary="t", n_resamples=200,
                              non_inferiority_margin=margin)  # fmt: skip
    primary = table[table["role"] == "primary"]
    raw = [stats.ttest_rel(t + margin, CONTROL, alternative="greater").pvalue for t in (TREATMENT, worse)]
    assert primary["p_non_inferiority"].to_numpy() == pytest.approx(raw, rel=1e-12)
    assert primary["p_non_inferiority_adjusted"].to_numpy() == pytest.approx(holm(np.array(raw)), rel=1e-12)
    assert list(primary["non_inferiority"]) == ["non-inferior", "not shown non-inferior"]
    secondary = table[table["role"] == "secondary"]
    assert secondary["p_non_inferiority"].isna().all() and secondary["non_inferiority"].isna().all()
    assert table.attrs["non_inferiority_margin"] == margin


def test_a_margin_changes_no_other_number() -> None:
    control, treatments = _frames(TREATMENT, CONTROL + 0.01)
    plain = paired_comparison(control, treatments, n_resamples=500, seed=3)
    with_margin = paired_comparison(control, treatments, n_resamples=500, seed=3, non_inferiority_margin=0.01)
    pd.testing.assert_frame_equal(plain, with_margin[plain.columns])


def test_maxt_adjusts_the_one_sided_family_on_the_same_sign_vectors() -> None:
    control, treatments = _frames(TREATMENT, CONTROL - 0.03)
    table = paired_comparison(control, treatments, correction="maxt", n_resamples=10_000,
                              non_inferiority_margin=MARGIN)  # fmt: skip
    primary = table[table["role"] == "primary"]
    raw = primary["p_non_inferiority"].to_numpy()
    shifted = [(frame["ndcg@10"] - control["ndcg@10"]).to_numpy() + MARGIN for frame in treatments.values()]
    for p, column in zip(raw, shifted, strict=True):  # the marginal p is the plain one-sided sign flip's
        assert p == sign_flip_test(column, 10_000, alternative="greater").pvalue
    adjusted = primary["p_non_inferiority_adjusted"].to_numpy()
    assert np.all(adjusted >= raw) and np.all(adjusted <= np.minimum(1.0, 2 * raw) + 1e-12)


@pytest.mark.parametrize(
    ("margin", "primary", "says"),
    [
        (-0.01, "permutation", ">= 0"),
        (math.nan, "permutation", "finite"),
        (math.inf, "t", "finite"),
        (0.01, "bootstrap", "'bootstrap'"),
        (0.01, "wilcoxon", "'wilcoxon'"),
    ],
)
def test_a_bad_margin_is_refused_at_its_key(margin: float, primary: str, says: str) -> None:
    control, treatments = _frames(TREATMENT)
    with pytest.raises(StatisticsError) as caught:
        paired_comparison(control, treatments, primary=primary, non_inferiority_margin=margin)
    assert caught.value.field == "non_inferiority_margin" and says in caught.value.message
