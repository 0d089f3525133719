"""run_variant with BM25: hit fields and offsets, Lucene BM25 scores, fusion of lists, memoisation."""

from __future__ import annotations

import math
import re
from collections import Counter

import pandas as pd
import pytest

from abcompare.core.errors import RetrievalError
from abcompare.retrieval.pipeline import RetrievalCache, run_variant, run_variant_with_cost
from abcompare.retrieval.settings import VariantSettings

CORPUS = pd.DataFrame(
    {
        "doc_id": ["expenses", "leave", "travel", "it"],
        "title": ["Expenses", "Leave", "", "IT"],
        "text": [
            "Submit receipts for every expense within thirty days. Meals are reimbursed up to a daily limit.",
            "Annual leave is requested in the HR portal. Sick leave needs a note after three days.",
            "Book travel through the agency. Economy class for flights under six hours.",
            "Laptops are replaced every four years. Report a lost laptop to security at once.",
        ],
    }
)
QUERIES = pd.DataFrame({"query_id": ["q1", "q2", "q3"], "text": ["lost laptop", "receipts meals", "the of"]})

PLAIN_BM25 = {"stemmer": None, "stopwords": None}


def variant(**overrides):
    data = {"chunking": {"strategy": "none"}, "retrievers": {"bm25": PLAIN_BM25}}
    data.update(overrides)
    return VariantSettings.model_validate(data)


def lucene_bm25(query: str, docs: list[str], k1=1.5, b=0.75) -> list[float]:
    """Reference Lucene BM25 (idf = ln(1 + (N - df + .5)/(df + .5)), tf / (tf + k1 (1 - b + b dl/avgdl)))."""
    tokenize = lambda s: re.findall(r"\b\w\w+\b", s.lower())  # noqa: E731
    toks = [tokenize(d) for d in docs]
    avgdl = sum(map(len, toks)) / len(toks)
    scores = []
    for doc in toks:
        tf = Counter(doc)
        total = 0.0
        for term in set(tokenize(query)):
            df = sum(term in d for d in toks)
            if df == 0:
                continue
            idf = math.log(1 + (len(toks) - df + 0.5) / (df + 0.5))
            total += idf * tf[term] / (tf[term] + k1 * (1 - b + b * len(doc) / avgdl))
        scores.append(total)
    return scores


def test_bm25_scores_match_a_reference_lucene_bm25(tmp_path):
    result = run_variant(variant(), CORPUS, QUERIES, cache_dir=tmp_path, cache=RetrievalCache())
    docs = [f"{t}\n{x}" for t, x in zip(CORPUS["title"], CORPUS["text"], strict=True)]
    for query_id, text in zip(QUERIES["query_id"], QUERIES["text"], strict=True):
        expected = lucene_bm25(text, docs)
        got = {h.document_id: h.score for h in result[query_id]}
        want = {d: s for d, s in zip(CORPUS["doc_id"], expected, strict=True) if s > 0}
        assert got == pytest.approx(want, rel=1e-5)
    assert [h.document_id for h in result["q1"]] == ["it"]


def test_hits_carry_chunk_ids_offsets_title_and_source(tmp_path):
    data = {"chunking": {"size": 60, "overlap": 10}, "retrievers": {"bm25": PLAIN_BM25}, "top_k": 3}
    result = run_variant(VariantSettings.model_validate(data), CORPUS, QUERIES, cache_dir=tmp_path)
    hits = result["q1"]
    assert 1 <= len(hits) <= 3
    texts = dict(zip(CORPUS["doc_id"], CORPUS["text"], strict=True))
    for rank, hit in enumerate(hits, start=1):
        assert hit.rank == rank and hit.retriever_source == "bm25"
        assert hit.id == f"{hit.document_id}#chunk-{hit.chunk_index}"
        start, end = hit.metadata["start"], hit.metadata["end"]
        assert hit.content == texts[hit.document_id][start:end]
        assert hit.retrieval_score == hit.score and hit.fusion_score is None
    # by hand: words packed to 60 chars give "Laptops ... lost laptop" [0, 59) and, carrying back
    # " laptop" (7 <= 10), "laptop to security at once." [53, 80); only these contain the query words
    assert [(h.id, h.metadata["start"], h.metadata["end"]) for h in hits] == [
        ("it#chunk-0", 0, 59),
        ("it#chunk-1", 53, 80),
    ]
    assert hits[0].metadata["title"] == "IT"


def test_no_chunking_keeps_chunk_zero_ids_and_stopword_only_queries_get_no_hits(tmp_path):
    result = run_variant(
        variant(retrievers={"bm25": {}}), CORPUS, QUERIES, cache_dir=tmp_path, cache=RetrievalCache()
    )
    assert list(result) == ["q1", "q2", "q3"]
    assert result["q2"][0].id == "expenses#chunk-0"
    assert result["q3"] == []


def rsf_by_hand(lists: list[list], weights: list[float]) -> list[tuple[str, float]]:
    """docs/retrieval.md's RSF, written out: each list's scores min-max normalised (1/rank when a list has
    no spread), weighted and summed per id, best first (ties: first seen)."""
    fused: dict[str, float] = {}
    for hits, weight in zip(lists, weights, strict=True):
        scores = [h.score for h in hits]
        low, high = min(scores), max(scores)
        for rank, (hit, score) in enumerate(zip(hits, scores, strict=True), start=1):
            normalised = (score - low) / (high - low) if high > low else 1 / rank
            fused[hit.id] = fused.get(hit.id, 0.0) + weight * normalised
    return sorted(fused.items(), key=lambda pair: -pair[1])


