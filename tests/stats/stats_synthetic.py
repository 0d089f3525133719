"""Synthetic per-query metrics that move together like real ones, for the statistics tests.

Each query has one relevant document; a run puts it at rank r (or misses it). Every metric@k is a
function of r, so the 15 columns (5 measures x cutoffs 1, 5, 10) are as correlated as real ones:
P@1 = R@1 = F1@1 = MRR@1 = nDCG@1, P@k and F1@k are multiples of R@k, MRR@k and nDCG@k move together.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

MEASURES = ("precision", "recall", "f1", "mrr", "ndcg")
CUTOFFS = (1, 5, 10)
METRICS = [f"{m}@{k}" for m in MEASURES for k in CUTOFFS]


def ranks(rng: np.random.Generator, difficulty: np.ndarray, gain: float = 0.0) -> np.ndarray:
    """Rank of the relevant document per query (large = missed); ``gain`` pulls it up for some queries."""
    r = 1 + np.floor(rng.exponential(difficulty))
    lifted = rng.random(difficulty.size) < gain
    return np.where(lifted, np.maximum(1, np.floor(r / 3)), r)


def metrics_of(r: np.ndarray) -> np.ndarray:
    """The 15 metric columns (in ``METRICS`` order) of runs that put the relevant document at rank r."""
    columns = []
    for measure in MEASURES:
        for k in CUTOFFS:
            hit = (r <= k).astype(float)
            value = {
                "precision": hit / k,
                "recall": hit,
                "f1": 2 * hit / (k + 1),
                "mrr": hit / r,
                "ndcg": hit / np.log2(r + 1),
            }[measure]
            columns.append(value)
    return np.column_stack(columns)


def paired_runs(rng: np.random.Generator, n: int, gain: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """Control and treatment metrics (n x 15) on the same queries; ``gain`` = 0 is an A/A comparison."""
    difficulty = rng.choice([0.5, 2.0, 6.0, 20.0], size=n)
    return metrics_of(ranks(rng, difficulty)), metrics_of(ranks(rng, difficulty, gain))


def frames(control: np.ndarray, treatment: np.ndarray) -> tuple[pd.DataFrame, pd.DataFrame]:
    ids = pd.Index([f"q{i:03d}" for i in range(control.shape[0])], name="query_id")
    return pd.DataFrame(control, index=ids, columns=METRICS), pd.DataFrame(
        treatment, index=ids, columns=METRICS
    )
