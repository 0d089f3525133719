"""A Python retriever as a treatment: a complete, runnable example on the shipped hr-docs corpus.

    python examples/python_retriever/run.py

``config.yaml`` (beside this file) names the treatment's retriever ``overlap``; this script defines it,
hands it to :func:`abcompare.run_comparison` and reads the verdict from the result. Replace
``overlap_retriever`` with a call to your own search service: it gets the queries table and returns each
query's ranked hits, best first.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pandas as pd

from abcompare import load_config, run_comparison
from abcompare.examples import example_path

HERE = Path(__file__).resolve().parent
WORD = re.compile(r"[a-z0-9]+")


def words(text: str) -> list[str]:
    return WORD.findall(text.lower())


def load_documents() -> dict[str, Counter]:
    """The shipped corpus (a BEIR ``corpus.jsonl``), each document as its word counts."""
    documents = {}
    with open(example_path("hr-docs") / "corpus.jsonl", encoding="utf-8") as lines:
        for line in lines:
            doc = json.loads(line)
            documents[doc["_id"]] = Counter(words(f"{doc.get('title', '')} {doc['text']}"))
    return documents


def overlap_retriever(queries: pd.DataFrame) -> dict[str, list[dict]]:
    """The treatment: rank documents by how many of the query's words they contain (a stand-in for your
    service). ``queries`` has ``query_id`` and ``text``; each query gets its top 10 as ``{"id", "rank"}``
    (a rank, not a score: equal scores would be reordered by the evaluator's own tie rule)."""
    documents = load_documents()
    ranked = {}
    for query_id, text in zip(queries["query_id"], queries["text"], strict=True):
        terms = set(words(text))
        scores = {doc_id: float(sum(counts[t] > 0 for t in terms)) for doc_id, counts in documents.items()}
        best = sorted(scores, key=lambda doc_id: (-scores[doc_id], doc_id))[:10]  # ties: by id, stated
        ranked[query_id] = [{"id": doc_id, "rank": rank} for rank, doc_id in enumerate(best, start=1)]
    return ranked


def main() -> dict[str, object]:
    config = load_config(HERE / "config.yaml")
    result = run_comparison(config, retrievers={"overlap": overlap_retriever})
    # The verdict is a row of the comparison table: one row per (treatment, metric); the primary metric's
    # row decides. ``ci_low``/``ci_high`` is the interval at the level the verdict uses; ``p_adjusted``
    # the p-value the verdict reads.
    table = result.comparison
    row = table[(table["treatment"] == "overlap") & (table["role"] == "primary")].iloc[0]
    verdict = {
        "metric": row["metric"],
        "verdict": row["verdict"],
        "delta": float(row["delta"]),
        "ci": (float(row["ci_low"]), float(row["ci_high"])),
        "p_adjusted": float(row["p_adjusted"]),
    }
    print(
        f"overlap vs BM25 on {verdict['metric']}: {verdict['verdict']}, delta {verdict['delta']:+.3f} "
        f"[{verdict['ci'][0]:.3f}, {verdict['ci'][1]:.3f}], p = {verdict['p_adjusted']:.4f}"
    )
    return verdict


if __name__ == "__main__":
    main()
