"""tuned_comparison: the permutation of the whole selection procedure, against brute force and in simulation.

The simulations document why the procedure exists: choosing the best of 20 candidates that are all equal
to the control, then testing it on the same queries, or cross-validating and then sign-flipping the
concatenated held-out differences, rejects far more often than alpha; permuting the whole selection does
not. Counts are binomial; bounds are central 99.9% ranges.
"""

from __future__ import annotations

import dataclasses
import itertools
import re

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from support.readme import README, as_printed, doc_match, readme_match

import abcompare
from abcompare.core.errors import StatisticsError
from abcompare.stats.permutation import sign_flip_test
from abcompare.stats.tuning import fold_assignment, tuned_comparison, tuned_selection_test


# ------------------------------------------------------------------------------------------ brute force
def selection_statistic(d: np.ndarray, fold: np.ndarray) -> float:
    """Cross-validated held-out mean of the best candidate, one fold at a time (first candidate on ties)."""
    held = 0.0
    for f in np.unique(fold):
        train, test = d[fold != f], d[fold == f]
        choice = int(np.argmax(train.sum(axis=0)))
        held += test[:, choice].sum()
    return held / d.shape[0]


def brute_force_pvalue(d: np.ndarray, fold: np.ndarray) -> float:
    observed = abs(selection_statistic(d, fold))
    hits = 0
    for signs in itertools.product([1.0, -1.0], repeat=d.shape[0]):
        hits += abs(selection_statistic(d * np.array(signs)[:, None], fold)) >= observed - 1e-12
    return hits / 2 ** d.shape[0]


@pytest.mark.parametrize(("n", "k", "folds"), [(6, 3, 2), (9, 4, 3), (10, 2, 5)])
def test_enumerated_pvalue_equals_brute_force(n, k, folds):
    rng = np.random.default_rng(n * k)
    d = rng.choice([-0.5, -0.25, 0.0, 0.25, 0.5, 0.75], size=(n, k))  # dyadic: exact sums, real ties
    fold = fold_assignment(n, folds, rng)
    result = tuned_selection_test(d, fold, n_resamples=2**n)
    assert result.exact and result.n_resamples == 2**n
    assert result.statistic == pytest.approx(selection_statistic(d, fold), abs=1e-15)
    assert result.pvalue == pytest.approx(brute_force_pvalue(d, fold), abs=1e-15)


def test_interval_ends_are_where_the_brute_force_test_of_a_common_gain_starts_rejecting():
    rng = np.random.default_rng(2)
    n = 9
    d = rng.choice([-0.5, -0.25, 0.0, 0.25, 0.5, 0.75], size=(n, 3)) + 0.25
    fold = fold_assignment(n, 3, rng)
    result = tuned_selection_test(d, fold, n_resamples=2**n, alpha=0.1)
    # the inversion uses a shortcut (a common shift changes no choice); brute force redoes the selection
    inside, step = 1e-9, 1e-6
    for end, outward in ((result.ci_low, -1), (result.ci_high, 1)):
        assert brute_force_pvalue(d - (end - outward * inside), fold) > 0.1
        assert brute_force_pvalue(d - (end + outward * step), fold) <= 0.1
    assert result.ci_low < result.statistic < result.ci_high


def test_interval_excludes_zero_exactly_when_the_test_rejects():
    rng = np.random.default_rng(3)
    for shift in np.linspace(0.0, 0.05, 12):
        d = rng.normal(0, 0.1, (60, 1)) + rng.normal(0, 0.1, (60, 8)) + shift
        result = tuned_selection_test(d, fold_assignment(60, 5, rng), n_resamples=999, rng=rng)
        assert (result.pvalue <= 0.05) == (not result.ci_low <= 0 <= result.ci_high), shift


