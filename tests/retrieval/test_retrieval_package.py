"""The retrieval package: lazy exports and no heavy imports until a model is actually used."""

from __future__ import annotations

import subprocess
import sys

import abcompare.retrieval as retrieval
from abcompare.retrieval.fusion import fuse
from abcompare.retrieval.pipeline import RetrievalCache, run_variant


def test_package_exports_resolve_lazily():
    assert retrieval.fuse is fuse
    assert retrieval.run_variant is run_variant
    assert retrieval.RetrievalCache is RetrievalCache


def test_importing_the_retrieval_modules_does_not_import_torch_or_bm25s():
    code = (
        "import sys, abcompare.retrieval.pipeline, abcompare.retrieval.rerank; "
        "print(sorted(m for m in ('torch', 'sentence_transformers', 'bm25s') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
