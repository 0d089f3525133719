"""Query planning: more than one query per question, fused into one list before the variant's own fusion.

Two planners, usable together:

- **rewrites** prepared elsewhere (an LLM, a person): a JSONL file of ``{"query_id": ..., "variants": [...]}``
  lines (:func:`read_variants_file`). Each question is retrieved by its original text (unless
  ``include_original: false``) and by every variant (:func:`plan_queries`);
- **RM3** pseudo-relevance feedback on each BM25 retriever (:func:`rm3_ranking`), Anserini's
  ``Rm3Reranker``: a relevance model from the first pass's top ``fb_docs`` chunks, interpolated with the
  original query, then a second BM25 search with the weighted query.

The order of the fusions follows LangChain4j's ``DefaultContentAggregator`` (the Java RAG library's query
transformer → router → aggregator): each query text goes through the variant's retrievers and their
fusion, as if it were the only query, then the texts' lists are fused (``query_planning.fusion``, RRF by
default) by stable key; the rerank (with the original text) and ``top_k`` come last. So the list of one
text is exactly the variant's list for that text, and a planned run equals fusing the per-text runs with
:func:`abcompare.fuse`.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from abcompare.core.errors import AbcompareWarning, ConfigError
from abcompare.core.hits import RagHit
from abcompare.core.vocabulary import plural
from abcompare.retrieval.bm25 import top_rows
from abcompare.retrieval.fusion import fuse
from abcompare.retrieval.rewrites import read_variants_file

if TYPE_CHECKING:
    from abcompare.retrieval.bm25 import BM25Index
    from abcompare.retrieval.settings import QueryPlanningSettings, VariantSettings

ORIGINAL, VARIANT = "original", "variants"


# ------------------------------------------------------------------------------------------ the file
def check_against_queries(
    variants: Mapping[str, VariantSettings], known_ids: Sequence[str], evaluated_ids: Sequence[str]
) -> None:
    """Each variants file against the dataset, before any run opens: a query id the query file does not
    have (``known_ids``) is a :class:`ConfigError` at its line; evaluated queries the file has no variant
    for are retrieved by their original text alone, with one warning naming the file and the count."""
    known = set(known_ids)
    checked: set[Path] = set()
    for settings in variants.values():
        planning = settings.query_planning if settings.run is None else None
        if planning is None or planning.variants is None:
            continue
        file = read_variants_file(planning.variants)
        if file.path in checked:
            continue
        checked.add(file.path)
        for query_id, line in file.lines.items():
            if query_id not in known:
                raise ConfigError(
                    f"unknown query id {query_id!r}: the dataset's query file has no such query",
                    file=file.path,
                    line=line,
                    field="query_id",
                    hint="each line's query_id must be one of the dataset's query ids",
                )
        missing = sum(1 for q in evaluated_ids if not file.rewrites.get(q))
        if missing:
            warnings.warn(
                f"{file.path}: no variants for {plural(missing, 'query')} of {len(evaluated_ids)}: "
                "those are retrieved by their original text alone",
                AbcompareWarning,
                stacklevel=2,
            )


# ------------------------------------------------------------------------------------------ the plan
@dataclass(frozen=True)
class QueryPlan:
    """The texts to retrieve for a query set, grouped by question in query order: question ``i`` is
    texts ``groups[i]``, each an ``original`` or a ``variants`` text (``roles``)."""

    texts: list[str]
    groups: list[range]
    roles: list[str]


def plan_queries(
    planning: QueryPlanningSettings | None, query_ids: Sequence[str], query_texts: Sequence[str]
) -> QueryPlan:
    """Every text to retrieve: without rewrites, the queries themselves; with them, each question's
    original (unless ``include_original`` is false) then its variants in file order; a question without
    variants keeps its original alone."""
    rewrites = planning.rewrites if planning is not None else {}
    texts: list[str] = []
    groups: list[range] = []
    roles: list[str] = []
    for query_id, text in zip(query_ids, query_texts, strict=True):
        variants = list(rewrites.get(query_id, ()))
        start = len(texts)
        if not variants or planning is None or planning.include_original:
            texts.append(text)
            roles.append(ORIGINAL)
        texts += variants
        roles += [VARIANT] * len(variants)
        groups.append(range(start, len(texts)))
    return QueryPlan(texts, groups, roles)


def fuse_query_texts(
    planning: QueryPlanningSettings, lists: Sequence[Sequence[RagHit]], roles: Sequence[str]
) -> list[RagHit]:
    """One question's lists (one per query text) fused by stable key with ``query_planning.fusion``."""
    fusion = planning.fusion
    weights = [(fusion.weights or {}).get(role, 1.0) for role in roles]
    return fuse(lists, method=fusion.method, k=fusion.k, weights=weights)


