"""How far a relevance judge agrees with people on the pairs both graded: Cohen's weighted kappa and
Krippendorff's alpha (ordinal and interval) on the grades, the confusion table, and Kendall's tau between
the variants' ranking by people's labels and by the judge's; each with a seeded bootstrap interval that
resamples whole queries (pairs of one query are not independent)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd
from scipy import stats as scipy_stats

#: The grade scale the tables are laid out on.
SCALE: tuple[int, ...] = (0, 1, 2, 3)


@dataclass(frozen=True)
class Estimate:
    """A statistic and its bootstrap percentile interval (NaN where undefined, e.g. one grade only)."""

    value: float
    low: float
    high: float


@dataclass(frozen=True)
class Agreement:
    """Agreement of a judge with people on ``n_pairs`` pairs of ``n_queries`` queries.

    ``kappa``: Cohen's kappa with ``weights`` (linear or quadratic disagreement weights on the 0-3 scale);
    ``alpha_ordinal`` / ``alpha_interval``: Krippendorff's alpha with those metrics; ``confusion``: pair
    counts, people's grade down, the judge's across. Intervals: ``confidence`` percentile intervals of
    ``n_resamples`` query-level resamples drawn with ``seed``.
    """

    n_pairs: int
    n_queries: int
    kappa: Estimate
    alpha_ordinal: Estimate
    alpha_interval: Estimate
    confusion: pd.DataFrame
    weights: str
    confidence: float
    n_resamples: int
    seed: int


# ----------------------------------------------------------------------------------------- statistics
def confusion_table(human: Sequence[int], judge: Sequence[int], scale: Sequence[int] = SCALE) -> pd.DataFrame:
    """Counts of pairs by (people's grade, judge's grade), every grade of ``scale`` on both axes."""
    h, j = _grades(human, judge, scale)
    index = {g: i for i, g in enumerate(scale)}
    table = np.zeros((len(scale), len(scale)), dtype=np.int64)
    np.add.at(table, ([index[g] for g in h], [index[g] for g in j]), 1)
    return pd.DataFrame(table, index=pd.Index(scale, name="human"), columns=pd.Index(scale, name="judge"))


def weighted_kappa(
    human: Sequence[int],
    judge: Sequence[int],
    weights: Literal["linear", "quadratic", "none"] = "linear",
    scale: Sequence[int] = SCALE,
) -> float:
    """Cohen's kappa with disagreement weights |i-j| (linear), (i-j)^2 (quadratic) or 1 for any
    disagreement (none): 1 - sum(w * observed) / sum(w * expected by chance). NaN when chance agreement is
    total (both gave a single grade)."""
    table = confusion_table(human, judge, scale).to_numpy(dtype=np.float64)
    observed = table / table.sum()
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0))
    i, j = np.indices(table.shape)
    w = {"linear": np.abs(i - j), "quadratic": (i - j) ** 2, "none": (i != j)}[weights].astype(np.float64)
    chance = float((w * expected).sum())
    return float("nan") if chance == 0 else 1.0 - float((w * observed).sum()) / chance


def krippendorff_alpha(
    human: Sequence[int],
    judge: Sequence[int],
    level: Literal["ordinal", "interval"] = "ordinal",
    scale: Sequence[int] = SCALE,
) -> float:
    """Krippendorff's alpha for two coders who both graded every unit: 1 - D_observed / D_expected from
    the coincidence matrix, with the ordinal metric (rank distance through the grades' frequencies) or the
    interval one ((c - k)^2). NaN when every grade given is the same."""
    table = confusion_table(human, judge, scale).to_numpy(dtype=np.float64)
    coincidence = table + table.T  # each unit's two values, in both orders (m_u - 1 = 1)
    n_c = coincidence.sum(axis=1)
    n = n_c.sum()
    values = np.asarray(scale, dtype=np.float64)
    if level == "interval":
        delta = (values[:, None] - values[None, :]) ** 2
    else:
        cum = np.cumsum(n_c)
        steps = np.arange(len(scale))
        lo, hi = np.minimum.outer(steps, steps), np.maximum.outer(steps, steps)
        between = cum[hi] - np.where(lo > 0, cum[np.maximum(lo - 1, 0)], 0.0)  # sum of n_g, g in [lo, hi]
        delta = (between - (n_c[:, None] + n_c[None, :]) / 2.0) ** 2
    observed = float((coincidence * delta).sum()) / n
    expected = float((np.outer(n_c, n_c) * delta).sum()) / (n * (n - 1))
    return float("nan") if expected == 0 else 1.0 - observed / expected


def ranking_tau(human_scores: pd.DataFrame, judge_scores: pd.DataFrame) -> float:
    """Kendall's tau-b between the variants' mean scores (columns) under people's labels and under the
    judge's, over the same queries (rows)."""
    tau = scipy_stats.kendalltau(human_scores.mean().to_numpy(), judge_scores.mean().to_numpy()).statistic
    return float(tau)


# ----------------------------------------------------------------------------------------- intervals
def _percentile(values: np.ndarray, confidence: float) -> tuple[float, float]:
    finite = values[np.isfinite(values)]
    if len(finite) == 0:
        return float("nan"), float("nan")
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(finite, [tail, 100 - tail])
    return float(low), float(high)


def _query_resamples(groups: np.ndarray, n_resamples: int, seed: int) -> list[np.ndarray]:
    """Row indices of each resample: queries drawn with replacement, each bringing all its rows."""
    rng = np.random.default_rng(seed)
    codes, uniques = pd.factorize(groups)
    rows_of = [np.flatnonzero(codes == q) for q in range(len(uniques))]
    out = []
    for _ in range(n_resamples):
        drawn = rng.integers(0, len(uniques), len(uniques))
        out.append(np.concatenate([rows_of[q] for q in drawn]))
    return out


def _estimate(statistic: Callable[[np.ndarray], float], resamples: list[np.ndarray], everything: np.ndarray,
              confidence: float) -> Estimate:  # fmt: skip
    values = np.array([statistic(rows) for rows in resamples], dtype=np.float64)
    low, high = _percentile(values, confidence)
    return Estimate(statistic(everything), low, high)


def agreement(
    human: Sequence[int],
    judge: Sequence[int],
    query_ids: Sequence[str] | None = None,
    *,
    weights: Literal["linear", "quadratic"] = "linear",
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> Agreement:
    """Agreement of ``judge`` with ``human`` on the same pairs (one grade each, on the 0-3 scale); the
    bootstrap resamples queries (``query_ids``; each pair its own unit when None)."""
    h, j = _grades(human, judge, SCALE)
    if len(h) == 0:
        raise ValueError("no pair was graded by both the people and the judge")
    groups = np.asarray(query_ids if query_ids is not None else np.arange(len(h)))
    if len(groups) != len(h):
        raise ValueError("query_ids must give one query per pair")
    resamples = _query_resamples(groups, n_resamples, seed)
    everything = np.arange(len(h))
    return Agreement(
        n_pairs=len(h),
        n_queries=len(pd.unique(groups)),
        kappa=_estimate(lambda r: weighted_kappa(h[r], j[r], weights), resamples, everything, confidence),
        alpha_ordinal=_estimate(
            lambda r: krippendorff_alpha(h[r], j[r], "ordinal"), resamples, everything, confidence
        ),  # fmt: skip
        alpha_interval=_estimate(
            lambda r: krippendorff_alpha(h[r], j[r], "interval"), resamples, everything, confidence
        ),  # fmt: skip
        confusion=confusion_table(h, j),
        weights=weights,
        confidence=confidence,
        n_resamples=n_resamples,
        seed=seed,
    )


def ranking_agreement(
    human_scores: pd.DataFrame,
    judge_scores: pd.DataFrame,
    *,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> Estimate:
    """Kendall's tau between the variants' rankings by people's labels and by the judge's (per-query scores,
    queries as rows, variants as columns, both tables on the same queries), with a query bootstrap."""
    if list(human_scores.columns) != list(judge_scores.columns) or not human_scores.index.equals(
        judge_scores.index
    ):
        raise ValueError("both score tables need the same variants (columns) and queries (rows)")
    resamples = _query_resamples(np.arange(len(human_scores)), n_resamples, seed)
    return _estimate(
        lambda r: ranking_tau(human_scores.iloc[r], judge_scores.iloc[r]),
        resamples,
        np.arange(len(human_scores)),
        confidence,
    )


def _grades(
    human: Sequence[int], judge: Sequence[int], scale: Sequence[int]
) -> tuple[np.ndarray, np.ndarray]:
    h = np.asarray(human, dtype=np.int64)
    j = np.asarray(judge, dtype=np.int64)
    if h.shape != j.shape or h.ndim != 1:
        raise ValueError("human and judge grades must be two sequences of the same length")
    off = set(np.unique(np.concatenate([h, j]))) - set(scale)
    if off:
        raise ValueError(f"grades off the scale {tuple(scale)}: {sorted(off)}")
    return h, j
