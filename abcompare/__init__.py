"""abcompare: did a retrieval change really help? Paired A/B evaluation of search and RAG retrieval.

The public API is imported lazily so that ``abcompare --help`` stays instant.
"""

from __future__ import annotations

import importlib
from typing import Any

from abcompare.core.arrow_memory import choose_before_arrow_starts

choose_before_arrow_starts()  # Arrow's allocator, named before pyarrow starts (abcompare.core.arrow_memory)

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    "RagHit": "abcompare.core.hits",
    "stable_key": "abcompare.core.hits",
    "RagEvaluator": "abcompare.evaluation.rag_evaluator",
    "RagEvaluation": "abcompare.evaluation.rag_evaluator",
    "TrecEvaluator": "abcompare.evaluation.trec",
    "evaluate_run": "abcompare.evaluation.batch",
    "paired_comparison": "abcompare.stats.comparison",
    "queries_needed": "abcompare.stats.power",
    "tuned_comparison": "abcompare.stats.tuning",
    "TunedComparison": "abcompare.stats.tuning",
    "fuse": "abcompare.retrieval.fusion",
    "langchain_retriever": "abcompare.retrieval.langchain",
    "load_comparison": "abcompare.tracking.reader",
    "AbcompareError": "abcompare.core.errors",
    "load_beir": "abcompare.data.beir",
    "read_run": "abcompare.data.runs",
    "write_run": "abcompare.data.runs",
    "read_annotations": "abcompare.data.annotations",
    "read_queries": "abcompare.data.queries",
    "alignment_report": "abcompare.data.alignment",
    "apply_level": "abcompare.data.levels",
    "run_comparison": "abcompare.runner",
    "load_config": "abcompare.config",
}

__all__ = [*_EXPORTS, "__version__"]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'abcompare' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