def test_identical_candidates_count_once_and_the_first_is_named():
    rng = np.random.default_rng(4)
    d = rng.normal(0.03, 0.1, (50, 3))
    d = np.column_stack([d[:, 0], d[:, 1], d[:, 1], d[:, 2]])  # candidates 1 and 2 are the same run
    fold = fold_assignment(50, 5, rng)
    with_copy = tuned_selection_test(d, fold, n_resamples=500, rng=np.random.default_rng(0))
    without = tuned_selection_test(d[:, [0, 1, 3]], fold, n_resamples=500, rng=np.random.default_rng(0))
    assert with_copy.pvalue == without.pvalue and with_copy.statistic == without.statistic
    assert 2 not in with_copy.choices


# ------------------------------------------------------------------------------------------ the API
def per_query(values: np.ndarray, metric: str = "ndcg@10") -> pd.DataFrame:
    ids = pd.Index([f"q{i:03d}" for i in range(values.size)], name="query_id")
    return pd.DataFrame({metric: values, "recall@10": values / 2}, index=ids)


@pytest.fixture
def grid() -> tuple[pd.DataFrame, dict[str, pd.DataFrame]]:
    rng = np.random.default_rng(5)
    base = rng.random(90)
    control = per_query(base)
    candidates = {
        f"fusion.k={k}": per_query(np.clip(base + rng.normal(0.04 if k == 30 else 0.0, 0.08, 90), 0, 1))
        for k in (10, 30, 60, 100)
    }
    return control, candidates


def test_result_fields_held_out_table_and_sentence(grid):
    control, candidates = grid
    result = abcompare.tuned_comparison(control, candidates, n_resamples=2000, seed=1)
    assert isinstance(result, abcompare.TunedComparison)
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.delta = 0.0
    held = result.held_out
    assert list(held.columns) == ["fold", "choice", "control", "tuned", "delta"]
    assert held.index.name == "query_id" and len(held) == 90
    assert sorted(held["fold"].value_counts()) == [18] * 5
    for f, name in enumerate(result.choices):
        rows = held[held["fold"] == f]
        assert (rows["choice"] == name).all()
        np.testing.assert_array_equal(rows["tuned"], candidates[name].loc[rows.index, "ndcg@10"])
    np.testing.assert_array_equal(held["control"], control["ndcg@10"])
    assert result.delta == pytest.approx((held["tuned"] - held["control"]).mean())
    assert result.ci_low < result.delta < result.ci_high
    assert result.most_chosen == "fusion.k=30" and result.p_value < 0.01
    assert result.candidates == tuple(candidates) and result.folds == 5


def test_same_seed_same_result_another_seed_other_folds(grid):
    control, candidates = grid
    first = tuned_comparison(control, candidates, n_resamples=500, seed=3)
    again = tuned_comparison(control, candidates, n_resamples=500, seed=3)
    assert (first.delta, first.p_value, first.ci_low, first.choices) == (
        again.delta, again.p_value, again.ci_low, again.choices,
    )  # fmt: skip
    pd.testing.assert_frame_equal(first.held_out, again.held_out)
    other = tuned_comparison(control, candidates, n_resamples=500, seed=4)
    assert not np.array_equal(first.held_out["fold"], other.held_out["fold"])


def test_metric_choice_and_query_order_do_not_matter(grid):
    control, candidates = grid
    shuffled = {name: frame.iloc[::-1] for name, frame in candidates.items()}
    a = tuned_comparison(control, candidates, metric="recall@10", n_resamples=300)
    b = tuned_comparison(control, shuffled, metric="recall@10", n_resamples=300)
    assert a.metric == "recall@10" and (a.delta, a.p_value) == (b.delta, b.p_value)


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [({"folds": 1}, "folds"), ({"folds": 500}, "folds"), ({"n_resamples": 1}, "n_resamples"),
     ({"seed": -1}, "seed"), ({"alpha": 0}, "alpha"), ({"metric": "map@10"}, "control")],
)  # fmt: skip
def test_bad_settings_are_statistics_errors(grid, kwargs, field):
    control, candidates = grid
    with pytest.raises(StatisticsError) as info:
        tuned_comparison(control, candidates, **kwargs)
    assert info.value.field == field and info.value.hint


