"""RM3 on the classic test collections: BM25 against BM25 + RM3 (Anserini's defaults: 10 feedback documents,
10 terms, original query weight 0.5; BM25 with Anserini's k1 = 0.9, b = 0.4), on Cranfield and CISI
(BEIR layout, document level, trec convention, one chunk per document), as abcompare compares them: the
means and the paired permutation test's verdict on nDCG@10. Prints the Markdown table that
docs/retrieval.md shows ("RM3 on Cranfield and CISI").

    python scripts/rm3_cranfield.py [--datasets /work/shared/datasets]
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

COLLECTIONS = ("cranfield", "cisi")
SHOWN = ("ndcg@10", "precision@30", "recall@100")
BM25 = {"k1": 0.9, "b": 0.4, "stemmer": "english", "stopwords": "en"}
RM3 = {"expansion": "rm3", "fb_docs": 10, "fb_terms": 10, "original_weight": 0.5}


def default_datasets() -> Path:
    """The shared collections: ``$ABCOMPARE_SHARED_DIR/datasets``, else ``../shared/datasets`` beside the
    checkout."""
    shared = os.environ.get("ABCOMPARE_SHARED_DIR")
    return (
        Path(shared) / "datasets" if shared else Path(__file__).resolve().parents[2] / "shared" / "datasets"
    )


def compare(folder: Path):
    """The comparison of BM25 (control) and BM25 + RM3 on one BEIR folder (no MLflow)."""
    from abcompare.config import ExperimentConfig
    from abcompare.runner import run_comparison

    config = ExperimentConfig.model_validate(
        {
            "name": f"rm3-{folder.name}",
            "dataset": {"path": str(folder), "level": "document"},
            "control": {"chunking": {"strategy": "none"}, "retrievers": {"bm25": BM25}, "top_k": 100},
            "treatments": {"rm3": {"chunking": {"strategy": "none"}, "retrievers": {"bm25": BM25},
                                   "top_k": 100, "query_planning": RM3}},
            "evaluation": {"cutoffs": [10, 30, 100], "metrics": ["precision", "recall", "ndcg"],
                           "convention": "trec", "primary_metric": "ndcg@10"},
            "significance": {"n_resamples": 10000, "seed": 0},
            "tracking": {"enabled": False},
        }
    )  # fmt: skip
    return run_comparison(config)


def table_lines(datasets: Path) -> list[str]:
    """The Markdown table: per collection and metric, BM25's mean, BM25 + RM3's, the relative change, and
    the verdict on nDCG@10 (the primary metric) with its p-value."""
    lines = [
        "| collection | queries | metric | BM25 | BM25 + RM3 | change | verdict (nDCG@10) |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name in COLLECTIONS:
        result = compare(datasets / name)
        control, rm3 = result.variants["control"].means, result.variants["rm3"].means
        row = result.comparison[
            (result.comparison["treatment"] == "rm3") & (result.comparison["role"] == "primary")
        ].iloc[0]
        verdict = f"{row['verdict']}, p = {row['p_adjusted']:.3f}"
        for i, metric in enumerate(SHOWN):
            change = (rm3[metric] - control[metric]) / control[metric]
            first = (name.capitalize() if name == "cranfield" else name.upper(), str(result.n_queries))
            lead = first if i == 0 else ("", "")
            cells = [*lead, metric, f"{control[metric]:.4f}", f"{rm3[metric]:.4f}", f"{change:+.1%}",
                     verdict if i == 0 else ""]  # fmt: skip
            lines.append("| " + " | ".join(cells) + " |")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--datasets", type=Path, default=default_datasets())
    args = parser.parse_args(argv)
    print("\n".join(table_lines(args.datasets)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
