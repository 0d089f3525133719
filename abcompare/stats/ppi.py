"""Prediction-powered inference (Angelopoulos et al., Science 2023; PPI++, Angelopoulos et al. 2024) for the
mean of the paired per-query delta, when a judge's labels fill the holes people left: the judge's delta on
every query, corrected by how far it missed on the queries people labelled. For IR evaluation see Oosterhuis
et al. 2024. The interval is the normal one of the paper (variances with ddof = 0, as ``ppi-python``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats as scipy_stats


@dataclass(frozen=True)
class PPIResult:
    """The corrected mean delta (``estimate``) and its ``confidence`` interval; ``judge_only`` is the mean of
    the judge's deltas on every query, ``human_only`` the mean of people's deltas on the labelled queries,
    ``lam`` the weight given to the judge (1 for plain PPI; PPI++ tunes it in [0, 1])."""

    estimate: float
    low: float
    high: float
    std_error: float
    judge_only: float
    human_only: float
    human_only_low: float
    human_only_high: float
    lam: float
    n_labelled: int
    n_unlabelled: int
    confidence: float


def tuned_lambda(y: np.ndarray, yhat: np.ndarray, yhat_unlabelled: np.ndarray) -> float:
    """PPI++'s variance-minimising weight of the judge's predictions for a mean, clipped to [0, 1]:
    cov(y, yhat) / ((1 + n/N) var(all predictions))."""
    n, big_n = len(y), len(yhat_unlabelled)
    cov = float(np.mean((y - y.mean()) * (yhat - yhat.mean())))
    everything = np.concatenate([yhat, yhat_unlabelled])
    var = float(np.var(everything, ddof=1))  # as ppi-python (np.cov); the covariance above has ddof = 0
    if var == 0:
        return 0.0
    return float(np.clip(cov / ((1 + n / big_n) * var), 0.0, 1.0))


def ppi_mean(
    y: np.ndarray,
    yhat: np.ndarray,
    yhat_unlabelled: np.ndarray,
    *,
    confidence: float = 0.95,
    tune: bool = False,
) -> PPIResult:
    """The prediction-powered mean of ``y`` (people's per-query deltas on the ``n`` labelled queries) from
    ``yhat`` (the judge's deltas on the same queries) and ``yhat_unlabelled`` (the judge's on the ``N``
    others): ``lam * mean(yhat_unlabelled) + mean(y - lam * yhat)``, with standard error
    ``sqrt(var(lam * yhat_unlabelled) / N + var(y - lam * yhat) / n)``."""
    y, yhat, yhat_unlabelled = (np.asarray(a, dtype=np.float64) for a in (y, yhat, yhat_unlabelled))
    if y.shape != yhat.shape or y.ndim != 1:
        raise ValueError("y and yhat must be one value per labelled query")
    if len(y) < 2 or len(yhat_unlabelled) < 2:
        raise ValueError("PPI needs at least two labelled and two unlabelled queries")
    if not (np.isfinite(y).all() and np.isfinite(yhat).all() and np.isfinite(yhat_unlabelled).all()):
        raise ValueError("PPI needs finite deltas")
    lam = tuned_lambda(y, yhat, yhat_unlabelled) if tune else 1.0
    n, big_n = len(y), len(yhat_unlabelled)
    estimate = lam * float(yhat_unlabelled.mean()) + float((y - lam * yhat).mean())
    std_error = float(np.sqrt(np.var(lam * yhat_unlabelled) / big_n + np.var(y - lam * yhat) / n))
    z = float(scipy_stats.norm.ppf(0.5 + confidence / 2))
    human_se = float(np.std(y) / np.sqrt(n))
    return PPIResult(
        estimate=estimate,
        low=estimate - z * std_error,
        high=estimate + z * std_error,
        std_error=std_error,
        judge_only=float(np.concatenate([yhat, yhat_unlabelled]).mean()),
        human_only=float(y.mean()),
        human_only_low=float(y.mean()) - z * human_se,
        human_only_high=float(y.mean()) + z * human_se,
        lam=lam,
        n_labelled=n,
        n_unlabelled=big_n,
        confidence=confidence,
    )


def pooled_ppi(parts: Sequence[PPIResult], weights: Sequence[float] | np.ndarray) -> PPIResult:
    """Several collections' corrected deltas pooled as strata: ``sum_c W_c estimate_c`` (``weights`` summing
    to 1, as the pooled verdict weighs the collections), with standard error ``sqrt(sum_c W_c^2 se_c^2)``
    since the collections' queries, labelled and not, are sampled apart. The judge-only and human-only means
    pool with the same weights; ``lam`` is the collections' common weight of the judge (NaN if it differs)."""
    w = np.asarray(weights, dtype=np.float64)
    if len(parts) == 0 or w.shape != (len(parts),):
        raise ValueError("one weight per collection's PPI result")
    if not np.isclose(w.sum(), 1.0) or (w < 0).any():
        raise ValueError("the collections' weights must be non-negative and sum to 1")
    confidence = parts[0].confidence
    if any(p.confidence != confidence for p in parts):
        raise ValueError("the collections' PPI intervals must share one confidence level")
    z = float(scipy_stats.norm.ppf(0.5 + confidence / 2))

    def pooled(values: Sequence[float]) -> float:
        return float(np.dot(w, np.asarray(values, dtype=np.float64)))

    estimate = pooled([p.estimate for p in parts])
    std_error = float(np.sqrt(np.dot(w**2, np.square([p.std_error for p in parts]))))
    human_only = pooled([p.human_only for p in parts])
    human_ses = [(p.human_only_high - p.human_only) / z for p in parts]
    human_se = float(np.sqrt(np.dot(w**2, np.square(human_ses))))
    lams = {p.lam for p in parts}
    return PPIResult(
        estimate=estimate,
        low=estimate - z * std_error,
        high=estimate + z * std_error,
        std_error=std_error,
        judge_only=pooled([p.judge_only for p in parts]),
        human_only=human_only,
        human_only_low=human_only - z * human_se,
        human_only_high=human_only + z * human_se,
        lam=lams.pop() if len(lams) == 1 else float("nan"),
        n_labelled=sum(p.n_labelled for p in parts),
        n_unlabelled=sum(p.n_unlabelled for p in parts),
        confidence=confidence,
    )
