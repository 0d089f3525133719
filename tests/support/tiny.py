"""A few documents of the shipped example (hr-docs) as a comparison's data: for the tests whose point is
what happens around the encoding (a killed encoder restarted, or failing the run in one line), not the
corpus. Its chunks are the example's own (same documents, same chunking), so a warm embedding cache holds
them already; a cold cache encodes a tenth of the example."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable
from pathlib import Path

from abcompare.examples import example_path

#: The example's documents with the most annotated chunks (four of its 35): 28 annotated queries.
DOCUMENTS = ("expense-reimbursement", "it-equipment", "working-hours-overtime", "vpn-remote-access")


def tiny_hr_docs(folder: Path, documents: Iterable[str] = DOCUMENTS) -> tuple[str, ...]:
    """Write ``documents`` of hr-docs, the chunk-level annotations of their chunks and the queries those
    annotate into ``folder``; return the ``--set`` values that point a config on hr-docs at them."""
    keep = set(documents)
    source = example_path("hr-docs")
    folder.mkdir(parents=True, exist_ok=True)
    corpus, annotations, queries = folder / "corpus.jsonl", folder / "qrels.tsv", folder / "queries.jsonl"
    lines = (source / "corpus.jsonl").read_text(encoding="utf-8").splitlines()
    kept = [line for line in lines if json.loads(line)["_id"] in keep]
    assert len(kept) == len(keep), f"not in hr-docs: {sorted(keep - {json.loads(x)['_id'] for x in kept})}"
    corpus.write_text("\n".join(kept) + "\n", encoding="utf-8")
    with (source / "qrels" / "test.chunks.tsv").open(encoding="utf-8", newline="") as handle:
        header, *rows = list(csv.reader(handle, delimiter="\t"))
    rows = [row for row in rows if row[1].split("#", 1)[0] in keep]  # a chunk id is document#chunk-N
    annotations.write_text("\n".join("\t".join(row) for row in [header, *rows]) + "\n", encoding="utf-8")
    annotated = {row[0] for row in rows}
    lines = (source / "queries.jsonl").read_text(encoding="utf-8").splitlines()
    queries.write_text(
        "\n".join(x for x in lines if json.loads(x)["_id"] in annotated) + "\n", encoding="utf-8"
    )
    return (f"dataset.corpus={corpus}", f"dataset.annotations={annotations}", f"dataset.queries={queries}")
