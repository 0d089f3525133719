"""The judged verdict: PPI over the labelled and unlabelled queries as the index says, and the refusal rule
at the agreement floor (below it, or unmeasured, refused; at it, not; no floor never refuses)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from abcompare.stats.judged import judged_verdict, refusal


def test_the_labelled_queries_correct_the_judge_on_the_others() -> None:
    human = pd.Series([1.0, 0.0], index=["q1", "q2"])
    judge = pd.Series([1.0, 0.5, 0.0, 1.0, 0.5], index=["q3", "q1", "q4", "q5", "q2"])
    verdict = judged_verdict(human, judge, kappa=0.6, min_agreement=0.4)
    # unlabelled q3, q4, q5: mean 2/3; the judge's error on q1, q2: mean([0.5, -0.5]) = 0
    assert verdict.ppi.estimate == pytest.approx(2 / 3)
    assert verdict.ppi.human_only == pytest.approx(0.5) and verdict.ppi.judge_only == pytest.approx(0.6)
    assert (verdict.ppi.n_labelled, verdict.ppi.n_unlabelled) == (2, 3)
    assert not verdict.refused and verdict.reason is None


@pytest.mark.parametrize(
    ("kappa", "floor", "refused"),
    [(0.39, 0.4, True), (0.4, 0.4, False), (-0.2, None, False), (np.nan, None, True), (np.nan, -1.0, True)],
)
def test_the_refusal_rule(kappa: float, floor: float | None, refused: bool) -> None:
    reason = refusal(kappa, floor)
    assert (reason is not None) == refused
    if refused and np.isfinite(kappa):
        assert "0.39" in reason and "below judge.min_agreement 0.40" in reason


def test_a_labelled_query_the_judge_did_not_score_is_an_error() -> None:
    with pytest.raises(ValueError, match="lack labelled queries"):
        judged_verdict(
            pd.Series([1.0, 0.0], index=["q1", "q9"]),
            pd.Series([1.0, 0.0, 1.0], index=["q1", "q2", "q3"]),
            0.5,
            0.4,
        )
