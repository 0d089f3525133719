"""How many bytes of weights a variant's models load (the cost's ``model_bytes``): its dense retrievers'
models and a rerank model, each file counted once; BM25 has none.

Which files a model loads is decided once, in ``retrieval.models`` (the files its embedding-cache key
hashes): an embedding model's ``weights`` on its backend, a cross-encoder's ``torch_weights``.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from abcompare.retrieval.models import locate_model, resolve_embedding_model, torch_weights
from abcompare.retrieval.settings import DenseSettings, VariantSettings


def model_bytes(files: Iterable[Path]) -> int:
    """The bytes of these weight files."""
    return sum(Path(p).stat().st_size for p in files)


def variant_model_files(variant: VariantSettings) -> list[Path]:
    """The weight files a variant's models load, once each, in order: its dense retrievers', then its
    rerank's."""
    files: list[Path] = []
    for spec in variant.retrievers.values():
        if isinstance(spec, DenseSettings):
            files += resolve_embedding_model(spec.model, spec.backend).weights
    rerank = variant.rerank
    if rerank is not None and rerank.type == "bi-encoder":
        files += resolve_embedding_model(rerank.model, rerank.backend).weights
    elif rerank is not None:
        files += torch_weights(Path(locate_model(rerank.model)))
    return list(dict.fromkeys(Path(p).resolve() for p in files))


def variant_model_bytes(variant: VariantSettings) -> int:
    """The bytes of every model a variant loads (0 for BM25 alone)."""
    return model_bytes(variant_model_files(variant))
