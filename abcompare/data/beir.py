"""A BEIR dataset folder (corpus.jsonl, queries.jsonl, qrels/<split>.tsv) loaded as one Dataset."""

from __future__ import annotations

from pathlib import Path

from abcompare.core.errors import DataError
from abcompare.data.annotations import read_annotations
from abcompare.data.corpus import read_corpus
from abcompare.data.dataset import Dataset, assemble
from abcompare.data.queries import read_queries

__all__ = ["load_beir"]


def load_beir(
    folder: str | Path,
    split: str = "test",
    *,
    strict: bool = False,
    name: str | None = None,
    corpus: bool = True,
) -> Dataset:
    """Load a BEIR folder (``corpus.jsonl``, ``queries.jsonl``, ``qrels/<split>.tsv``) as one Dataset.

    Parameters
    ----------
    folder : str or Path
        The BEIR folder.
    split : str
        The qrels split to evaluate.
    strict : bool
        Make queries without judgments an error instead of excluding (and counting) them.
    name : str, optional
        The dataset's name (default: the folder's).
    corpus : bool
        ``False`` skips reading ``corpus.jsonl`` (for evaluating precomputed runs).

    Returns
    -------
    Dataset
        Only judged queries are kept (see ``assemble``); ``excluded_queries`` counts the others.

    Examples
    --------
    >>> from abcompare.examples import example_path
    >>> dataset = load_beir(example_path("hr-docs"))
    >>> len(dataset.queries), len(dataset.corpus), dataset.excluded_queries
    (124, 35, 0)
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
