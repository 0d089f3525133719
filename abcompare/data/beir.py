"""A BEIR dataset folder (corpus.jsonl, queries.jsonl, qrels/<split>.tsv) loaded as one Dataset."""

from __future__ import annotations

from pathlib import Path

from abcompare.data.annotations import read_annotations
from abcompare.data.corpus import read_corpus
from abcompare.data.dataset import Dataset, assemble
from abcompare.data.queries import read_queries
from abcompare.errors import DataError

__all__ = ["load_beir"]


def load_beir(
    folder: str | Path,
    split: str = "test",
    *,
    strict: bool = False,
    name: str | None = None,
    corpus: bool = True,
) -> Dataset:
    """Load a BEIR folder; only queries judged in ``qrels/<split>.tsv`` are kept (see ``assemble``).

    ``corpus=False`` skips reading ``corpus.jsonl`` (for evaluating precomputed runs).
    """
    root = Path(folder)
    if not root.is_dir():
        raise DataError(
            "BEIR dataset folder not found",
            file=root,
            hint="give a folder with corpus.jsonl, queries.jsonl and qrels/<split>.tsv",
        )
    qrels = root / "qrels" / f"{split}.tsv"
    if not qrels.exists():
        available = (
            sorted(p.stem for p in (root / "qrels").glob("*.tsv")) if (root / "qrels").is_dir() else []
        )
        raise DataError(
            f"no qrels for split {split!r}",
            file=qrels,
            hint=f"available splits: {', '.join(available) or 'none'}",
        )
    docs = read_corpus(root / "corpus.jsonl") if corpus else None
    return assemble(
        name or root.name,
        read_queries(root / "queries.jsonl"),
        read_annotations(qrels, fmt="beir"),
        corpus=docs,
        source=root,
        strict=strict,
        annotation_file=qrels,
    )