def test_no_candidates_or_unpaired_queries_are_errors(grid):
    control, candidates = grid
    with pytest.raises(StatisticsError, match="candidates"):
        tuned_comparison(control, {})
    with pytest.raises(StatisticsError, match="q089"):
        tuned_comparison(control, {"short": candidates["fusion.k=10"].iloc[:-1]})


def test_everything_after_the_data_is_keyword_only(grid):
    control, candidates = grid
    with pytest.raises(TypeError):
        tuned_comparison(control, candidates, "ndcg@10")  # type: ignore[misc]


# ------------------------------------------------------------------------------------------ simulation
REPS, N_QUERIES, N_CANDIDATES, B, ALPHA = 1500, 120, 20, 199, 0.05

NOISE = np.array([-0.2, -0.1, 0.0, 0.0, 0.1, 0.2])
SD_NOISE = float(np.sqrt(NOISE.var() + 0.05**2))


def docs_text() -> str:
    """docs/statistics.md, where this module's simulated rates are quoted."""
    return (README.parent / "docs" / "statistics.md").read_text(encoding="utf-8")


def draw(rng: np.random.Generator, gains: np.ndarray) -> np.ndarray:
    """candidate - control per query: a part shared by all candidates (the query), a part per candidate."""
    shared = rng.normal(0, 0.05, (N_QUERIES, 1))
    own = rng.choice(NOISE, size=(N_QUERIES, gains.size)) + rng.normal(0, 0.05, (N_QUERIES, gains.size))
    return shared + own + gains


def expected_gain(gains: np.ndarray, train: int, rng: np.random.Generator, reps: int = 200_000) -> float:
    """What the procedure gains on unseen queries: E[gain of the candidate chosen on `train` queries]."""
    means = gains + rng.normal(0, SD_NOISE / np.sqrt(train), (reps, gains.size))
    return float(gains[np.argmax(means, axis=1)].mean())


def simulate(gains: np.ndarray, seed: int, reps: int = REPS) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    out: dict[str, list] = {"tuned": [], "best_then_t": [], "cv_then_flip": [], "low": [], "high": []}
    for _ in range(reps):
        d = draw(rng, gains)
        result = tuned_selection_test(
            d, fold_assignment(N_QUERIES, 5, rng), n_resamples=B, rng=rng, alpha=ALPHA
        )
        out["tuned"].append(result.pvalue)
        out["best_then_t"].append(stats.ttest_1samp(d[:, np.argmax(d.mean(axis=0))], 0.0).pvalue)
        out["cv_then_flip"].append(sign_flip_test(result.held_out, B, rng).pvalue)
        out["low"].append(result.ci_low)
        out["high"].append(result.ci_high)
    return {key: np.array(values) for key, values in out.items()}


@pytest.fixture(scope="module")
def null_runs() -> dict[str, np.ndarray]:
    return simulate(np.zeros(N_CANDIDATES), seed=2024)


def test_the_tuned_pvalue_rejects_at_alpha_when_no_candidate_differs(null_runs):
    rejected = int((null_runs["tuned"] <= ALPHA).sum())
    low, high = stats.binom.interval(0.999, REPS, ALPHA)  # 3.4% to 6.8% of 1500
    assert low <= rejected <= high, rejected  # measured here: 83 of 1500 (5.5%)


def test_testing_the_chosen_candidate_naively_rejects_far_too_often(null_runs):
    # Why the whole procedure is permuted. Measured here: best mean then a t-test on the same queries
    # rejects 519 of 1500 (35%), cross-validation then a sign-flip test of the concatenated held-out
    # differences 256 (17%): the folds' choices are made on overlapping queries.
    high = stats.binom.interval(0.999, REPS, ALPHA)[1]
    assert (null_runs["best_then_t"] <= ALPHA).sum() > 4 * high
    assert (null_runs["cv_then_flip"] <= ALPHA).sum() > 1.8 * high


