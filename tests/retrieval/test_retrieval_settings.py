"""Variant settings: defaults, type inference by retriever name, cross-field checks, JSON schema."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from abcompare.retrieval.settings import (
    BM25Settings,
    ChunkingSettings,
    DenseSettings,
    FusionSettings,
    RerankSettings,
    VariantSettings,
)


def test_defaults_match_the_contract():
    assert ChunkingSettings().model_dump() == {"strategy": "recursive", "size": 1000, "overlap": 200}
    assert BM25Settings().model_dump() == {
        "type": "bm25",
        "k1": 1.5,
        "b": 0.75,
        "method": "lucene",
        "stemmer": "english",
        "stopwords": "en",
    }
    dense = DenseSettings()
    assert (dense.model, dense.batch_size, dense.max_seq_length) == ("all-MiniLM-L6-v2", 64, None)
    assert FusionSettings().model_dump() == {"method": "rrf", "k": 60, "weights": None}
    assert (RerankSettings().top_n, RerankSettings().batch_size) == (20, 32)
    variant = VariantSettings(retrievers={"bm25": {}})
    assert (variant.depth, variant.top_k, variant.fusion, variant.rerank, variant.run) == (
        100,
        100,
        None,
        None,
        None,
    )


def test_retriever_type_is_inferred_from_the_names_bm25_and_dense():
    variant = VariantSettings.model_validate(
        {
            "retrievers": {"bm25": {"k1": 1.2}, "dense": {}, "e5": {"type": "dense", "model": "x"}},
            "fusion": {},
        }
    )
    assert isinstance(variant.retrievers["bm25"], BM25Settings)
    assert variant.retrievers["bm25"].k1 == 1.2
    assert isinstance(variant.retrievers["dense"], DenseSettings)
    assert variant.retrievers["e5"].model == "x"


def test_other_retriever_names_need_a_type():
    with pytest.raises(ValidationError, match="needs a 'type'"):
        VariantSettings.model_validate({"retrievers": {"lexical": {"k1": 1.0}}})


def test_two_retrievers_need_fusion():
    with pytest.raises(ValidationError, match="fusion"):
        VariantSettings.model_validate({"retrievers": {"bm25": {}, "dense": {}}})


def test_fusion_weights_must_name_retrievers():
    with pytest.raises(ValidationError, match="unknown retrievers"):
        VariantSettings.model_validate(
            {"retrievers": {"bm25": {}, "dense": {}}, "fusion": {"weights": {"sparse": 1.0}}}
        )


def test_a_variant_needs_retrievers_or_a_run():
    with pytest.raises(ValidationError, match="at least one retriever"):
        VariantSettings.model_validate({})
    variant = VariantSettings.model_validate({"run": {"path": "runs/prod.trec"}})
    assert variant.retrievers == {} and variant.run.format == "auto"


@pytest.mark.parametrize(
    "bad",
    [
        {"chunking": {"size": 100, "overlap": 100}},
        {"chunking": {"strategy": "semantic"}},
        {"chunking": {"size": 0}},
        {"depth": 0},
        {"retrievers": {"bm25": {"k2": 1}}},
        {"retrievers": {"bm25": {"b": 1.5}}},
        {"unknown": 1},
        {"fusion": {"method": "combsum"}},
    ],
)
def test_invalid_values_and_unknown_keys_are_rejected(bad):
    data = {"retrievers": {"bm25": {}}, **bad}
    with pytest.raises(ValidationError):
        VariantSettings.model_validate(data)


def test_json_schema_has_descriptions_for_every_variant_field():
    schema = VariantSettings.model_json_schema()
    assert all("description" in prop for prop in schema["properties"].values())
    assert schema["additionalProperties"] is False
