"""Retrieval variants: chunk a corpus, retrieve with BM25 and/or dense models, fuse, rerank.

Submodules are imported on demand so that importing the package stays cheap (no torch at import time).
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS: dict[str, str] = {
    "Chunk": "abcompare.retrieval.chunking",
    "chunk_document": "abcompare.retrieval.chunking",
    "chunk_corpus": "abcompare.retrieval.chunking",
    "fuse": "abcompare.retrieval.fusion",
    "langchain_retriever": "abcompare.retrieval.langchain",
    "run_variant": "abcompare.retrieval.pipeline",
    "RetrievalCache": "abcompare.retrieval.pipeline",
    "VariantSettings": "abcompare.retrieval.settings",
}

__all__ = list(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'abcompare.retrieval' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
