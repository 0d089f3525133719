"""The standard ("trec") convention for one query: the measures as trec_eval and the literature define them.

Repeated keys count once (first rank), P@k divides by k, RR is cut at k, nDCG@k uses the grades as gains
with a log2 discount and the ideal over the top-k judged grades; binary measures count
``grade >= relevance_threshold``. Scored hits are ordered as trec_eval orders them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from abcompare.core.errors import DataError
from abcompare.core.ranking import first_occurrences, trec_order
from abcompare.evaluation.gains import discount
from abcompare.evaluation.keys import HitLike, graded_ids, hit_keys
from abcompare.evaluation.rag_evaluator import RagEvaluation, evaluation_from_counts

__all__ = ["TrecEvaluator", "first_occurrences", "trec_order"]


class TrecEvaluator:
    """Scores one ranked hit list against graded annotations in the trec convention."""

    def __init__(self, relevance_threshold: float = 1) -> None:
        self.relevance_threshold = relevance_threshold

    def evaluate(
        self,
        hits: Sequence[HitLike] | None,
        annotations: Mapping[Any, Any] | Iterable[Any] | None,
        top_k: int | None = None,
    ) -> RagEvaluation:
        """The trec convention's metrics of one ranked list at cutoff ``top_k``.

        Parameters
        ----------
        hits : sequence of hits, or None
            Best first; a key repeated later counts once, at its first rank.
        annotations : mapping or iterable, or None
            ``{id: grade}`` or an iterable of relevant ids (grade 1).
        top_k : int, optional
            The cutoff k (precision divides by k); every hit when None or <= 0.

        Returns
        -------
        RagEvaluation
            Binary measures count ``grade >= relevance_threshold``; nDCG uses the grades as gains.

        References
        ----------
        trec_eval, https://github.com/usnistgov/trec_eval (``P``, ``recall``, ``ndcg_cut``, ``recip_rank``).

        Examples
        --------
        >>> result = TrecEvaluator().evaluate(["a", "a", "b"], {"a": 1}, top_k=10)
        >>> result.precision_at_k, result.recall_at_k, result.ndcg
        (0.1, 1.0, 1.0)
        """
        try:
            grades = graded_ids(annotations)
        except (TypeError, ValueError) as err:
            raise DataError(f"non-numeric grade ({err})", field="grade", hint="grades are numbers") from err
        keys = first_occurrences(hit_keys(hits))
        threshold = self.relevance_threshold
        k = len(keys) if top_k is None or top_k <= 0 else top_k
        relevant_count = sum(1 for grade in grades.values() if grade >= threshold)
        true_positives = 0
        first_rank = 0
        dcg = 0.0
        for position, key in enumerate(keys[:k]):
            grade = grades.get(key)
            if grade is None:
                continue
            if grade >= threshold:
                true_positives += 1
                if first_rank == 0:
                    first_rank = position + 1
            if grade > 0:
                dcg += grade * discount(position)
        ideal = 0.0
        for position, grade in enumerate(sorted((g for g in grades.values() if g > 0), reverse=True)[:k]):
            ideal += grade * discount(position)
        return evaluation_from_counts(
            k=k, retrieved=len(keys), relevant=relevant_count, true_positives=true_positives,
            precision=true_positives / k if k > 0 else 0.0, first_rank=first_rank, dcg=dcg, ideal=ideal,
        )  # fmt: skip
