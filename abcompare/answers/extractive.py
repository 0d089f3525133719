"""The extractive baseline generator: the answer is the hits' sentences that share the most terms with the
question, copied as they are, citing the hits they come from. No model, deterministic: a control whose
answers change only when the retrieval does."""

from __future__ import annotations

import time

from abcompare.answers.generation import GenerationCost
from abcompare.answers.hits import Hit, Query
from abcompare.answers.text import sentences, terms

#: The answer to a query given no hits (there is nothing to extract, and an answer is never empty).
NO_HITS_ANSWER = "No passage was retrieved for this question."


class ExtractiveGenerator:
    """Picks at most ``n_sentences`` sentences from the hits: each sentence scores the number of distinct
    question terms (:func:`~abcompare.answers.text.terms`) it contains; the highest scores win, a tie going
    to the better-ranked hit, then the earlier sentence; sentences scoring 0 are never picked. The picked
    sentences are given in hit rank order, then text order, and the answer cites their hits (in rank
    order). When no sentence shares a term, the answer is the top hit's first sentence, citing it."""

    def __init__(self, n_sentences: int = 2) -> None:
        if n_sentences < 1:
            raise ValueError("n_sentences must be >= 1")
        self.n_sentences = n_sentences
        self.cost = GenerationCost()

    def __call__(self, query: Query, hits: list[Hit]) -> tuple[str, list[str]]:
        started = time.perf_counter()
        try:
            return self._answer(query, hits)
        finally:
            self.cost.calls += 1
            self.cost.seconds += time.perf_counter() - started

    def _answer(self, query: Query, hits: list[Hit]) -> tuple[str, list[str]]:
        asked = terms(query.text)
        candidates = []  # (-score, hit position, sentence position, sentence, hit id)
        for h, hit in enumerate(hits):
            for s, sentence in enumerate(sentences(hit.text)):
                candidates.append((-len(asked & terms(sentence)), h, s, sentence, hit.id))
        if not candidates:
            return NO_HITS_ANSWER, []
        picked = [c for c in sorted(candidates)[: self.n_sentences] if c[0] < 0]
        if not picked:
            picked = [min(candidates, key=lambda c: (c[1], c[2]))]
        picked.sort(key=lambda c: (c[1], c[2]))
        cited = list(dict.fromkeys(c[4] for c in picked))
        return " ".join(c[3] for c in picked), cited