# ------------------------------------------------------------------------------------------ RM3
_FEEDBACK_TERM = "abcdefghijklmnopqrstuvwxyz0123456789"


def _feedback_term(term: str) -> bool:
    """Anserini's filter on feedback terms: 2 to 20 characters of ``[a-z0-9]``."""
    return 2 <= len(term) <= 20 and all(c in _FEEDBACK_TERM for c in term)


def _pruned(weights: dict[str, float], size: int) -> dict[str, float]:
    """The ``size`` heaviest terms (ties by term, so the choice is reproducible)."""
    return dict(sorted(weights.items(), key=lambda item: (-item[1], item[0]))[:size])


def _unit_l1(weights: dict[str, float]) -> dict[str, float]:
    total = sum(weights.values())
    return {t: w / total for t, w in weights.items()} if total > 0 else {}


def rm3_weights(
    index: BM25Index,
    query_terms: Sequence[str],
    feedback_rows: np.ndarray,
    feedback_scores: np.ndarray,
    planning: QueryPlanningSettings,
) -> dict[str, float]:
    """The expanded query's term weights, as Anserini's ``Rm3Reranker`` computes them.

    q(t) = the query's term counts, L1-normalised. Each feedback chunk's vector is its term frequencies
    (terms that pass the ``[a-z0-9]{2,20}`` filter and occur in at most ``fb_max_df`` of the chunks),
    pruned to its ``fb_terms`` most frequent terms; rm(t) = sum over feedback chunks of
    tf(t, d) / |d|_pruned x score(d) (the first pass's BM25 score), pruned to ``fb_terms`` terms and
    L1-normalised. The weight is original_weight x q(t) + (1 - original_weight) x rm(t).
    """
    counts = index.term_counts
    vocabulary = {term_id: term for term, term_id in index.model.vocab_dict.items()}
    document_frequency = np.bincount(counts.indices, minlength=counts.shape[1])
    relevance: dict[str, float] = {}
    for row, score in zip(feedback_rows, feedback_scores, strict=True):
        start, end = counts.indptr[row], counts.indptr[row + 1]
        vector = {
            vocabulary[int(term_id)]: float(tf)
            for term_id, tf in zip(counts.indices[start:end], counts.data[start:end], strict=True)
            if _feedback_term(vocabulary[int(term_id)])
            and document_frequency[term_id] / index.size <= planning.fb_max_df
        }
        vector = _pruned(vector, planning.fb_terms)
        norm = sum(vector.values())
        if norm <= 0.001:  # Anserini skips a feedback chunk with no usable term
            continue
        for term, tf in vector.items():
            relevance[term] = relevance.get(term, 0.0) + tf / norm * float(score)
    model = _unit_l1(_pruned(relevance, planning.fb_terms))
    query: dict[str, float] = {}
    for term in query_terms:
        query[term] = query.get(term, 0.0) + 1.0
    query = _unit_l1(query)
    weight = planning.original_weight
    return {
        term: weight * query.get(term, 0.0) + (1 - weight) * model.get(term, 0.0)
        for term in dict.fromkeys([*query, *model])
    }


def rm3_ranking(
    index: BM25Index, query_texts: Sequence[str], depth: int, planning: QueryPlanningSettings
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Top ``depth`` rows per query by the RM3-expanded query (:func:`rm3_weights`) over the whole index;
    a query with no first-pass hit keeps its (empty) first-pass answer."""

    first = index.search(query_texts, planning.fb_docs)
    out: list[tuple[np.ndarray, np.ndarray]] = []
    for terms, (rows, scores) in zip(index.analyse(query_texts), first, strict=True):
        if len(rows) == 0:
            out.append((rows, scores))
            continue
        weights = rm3_weights(index, terms, rows, scores, planning)
        out.append(top_rows(index.weighted_scores(weights), min(depth, index.size)))
    return out


def feedback_of(variant: VariantSettings) -> QueryPlanningSettings | None:
    """The variant's RM3 settings, for its BM25 retrievers (None: no expansion)."""
    planning = variant.query_planning
    return planning if planning is not None and planning.expansion == "rm3" else None


def feedback_identity(planning: QueryPlanningSettings | None) -> Any:
    """What of the planning settings decides a BM25 ranking (the RM3 parameters), for memo keys."""
    if planning is None:
        return None
    return planning.model_dump_json(
        include={"expansion", "fb_docs", "fb_terms", "original_weight", "fb_max_df"}
    )
