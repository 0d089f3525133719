"""The judge's corrected verdict pooled across collections: the strata's prediction-powered deltas weighted as
the pooled verdict weighs the collections, by hand and against ``ppi-python`` per stratum, and the rules:
it stands only where every collection's stands (a refusal names its collection), and a collection without a
corrected verdict leaves none pooled."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats as scipy_stats
from support.environment import require_module

from abcompare.judging.cost import JudgeCost
from abcompare.judging.pooled import pooled_judge
from abcompare.judging.stage import JudgeOutcome
from abcompare.stats.judged import judged_verdict
from abcompare.stats.ppi import pooled_ppi, ppi_mean

Z95 = scipy_stats.norm.ppf(0.975)


def test_pooled_ppi_by_hand() -> None:
    # stratum a: 0.5 with se sqrt(var([1, 0, 1, 0]) / 4 + var([0.5, -0.5]) / 2) = sqrt(0.1875);
    # stratum b: the judge exact on every query, delta 0 with se 0. Equal weights: 0.25, se sqrt(0.1875) / 2.
    a = ppi_mean([1.0, 0.0], [0.5, 0.5], [1.0, 0.0, 1.0, 0.0])
    b = ppi_mean([0.0, 0.0], [0.0, 0.0], [0.0, 0.0, 0.0])
    pooled = pooled_ppi([a, b], [0.5, 0.5])
    se = np.sqrt(0.1875) / 2
    assert pooled.estimate == pytest.approx(0.25) and pooled.std_error == pytest.approx(se)
    assert (pooled.low, pooled.high) == pytest.approx((0.25 - Z95 * se, 0.25 + Z95 * se))
    assert (pooled.judge_only, pooled.human_only) == pytest.approx((0.25, 0.25))
    assert (pooled.n_labelled, pooled.n_unlabelled) == (4, 7)
    # weighted by queries (6 and 5): 6/11 * 0.5
    by_query = pooled_ppi([a, b], [6 / 11, 5 / 11])
    assert by_query.estimate == pytest.approx(3 / 11)
    assert by_query.std_error == pytest.approx(6 / 11 * np.sqrt(0.1875))


def test_one_stratum_is_plain_ppi() -> None:
    rng = np.random.default_rng(3)
    y, yhat, rest = rng.normal(size=10), rng.normal(size=10), rng.normal(size=30)
    plain = ppi_mean(y, yhat, rest)
    assert pooled_ppi([plain], [1.0]) == plain


@pytest.mark.parametrize("weights", [(0.5, 0.5), (0.2, 0.8)])
def test_pooled_ppi_combines_ppi_pythons_strata(weights: tuple[float, float]) -> None:
    ppi_py = require_module("ppi_py")
    rng = np.random.default_rng(11)
    strata, expected, variances = [], 0.0, 0.0
    for w, shift in zip(weights, (0.02, 0.08), strict=True):
        truth = rng.normal(shift, 0.2, 300)
        judged = 0.6 * truth + 0.02 + rng.normal(0, 0.1, 300)
        y, yhat, rest = truth[:50], judged[:50], judged[50:]
        strata.append(ppi_mean(y, yhat, rest))
        estimate = float(np.ravel(ppi_py.ppi_mean_pointestimate(y, yhat, rest, lam=1.0))[0])
        low, high = (float(np.ravel(v)[0]) for v in ppi_py.ppi_mean_ci(y, yhat, rest, alpha=0.05, lam=1.0))
        expected += w * estimate
        variances += w**2 * ((high - low) / (2 * Z95)) ** 2
    pooled = pooled_ppi(strata, weights)
    assert pooled.estimate == pytest.approx(expected, abs=1e-12)
    assert pooled.std_error == pytest.approx(np.sqrt(variances), rel=1e-9)


def test_pooled_ppi_refuses_weights_that_do_not_sum_to_one_or_mixed_levels() -> None:
    a = ppi_mean([1.0, 0.0], [0.5, 0.5], [1.0, 0.0])
    with pytest.raises(ValueError, match="sum to 1"):
        pooled_ppi([a, a], [0.5, 0.6])
    with pytest.raises(ValueError, match="one confidence level"):
        pooled_ppi([a, ppi_mean([1.0, 0.0], [0.5, 0.5], [1.0, 0.0], confidence=0.9)], [0.5, 0.5])


# ------------------------------------------------------------------------------------ across collections
def outcome(seed: int, n: int, kappa: float, *, labelled: int = 5, min_agreement: float | None = 0.4):
    """A collection's judge outcome with one treatment: people's deltas on ``labelled`` queries, the judge's
    on all ``n``, and the measured ``kappa``."""
    rng = np.random.default_rng(seed)
    ids = [f"q{i}" for i in range(n)]
    judge_delta = pd.Series(rng.normal(0.05, 0.2, n), index=ids)
    human = judge_delta.iloc[:labelled] + rng.normal(0.01, 0.05, labelled)
    verdicts, not_computed = {}, {}
    if labelled >= 2:
        verdicts["hybrid"] = judged_verdict(human, judge_delta, kappa, min_agreement)
    else:
        not_computed["hybrid"] = (
            "PPI needs at least two labelled and two judge-only queries; there are 1 and 9"
        )
    return JudgeOutcome(
        judge="python:j", prompt_version="p", scale="graded", labels=pd.DataFrame(), summary="",
        agreement=None, tau=None, verdicts=verdicts, not_computed=not_computed, cost=JudgeCost(),
        min_agreement=min_agreement, metric="ndcg@10",
        human_only={"hybrid": float(judge_delta.mean()) + 0.01},
    )  # fmt: skip


@pytest.mark.parametrize(("weighting", "weights"), [("collection", (0.5, 0.5)), ("per_query", (0.4, 0.6))])
def test_pooled_judge_weighs_the_collections_as_the_pooled_verdict(weighting, weights) -> None:
    first, second = outcome(1, 20, 0.7), outcome(2, 30, 0.8)
    pooled = pooled_judge({"a": first, "b": second}, weighting)
    verdict = pooled.verdicts["hybrid"]
    parts = [first.verdicts["hybrid"].ppi, second.verdicts["hybrid"].ppi]
    assert verdict.ppi.estimate == pytest.approx(
        weights[0] * parts[0].estimate + weights[1] * parts[1].estimate
    )
    assert verdict.human_only == pytest.approx(
        weights[0] * first.human_only["hybrid"] + weights[1] * second.human_only["hybrid"]
    )
    assert not verdict.refused and pooled.weights == pytest.approx(weights)
    [line] = pooled.lines()
    assert line.startswith("ndcg@10 delta hybrid pooled over 2 collections")
    assert f"PPI-corrected {verdict.ppi.estimate:+.4f}" in line and "10 queries sampled" in line
    assert pooled.metrics()["judge.pooled.hybrid.ppi_delta"] == pytest.approx(verdict.ppi.estimate)
    assert pooled.as_json()["verdicts"]["hybrid"]["refused"] is False


def test_one_collections_refusal_refuses_the_pooled_verdict_and_names_it() -> None:
    pooled = pooled_judge({"a": outcome(1, 20, 0.7), "cranfield": outcome(2, 30, 0.1)}, "collection")
    verdict = pooled.verdicts["hybrid"]
    assert verdict.refused and verdict.reason.startswith(
        "cranfield: the judge's weighted kappa with people is 0.100"
    )
    assert any(line.startswith("refused: the pooled corrected verdict for hybrid") for line in pooled.lines())
    assert pooled.metrics()["judge.pooled.hybrid.refused"] == 1.0


def test_no_pooled_verdict_without_one_on_every_collection() -> None:
    pooled = pooled_judge({"a": outcome(1, 20, 0.7), "b": outcome(2, 10, 0.7, labelled=1)}, "collection")
    assert pooled.verdicts == {} and pooled.not_computed["hybrid"].startswith("none on b: PPI needs")
    pooled = pooled_judge({"a": outcome(1, 20, 0.7), "b": None}, "collection")
    assert pooled.not_computed["hybrid"] == "no judge ran on b"
    assert pooled_judge({"a": None, "b": None}, "collection") is None
