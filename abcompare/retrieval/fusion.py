"""Hybrid fusion of ranked hit lists (one per retriever) into one list: RRF, RSF, DBSF, DBSF-3sigma.

Hits are merged by ``abcompare.core.hits.stable_key``; each list contributes a weighted, normalised score per
hit; the fused list is sorted by the sum, best first, equal sums keeping first-seen order.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from abcompare.core.errors import RetrievalError
from abcompare.core.hits import RagHit, stable_key

METHODS: tuple[str, ...] = ("rrf", "rsf", "dbsf", "dbsf-3sigma")
DEFAULT_RRF_K = 60


def _scores(hits: Sequence[RagHit]) -> np.ndarray | None:
    """The list's scores as floats, or None when any is missing (None or NaN)."""
    values = [hit.score for hit in hits]
    if any(v is None or (isinstance(v, float) and math.isnan(v)) for v in values):
        return None
    return np.asarray(values, dtype=float)


def _reciprocal_ranks(n: int) -> np.ndarray:
    return 1.0 / np.arange(1, n + 1, dtype=float)


def rrf_scores(n: int, k: int = DEFAULT_RRF_K) -> np.ndarray:
    """Reciprocal-rank contributions 1/(k + rank), rank from 1; a k <= 0 means 60."""
    k = k if k > 0 else DEFAULT_RRF_K
    return 1.0 / (k + np.arange(1, n + 1, dtype=float))


def rsf_scores(scores: np.ndarray | None, n: int) -> np.ndarray:
    """Min-max normalised scores; 1/rank for a missing score, a single hit, or no spread."""
    if scores is None or n < 2 or np.ptp(scores) == 0:
        return _reciprocal_ranks(n)
    return (scores - scores.min()) / np.ptp(scores)


def dbsf_scores(scores: np.ndarray | None, n: int) -> np.ndarray:
    """Sigmoid of the z-score (population std); 1/rank for a missing score, a single hit, or no spread."""
    if scores is None or n < 2 or scores.std() == 0:
        return _reciprocal_ranks(n)
    z = (scores - scores.mean()) / scores.std()
    return 1.0 / (1.0 + np.exp(-z))


def dbsf_3sigma_scores(scores: np.ndarray | None, n: int) -> np.ndarray:
    """Qdrant's DBSF: (s - (mean - 3 sd)) / (6 sd), sample sd, not clipped; 0.5 for one hit or no spread.

    A list with a missing score cannot be normalised and falls back to 1/rank, like ``rsf``/``dbsf``.
    """
    if scores is None:
        return _reciprocal_ranks(n)
    if n < 2 or scores.std(ddof=1) == 0:
        return np.full(n, 0.5)
    sd = scores.std(ddof=1)
    return (scores - (scores.mean() - 3 * sd)) / (6 * sd)


def _list_weights(
    lists: Sequence[Sequence[RagHit]], weights: Sequence[float] | Mapping[str, float] | None
) -> list[float]:
    """One weight per list: positional, or by the list's ``retriever_source`` (default 1)."""
    if weights is None:
        return [1.0] * len(lists)
    if isinstance(weights, Mapping):
        out = []
        for hits in lists:
            source = next((h.retriever_source for h in hits if h.retriever_source), None)
            out.append(float(weights.get(source, 1.0)) if source is not None else 1.0)
        return out
    if len(weights) != len(lists):
        raise RetrievalError(
            f"{len(weights)} fusion weights for {len(lists)} lists",
            field="fusion.weights",
            hint="give one weight per retriever list",
        )
    return [float(w) for w in weights]


def fuse(
    lists: Sequence[Sequence[RagHit]],
    method: str = "rrf",
    k: int = DEFAULT_RRF_K,
    weights: Sequence[float] | Mapping[str, float] | None = None,
) -> list[RagHit]:
    """Fuse ranked hit lists (best first, one per retriever) into one list with ``fusion_score`` set.

    Within a list only the first occurrence of a key counts. The fused hit is a copy of the first-seen hit
    with ``score`` = ``fusion_score``, ``rank`` from 1, and ``retriever_source`` naming every list that
    found it; ties keep the first-seen order.

    Parameters
    ----------
    lists : sequence of hit lists
        One ranked list per retriever.
    method : {"rrf", "rsf", "dbsf", "dbsf-3sigma"}
        ``rrf``: sum of w/(k + rank); ``rsf``: weighted sum of min-max normalised scores; ``dbsf``: sum of
        sigmoid(z-score), ai4j's method; ``dbsf-3sigma``: Qdrant's (s - (mean - 3 sd)) / 6 sd.
    k : int
        RRF's constant (60; k <= 0 means 60).
    weights : sequence of float or mapping, optional
        One per list, or a mapping from ``retriever_source`` to weight; default 1.

    Returns
    -------
    list of RagHit
        The fused list, best first.

    References
    ----------
    G. V. Cormack, C. L. A. Clarke, S. Buettcher, "Reciprocal rank fusion outperforms Condorcet and
    individual rank learning methods", SIGIR 2009.

    Examples
    --------
    >>> dense = [RagHit(id="a", score=0.95), RagHit(id="b", score=0.90), RagHit(id="c", score=0.70)]
    >>> bm25 = [RagHit(id="b", score=12.0), RagHit(id="d", score=11.0), RagHit(id="a", score=8.0)]
    >>> [hit.id for hit in fuse([dense, bm25], method="rrf")]
    ['b', 'a', 'd', 'c']
    """
    if method not in METHODS:
        raise RetrievalError(
            f"unknown fusion method {method!r}",
            field="fusion.method",
            hint=f"use one of {', '.join(METHODS)}",
        )
    list_weights = _list_weights(lists, weights)
    totals: dict[str, float] = {}
    first: dict[str, RagHit] = {}
    sources: dict[str, list[str]] = {}
    for hits, weight in zip(lists, list_weights, strict=True):
        seen: set[str] = set()
        unique: list[tuple[str, RagHit]] = []
        for index, hit in enumerate(hits):
            key = stable_key(hit, index)
            if key not in seen:
                seen.add(key)
                unique.append((key, hit))
        n = len(unique)
        if n == 0:
            continue
        scores = _scores([hit for _, hit in unique])
        if method == "rrf":
            normalised = rrf_scores(n, k)
        elif method == "rsf":
            normalised = rsf_scores(scores, n)
        elif method == "dbsf":
            normalised = dbsf_scores(scores, n)
        else:
            normalised = dbsf_3sigma_scores(scores, n)
        for (key, hit), value in zip(unique, normalised, strict=True):
            if key not in first:
                first[key] = hit
                totals[key] = 0.0
                sources[key] = []
            totals[key] += weight * float(value)
            if hit.retriever_source and hit.retriever_source not in sources[key]:
                sources[key].append(hit.retriever_source)
    order = sorted(first, key=lambda key: -totals[key])  # sorted() is stable: ties keep first-seen order
    fused: list[RagHit] = []
    for rank, key in enumerate(order, start=1):
        fused.append(
            first[key].model_copy(
                update={
                    "fusion_score": totals[key],
                    "score": totals[key],
                    "rank": rank,
                    "retriever_source": "+".join(sources[key]) or first[key].retriever_source,
                }
            )
        )
    return fused
