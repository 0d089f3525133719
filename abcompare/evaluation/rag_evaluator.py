"""The reference library's per-query evaluator, ai4j's ``RagEvaluator`` (the "ai4j" convention),
reproduced exactly for parity.

Binary relevance, repeated keys counted each time, precision over the evaluated depth
``min(top_k, len(hits))``; see docs/evaluation.md for how it differs from the trec convention.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from abcompare.evaluation.gains import discount
from abcompare.evaluation.keys import HitLike, hit_keys, relevant_set


class RagEvaluation(BaseModel):
    """One query's metrics at one depth; field names as in the reference library (ai4j)."""

    model_config = ConfigDict(frozen=True)

    evaluated_at_k: int = 0
    retrieved_count: int = 0
    relevant_count: int = 0
    true_positive_count: int = 0
    precision_at_k: float = 0.0
    recall_at_k: float = 0.0
    f1_at_k: float = 0.0
    mrr: float = 0.0
    ndcg: float = 0.0


def evaluation_from_counts(
    *, k: int, retrieved: int, relevant: int, true_positives: int, precision: float, first_rank: int,
    dcg: float, ideal: float,
) -> RagEvaluation:  # fmt: skip
    """One query's metrics from its counts, the one rule both conventions finish with: recall over the
    relevant ids, F1 of precision and recall, MRR from the first relevant rank (0: none), nDCG = DCG / ideal
    (0 when the ideal is 0)."""
    recall = true_positives / relevant if relevant else 0.0
    return RagEvaluation(
        evaluated_at_k=k,
        retrieved_count=retrieved,
        relevant_count=relevant,
        true_positive_count=true_positives,
        precision_at_k=precision,
        recall_at_k=recall,
        f1_at_k=f1_score(precision, recall),
        mrr=1.0 / first_rank if first_rank else 0.0,
        ndcg=dcg / ideal if ideal > 0 else 0.0,
    )


def f1_score(precision: float, recall: float) -> float:
    """The harmonic mean of precision and recall, 0 when both are 0."""
    total = precision + recall
    return 2.0 * precision * recall / total if total > 0 else 0.0


def evaluation_depth(top_k: int | None, retrieved: int) -> int:
    """The reference evaluator's depth: every hit when ``top_k`` is None or <= 0, else
    ``min(top_k, retrieved)``."""
    return retrieved if top_k is None or top_k <= 0 else min(top_k, retrieved)


class RagEvaluator:
    """Scores one ranked hit list against the annotated relevant ids (ai4j's ``RagEvaluator``)."""

    def evaluate(
        self,
        hits: Sequence[HitLike] | None,
        relevant_ids: Iterable[Any] | None,
        top_k: int | None = None,
    ) -> RagEvaluation:
        """Precision, recall, F1, MRR and nDCG of one ranked list, as ai4j's ``RagEvaluator`` computes them.

        Parameters
        ----------
        hits : sequence of hits, or None
            ``RagHit``, mappings of hit fields or key strings, best first; keys by ``stable_key``.
        relevant_ids : iterable, or None
            The annotated relevant ids (blank ones dropped, stripped).
        top_k : int, optional
            The depth evaluated is ``min(top_k, len(hits))``; every hit when None or <= 0.

        Returns
        -------
        RagEvaluation
            The metrics and counts. Never raises on empty input; a key repeated in the hits counts each
            time it appears, as in ai4j.

        Examples
        --------
        >>> result = RagEvaluator().evaluate(["a", "b", "c", "d"], ["b", "d"], top_k=4)
        >>> result.precision_at_k, result.recall_at_k, result.mrr, round(result.ndcg, 4)
        (0.5, 1.0, 0.5, 0.6509)
        """
        keys = hit_keys(hits)
        relevant = relevant_set(relevant_ids)
        limit = evaluation_depth(top_k, len(keys))
        true_positives = 0
        first_rank = 0
        dcg = 0.0
        for position in range(limit):
            if keys[position] in relevant:
                true_positives += 1
                if first_rank == 0:
                    first_rank = position + 1
                dcg += discount(position)
        ideal = 0.0
        for position in range(min(limit, len(relevant))):
            ideal += discount(position)
        return evaluation_from_counts(
            k=limit, retrieved=len(keys), relevant=len(relevant), true_positives=true_positives,
            precision=true_positives / limit if limit > 0 else 0.0, first_rank=first_rank,
            dcg=dcg, ideal=ideal,
        )  # fmt: skip
