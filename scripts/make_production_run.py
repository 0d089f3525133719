"""Regenerate configs/runs/hr_docs_production.trec: a stand-in for a production search system's output.

It is BM25 over sentence-packed 600-character chunks with Lucene's classic parameters (k1 0.9, b 0.4),
written as a TREC run, so `configs/precomputed_run.yaml` can show how an external run file is compared.
"""

from __future__ import annotations

from pathlib import Path

from abcompare.data.corpus import read_corpus
from abcompare.data.queries import read_queries
from abcompare.data.runs import run_frame_from_hits, write_run
from abcompare.examples import example_path
from abcompare.retrieval.embedding_cache import default_cache_dir
from abcompare.retrieval.pipeline import run_variant
from abcompare.retrieval.settings import VariantSettings

REPO = Path(__file__).resolve().parents[1]


def main() -> None:
    folder = example_path("hr-docs")
    variant = VariantSettings.model_validate(
        {
            "chunking": {"strategy": "sentence", "size": 600, "overlap": 1},
            "retrievers": {"bm25": {"k1": 0.9, "b": 0.4}},
            "top_k": 20,
            "depth": 20,
        }
    )
    hits = run_variant(
        variant, read_corpus(folder / "corpus.jsonl"), read_queries(folder / "queries.jsonl"),
        cache_dir=default_cache_dir(),
    )  # fmt: skip
    target = REPO / "configs" / "runs" / "hr_docs_production.trec"
    out = write_run(run_frame_from_hits(hits), target, run_name="prod")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
