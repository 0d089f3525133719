"""The verdict when a judge's labels fill the holes people left: the prediction-powered mean delta (people's
per-query deltas correct the judge's), beside the judge-only and human-only figures, and the refusal rule:
below ``judge.min_agreement`` (weighted kappa with people), or with agreement unmeasured, a verdict resting on
the judge's labels is refused and the human-only figure stands."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from abcompare.stats.ppi import PPIResult, ppi_mean


@dataclass(frozen=True)
class JudgedVerdict:
    """``ppi``: the corrected delta with its interval (and the judge-only and human-only means); ``kappa``:
    the agreement measured on the pairs both graded (NaN when none); ``refused``: whether the judge's labels
    may carry the verdict, and ``reason`` when not."""

    ppi: PPIResult
    kappa: float
    min_agreement: float | None
    refused: bool
    reason: str | None
    labelled_queries: tuple[str, ...]


def refusal(kappa: float, min_agreement: float | None) -> str | None:
    """Why a verdict resting on the judge is refused (None when it is not): agreement not measured, or
    measured below the floor. No floor (None) never refuses a measured agreement."""
    if not np.isfinite(kappa):
        return "the judge's agreement with people could not be measured (no pair both graded, or one grade)"
    if min_agreement is not None and kappa < min_agreement:
        return (
            f"the judge's weighted kappa with people is {kappa:.3f}, "
            f"below judge.min_agreement {min_agreement:.2f}"
        )
    return None


def judged_verdict(
    human_delta: pd.Series,
    judge_delta: pd.Series,
    kappa: float,
    min_agreement: float | None,
    *,
    confidence: float = 0.95,
    tune: bool = False,
) -> JudgedVerdict:
    """The corrected verdict from people's per-query deltas (``human_delta``, indexed by query id: the
    queries whose hits people judged) and the judge's (``judge_delta``, every query), and whether it is
    refused for ``kappa`` below ``min_agreement``."""
    labelled = human_delta.index.intersection(judge_delta.index)
    if len(labelled) != len(human_delta):
        missing = human_delta.index.difference(judge_delta.index)[:1].tolist()
        raise ValueError(f"the judge's deltas lack labelled queries (first: {missing})")
    unlabelled = judge_delta.index.difference(labelled)
    result = ppi_mean(
        human_delta.loc[labelled].to_numpy(),
        judge_delta.loc[labelled].to_numpy(),
        judge_delta.loc[unlabelled].to_numpy(),
        confidence=confidence,
        tune=tune,
    )
    reason = refusal(kappa, min_agreement)
    return JudgedVerdict(result, kappa, min_agreement, reason is not None, reason, tuple(map(str, labelled)))
