"""At ``dataset.level: document`` a variant's ``depth`` and ``top_k`` count documents: hits are judged as
documents (each at its best-ranked chunk), so a list of ``top_k`` chunks that are mostly one document's
used to reach fewer than ``top_k`` documents and metrics@k compared lists of unequal depth. Expected
values are computed by hand from a corpus whose BM25 order is plain: document ``a`` repeats the query
term in four chunks, ``b`` holds it once, ``c`` not at all."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from abcompare.config import load_config
from abcompare.core.hits import RagHit
from abcompare.retrieval.pipeline import first_documents, run_variant
from abcompare.retrieval.settings import VariantSettings
from abcompare.runner import run_comparison

APPLE = "apple apple apple. " * 8  # four 40-character chunks, each with the term six times
CORPUS = pd.DataFrame(
    {
        "doc_id": ["a", "b", "c"],
        "title": ["", "", ""],
        "text": [APPLE, "apple pear plum kiwi.", "pear plum kiwi fig."],
    }
)
VARIANT = {
    "chunking": {"strategy": "recursive", "size": 40, "overlap": 0},
    "retrievers": {"bm25": {}},
    "depth": 2,
    "top_k": 2,
}


def test_first_documents_keeps_every_hit_before_the_next_document() -> None:
    hits = [RagHit(id=key) for key in ("a#chunk-1", "a#chunk-0", "b#chunk-0", "a#chunk-2", "c#chunk-0")]
    assert [h.id for h in first_documents(hits, 1)] == ["a#chunk-1", "a#chunk-0"]
    assert [h.id for h in first_documents(hits, 2)] == ["a#chunk-1", "a#chunk-0", "b#chunk-0", "a#chunk-2"]
    assert len(first_documents(hits, 3)) == 5 and first_documents(hits, 9) == hits
    by_field = [RagHit(id="x", document_id="d1"), RagHit(id="y", document_id="d1"), RagHit(id="z")]
    assert [h.id for h in first_documents(by_field, 1)] == ["x", "y"]  # document_id wins over the key


def test_a_variant_counting_documents_returns_top_k_documents(tmp_path: Path) -> None:
    queries = pd.DataFrame({"query_id": ["q"], "text": ["apple"]})
    variant = VariantSettings.model_validate(VARIANT)
    chunk_hits = run_variant(variant, CORPUS, queries, cache_dir=tmp_path)["q"]
    assert len(chunk_hits) == 2 and {h.document_id for h in chunk_hits} == {"a"}  # two chunks, one document
    document_hits = run_variant(variant.counted_in("document"), CORPUS, queries, cache_dir=tmp_path)["q"]
    # a's four chunks (six 'apple' each) outrank b's one; c has no 'apple': documents a, then b
    assert [h.document_id for h in document_hits] == ["a", "a", "a", "a", "b"]
    assert variant.counted_in("chunk") is variant and not variant.counts_documents


def beir(folder: Path) -> Path:
    (folder / "qrels").mkdir(parents=True)
    docs = {
        "a": APPLE, "b": "apple pear plum kiwi.", "c": "pear plum kiwi fig.",
        "d": APPLE.replace("apple", "grape"), "e": "grape melon lime.", "f": "melon lime.",
    }  # fmt: skip
    (folder / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": d, "title": "", "text": t}) + "\n" for d, t in docs.items())
    )
    queries = [{"_id": "q1", "text": "apple"}, {"_id": "q2", "text": "grape"}]
    (folder / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries))
    (folder / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\nq1\ta\t1\nq1\tb\t1\nq2\td\t1\nq2\te\t1\n"
    )
    return folder


@pytest.mark.parametrize("level", ["document", "chunk"])
def test_at_document_level_metrics_at_k_read_k_documents(tmp_path: Path, level: str) -> None:
    """Each query has two relevant documents, the first with four chunks ahead of the second's one. At
    document level, top_k 2 holds both: recall@2 = 2/2 and nDCG@2 = 1 (before: the two chunks were one
    document, recall@2 = 1/2 and nDCG@2 = 1 / (1 + 1/log2(3)) = 0.6131). The config's variants say what
    they count: documents at document level, chunks at chunk level."""
    path = tmp_path / "c.yaml"
    path.write_text(
        f"name: depth\ndataset: {{path: {beir(tmp_path / 'beir')}, level: document}}\n"
        f"control: {json.dumps(VARIANT)}\n"
        "treatments: {t: {retrievers: {bm25: {k1: 1.2}}}}\n"
        "evaluation: {cutoffs: [2], convention: trec}\nsignificance: {n_resamples: 100}\n"
        "efficiency: {repeats: 0}\ntracking: {enabled: false}\n"
    )
    config = load_config(path)
    if level == "chunk":
        config = config.model_copy(update={"dataset": config.dataset.model_copy(update={"level": "chunk"})})
        assert not any(v.counts_documents for v in config.variants().values())
        return
    assert all(v.counts_documents for v in config.variants().values())
    result = run_comparison(config, config_path=path)
    for name in ("control", "t"):
        per_query = result.variants[name].per_query
        assert per_query["recall@2"].tolist() == [1.0, 1.0]
        assert per_query["ndcg@2"].tolist() == pytest.approx([1.0, 1.0])
    run = result.variants["control"].run
    assert run.groupby("query_id")["key"].apply(list).to_dict() == {"q1": ["a", "b"], "q2": ["d", "e"]}