def test_the_readme_and_docs_state_this_simulations_rates(null_runs):
    """The A/A rates the README and docs/statistics.md quote are this simulation's, to their digits."""
    rate = {
        key: 100 * float((null_runs[key] <= ALPHA).mean()) for key in ("best_then_t", "cv_then_flip", "tuned")
    }
    naive = doc_match(
        r'with (\d+) candidates all equal to the control, "best mean then a t-test" rejects (\d+)% of the '
        r"time at alpha ([0-9.]+)",
        page="docs/reading-statistics.md",
    ).groups()
    trap = doc_match(
        r"in simulation: (\d+)% false positives at alpha ([0-9.]+)\)", page="docs/sweeps.md"
    ).groups()
    kept = doc_match(
        r"so its p-value keeps its level \(([0-9.]+)% in the same simulation\)", page="docs/sweeps.md"
    ).group(1)
    assert (int(naive[0]), float(naive[2]), float(trap[1])) == (N_CANDIDATES, ALPHA, ALPHA)
    assert as_printed(rate["best_then_t"], naive[1]) == naive[1]
    assert as_printed(rate["best_then_t"], trap[0]) == trap[0]
    assert as_printed(rate["tuned"], kept) == kept
    docs = docs_text()
    rows = {
        "best_then_t": r"\| best mean, then a paired t-test on the same queries \| ([0-9.]+)% \|",
        "cv_then_flip": r"\| 5-fold CV, then a plain sign-flip test of the concatenated held-out differences "
        r"\| ([0-9.]+)% \|",
        "tuned": r"\| `tuned_comparison` \(the whole selection permuted\) \| ([0-9.]+)% \|",
    }
    stated = {key: readme_match(pattern, docs).group(1) for key, pattern in rows.items()}
    assert {key: as_printed(rate[key], text) for key, text in stated.items()} == stated


def test_a_planted_gain_is_found():
    gains = np.zeros(N_CANDIDATES)
    gains[3] = 0.06
    runs = simulate(gains, seed=9, reps=300)
    assert (runs["tuned"] <= ALPHA).sum() >= 0.85 * 300  # measured here: 282 of 300 (94%)
    rate, reps = readme_match(
        r"`tuned_comparison` rejects in (\d+)% of (\d+) replicates", docs_text()
    ).groups()
    assert int(reps) == 300 and as_printed(100 * float((runs["tuned"] <= ALPHA).mean()), rate) == rate


@pytest.mark.parametrize(
    ("name", "gains"),
    [
        ("all 0", np.zeros(N_CANDIDATES)),
        ("all +0.02", np.full(N_CANDIDATES, 0.02)),
        ("one +0.06, 19 at 0", np.r_[0.06, np.zeros(N_CANDIDATES - 1)]),
        ("spread evenly over −0.03 … +0.03", np.linspace(-0.03, 0.03, N_CANDIDATES)),
    ],
)
def test_the_interval_covers_what_tuning_gains_on_unseen_queries(name, gains):
    """Each case is a row of docs/statistics.md's coverage table (named as there), whose target and
    coverage are this simulation's to the digits printed."""
    reps = 1000
    runs = simulate(gains, seed=31, reps=reps)
    target = expected_gain(gains, N_QUERIES * 4 // 5, np.random.default_rng(0))
    covered = int(((runs["low"] <= target) & (target <= runs["high"])).sum())
    low, high = stats.binom.interval(0.999, reps, 1 - ALPHA)
    # exact when every candidate has the same gain, conservative when they differ; measured here: 945,
    # 945, 973 and 950 of 1000 for the four cases
    assert low <= covered <= (high if np.ptp(gains) == 0 else 0.995 * reps), (name, covered)
    row = readme_match(rf"\| {re.escape(name)} \| ([0-9.]+) \| ([0-9.]+)% \|", docs_text()).groups()
    assert (as_printed(target, row[0]), as_printed(100 * covered / reps, row[1])) == row
