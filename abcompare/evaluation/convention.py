"""A scoring convention's rules, written once: each hit's gain, a list's depth, the ideal ranking and DCG,
and the one division rule (x / 0 = 0). Scoring (``batch``), attribution and the unjudged-hit range read
them from here, so the three agree by construction and not by copying.

- ``ai4j``: ai4j's ``RagEvaluator``: binary gains (1 for a relevant hit), precision over ``min(k, hits)``,
  the ideal DCG over ``min(depth, relevant)`` unit gains;
- ``trec``: trec_eval's: a hit's grade is its gain (grades above 0), precision over ``k``, the ideal DCG
  over the top ``k`` of the query's positive grades, best first.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from abcompare.core.errors import ConfigError
from abcompare.evaluation.gains import discounts

ConventionName = Literal["ai4j", "trec"]
CONVENTIONS: tuple[str, ...] = ("ai4j", "trec")


def ratio_or_zero(
    numerator: np.ndarray | float, denominator: np.ndarray | float, where: np.ndarray | None = None
) -> np.ndarray:
    """``numerator / denominator`` as float64, broadcast; 0 where the denominator is not positive (or not
    ``where``): a measure with nothing to divide by is 0, in every convention."""
    numerator = np.asarray(numerator, dtype=np.float64)
    denominator = np.asarray(denominator, dtype=np.float64)
    mask = denominator > 0
    if where is not None:
        mask = mask & where
    out = np.zeros(np.broadcast_shapes(numerator.shape, denominator.shape, mask.shape), dtype=np.float64)
    np.divide(numerator, denominator, out=out, where=mask)
    return out


def ideal_ranking(query: np.ndarray, grade: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every query's positive grades, best first: ``(query, 0-based position, grade)``, grouped by query
    (ascending code). ``query`` and ``grade`` are each judged (query, id) once."""
    positive = grade > 0
    query, grade = query[positive], grade[positive]
    order = np.lexsort((-grade, query))
    query, grade = query[order], grade[order]
    starts = np.searchsorted(query, query, side="left")
    return query, np.arange(query.size, dtype=np.int64) - starts, grade


@dataclass(frozen=True)
class Convention:
    """One convention's gain, depth and ideal DCG (see the module docstring)."""

    name: ConventionName

    @classmethod
    def named(cls, name: str) -> Convention:
        """The convention called ``name``; another name is a :class:`ConfigError`."""
        if name not in CONVENTIONS:
            raise ConfigError(f"unknown convention {name!r}", field="convention", hint="use 'ai4j' or 'trec'")
        return cls(name)  # type: ignore[arg-type]

    @property
    def binary(self) -> bool:
        """Whether a relevant hit's gain is 1 (ai4j) rather than its grade (trec)."""
        return self.name == "ai4j"

    @property
    def counts_repeats(self) -> bool:
        """Whether a key retrieved twice counts twice (ai4j, hits as given) or once (trec_eval)."""
        return self.name == "ai4j"

    def gain(self, grade: np.ndarray, relevant: np.ndarray) -> np.ndarray:
        """Each hit's gain (before its discount): 1.0 for a relevant hit, or its grade when above 0."""
        if self.binary:
            return relevant.astype(np.float64)
        return np.where(grade > 0, grade, 0.0)

    def unjudged_gain(self, top_grade: float) -> float:
        """The gain an unjudged hit would have if judged relevant at ``top_grade``."""
        return 1.0 if self.binary else top_grade

    def depth(self, cutoff: int, retrieved: np.ndarray | int) -> np.ndarray:
        """Precision's denominator at ``cutoff``: ``min(cutoff, hits)`` (ai4j) or ``cutoff`` (trec)."""
        if self.binary:
            return np.minimum(cutoff, retrieved)
        return np.full(np.shape(retrieved), cutoff, dtype=np.int64)

    def ideal_dcg(
        self,
        cutoff: int,
        depth: np.ndarray,
        relevant: np.ndarray,
        ideal: tuple[np.ndarray, np.ndarray, np.ndarray],
        n_queries: int,
    ) -> np.ndarray:
        """Each query's ideal DCG at ``cutoff``: ai4j's over ``min(depth, relevant)`` unit gains; trec's over
        the top ``cutoff`` of ``ideal`` (:func:`ideal_ranking`)."""
        if self.binary:
            return np.concatenate(([0.0], np.cumsum(discounts(cutoff))))[np.minimum(depth, relevant)]
        query, position, grade = ideal
        top = position < cutoff
        return np.bincount(
            query[top], weights=grade[top] * discounts(cutoff)[position[top]], minlength=n_queries
        )

    def ideal_dcg_with_more(
        self,
        more: np.ndarray,
        cutoff: int,
        depth: int,
        relevant: int,
        positive: list[float],
        top_grade: float,
    ) -> np.ndarray:
        """One query's ideal DCG at ``cutoff`` for each count in ``more`` of further relevant hits (graded
        ``top_grade``): ai4j's over ``min(depth, relevant + more)`` unit gains; trec's over the top
        ``cutoff`` of its positive grades (``positive``, best first) with the new ones first."""
        table = discounts(max(cutoff, 1) + 1)
        if self.binary:
            return np.concatenate(([0.0], np.cumsum(table)))[np.minimum(depth, relevant + more)]
        out = np.empty(more.size)
        for j, extra in enumerate(more):
            gains = np.array([top_grade] * int(extra) + list(positive))[:cutoff]
            out[j] = float((gains * table[: gains.size]).sum())
        return out