def test_two_retrievers_are_fused_as_the_documented_rsf(tmp_path):
    memo = RetrievalCache()
    first = {"type": "bm25", **PLAIN_BM25}
    second = {"type": "bm25", "k1": 0.9, "b": 0.4}
    queries = pd.DataFrame(  # each matches three or four documents: scores with a spread to normalise
        {
            "query_id": ["m1", "m2"],
            "text": ["leave days for a lost laptop", "receipts for every travel agency"],
        }
    )
    fused = run_variant(
        variant(retrievers={"a": first, "b": second}, fusion={"method": "rsf", "weights": {"b": 2.0}}),
        CORPUS,
        queries,
        cache_dir=tmp_path,
        cache=memo,
    )
    only_a = run_variant(variant(retrievers={"a": first}), CORPUS, queries, cache_dir=tmp_path, cache=memo)
    only_b = run_variant(variant(retrievers={"b": second}), CORPUS, queries, cache_dir=tmp_path, cache=memo)
    for query_id in ["m1", "m2"]:
        lists = [only_a[query_id], only_b[query_id]]
        assert all(len(hits) >= 3 for hits in lists)  # real min-max normalisation, not the 1/rank fallback
        expected = rsf_by_hand(lists, [1.0, 2.0])
        got = [(h.id, h.fusion_score) for h in fused[query_id]]
        assert got == [(i, pytest.approx(s, rel=1e-12)) for i, s in expected]


def test_a_fusion_only_change_reuses_chunks_and_indexes(tmp_path):
    memo = RetrievalCache()
    retrievers = {"a": {"type": "bm25"}, "b": {"type": "bm25", "k1": 1.0}}
    run_variant(
        variant(retrievers=retrievers, fusion={"method": "rrf"}),
        CORPUS,
        QUERIES,
        cache_dir=tmp_path,
        cache=memo,
    )
    builds = memo.builds
    assert builds == 5  # chunks + two indexes + each retriever's hits for the queries
    run_variant(
        variant(retrievers=retrievers, fusion={"method": "dbsf"}),
        CORPUS,
        QUERIES,
        cache_dir=tmp_path,
        cache=memo,
    )
    assert memo.builds == builds
    run_variant(
        variant(retrievers=retrievers, fusion={"method": "rrf"}, chunking={"size": 50, "overlap": 0}),
        CORPUS,
        QUERIES,
        cache_dir=tmp_path,
        cache=memo,
    )
    assert memo.builds == builds + 5


def test_a_variant_is_charged_the_cost_of_what_it_reuses(tmp_path):
    memo = RetrievalCache()
    retrievers = {"a": {"type": "bm25"}, "b": {"type": "bm25", "k1": 1.0}}
    _, first = run_variant_with_cost(
        variant(retrievers=retrievers, fusion={"method": "rrf"}),
        CORPUS,
        QUERIES,
        cache_dir=tmp_path,
        cache=memo,
    )
    builds = memo.builds
    _, second = run_variant_with_cost(
        variant(retrievers=retrievers, fusion={"method": "dbsf"}),
        CORPUS,
        QUERIES,
        cache_dir=tmp_path,
        cache=memo,
    )
    assert memo.builds == builds  # nothing was built again ...
    assert second.index_seconds == first.index_seconds > 0  # ... but the index is still what it costs
    assert second.parts == first.parts and set(first.parts) == {"a", "b"}
    assert second.index_bytes == first.index_bytes > 0
    assert first.queries == len(QUERIES) and first.seconds_per_query > 0
    assert set(first.as_metrics()) == {  # the latency people read is timed apart (retrieval.latency)
        "efficiency.index_seconds",
        "efficiency.embedding_seconds",
        "efficiency.index_bytes",
        "efficiency.model_bytes",
        "efficiency.embedded_chunks",
        "efficiency.encoded_chunks",
    }  # no encoding rate: BM25 encodes nothing


def test_top_k_and_depth_cut_the_lists(tmp_path):
    queries = pd.DataFrame({"query_id": ["q"], "text": ["leave laptop travel receipts"]})
    assert len(run_variant(variant(top_k=2), CORPUS, queries, cache_dir=tmp_path)["q"]) == 2
    assert len(run_variant(variant(depth=1), CORPUS, queries, cache_dir=tmp_path)["q"]) == 1


def test_a_run_file_variant_is_refused_with_a_hint(tmp_path):
    with pytest.raises(RetrievalError, match="precomputed run"):
        run_variant(
            VariantSettings.model_validate({"run": {"path": "x.trec"}}), CORPUS, QUERIES, cache_dir=tmp_path
        )


def test_missing_columns_are_a_retrieval_error(tmp_path):
    with pytest.raises(RetrievalError, match="query_id"):
        run_variant(variant(), CORPUS, pd.DataFrame({"text": ["x"]}), cache_dir=tmp_path)


def test_an_empty_corpus_is_a_retrieval_error(tmp_path):
    empty = pd.DataFrame({"doc_id": [], "title": [], "text": []})
    with pytest.raises(RetrievalError, match="no documents"):
        run_variant(variant(), empty, QUERIES, cache_dir=tmp_path, cache=RetrievalCache())
