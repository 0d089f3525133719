"""The data stage of an experiment: turn the config's dataset settings into one Dataset."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from abcompare.core.errors import DataError
from abcompare.data.annotations import read_annotation_files, read_spans
from abcompare.data.corpus import read_corpus
from abcompare.data.dataset import Dataset, assemble
from abcompare.data.queries import read_queries
from abcompare.examples import example_path

if TYPE_CHECKING:  # the config's type, named for checkers: data does not import config
    from abcompare.config.models import DatasetSettings

__all__ = ["load_dataset_for_experiment", "query_file_ids"]


def _folder(settings: DatasetSettings) -> Path | None:
    if settings.path is not None:
        return Path(settings.path)
    if settings.name is not None and (settings.queries is None or settings.annotations is None):
        return example_path(settings.name)
    return None


def _spans_file(settings: DatasetSettings, folder: Path | None) -> Path | None:
    if settings.spans is not None:
        return Path(settings.spans)
    if folder is None:
        return None
    for candidate in (folder / "spans" / f"{settings.split}.jsonl", folder / "spans.jsonl"):
        if candidate.exists():
            return candidate
    return None


def _qrels_file(settings: DatasetSettings, folder: Path | None) -> Path | None:
    """The folder's qrels for the split; at chunk level, chunk-level qrels (``<split>.chunks.tsv``) win
    when the dataset ships them (the hr-docs example does)."""
    if folder is None:
        return None
    chunk_level = folder / "qrels" / f"{settings.split}.chunks.tsv"
    if settings.level == "chunk" and chunk_level.exists():
        return chunk_level
    return folder / "qrels" / f"{settings.split}.tsv"


def load_dataset_for_experiment(settings: DatasetSettings, *, unjudged_queries: bool = False) -> Dataset:
    """Queries, annotations (BEIR qrels of ``split`` or an override), corpus and spans as one Dataset.

    ``settings`` is ``abcompare.config.DatasetSettings``; file overrides win over the folder's files;
    ``max_queries`` keeps the first N annotated queries. ``unjudged_queries`` keeps the queries nobody
    judged too (for pooling, where they are the largest holes); a comparison never evaluates them.
    """
    folder = _folder(settings)
    if folder is not None and not folder.is_dir():
        raise DataError(
            "dataset folder not found",
            file=folder,
            field="dataset.path",
            hint="give a folder with corpus.jsonl, queries.jsonl and qrels/<split>.tsv",
        )
    queries_file = settings.queries or (folder / "queries.jsonl" if folder else None)
    annotations_file = settings.annotations or _qrels_file(settings, folder)
    corpus_file = settings.corpus or (folder / "corpus.jsonl" if folder else None)
    if queries_file is None or annotations_file is None:
        raise DataError(
            "the dataset needs queries and annotations",
            field="dataset",
            hint="give a BEIR folder 'path', a builtin 'name', or 'queries' + 'annotations'",
        )
    corpus = None
    if corpus_file is not None and (settings.corpus is not None or Path(corpus_file).exists()):
        corpus = read_corpus(corpus_file)
    spans_file = _spans_file(settings, folder) if settings.level == "span" else None
    annotation_files = annotations_file if isinstance(annotations_file, list) else [annotations_file]
    dataset = assemble(
        settings.collection_name,  # the one rule that names a collection (its settings')
        read_queries(queries_file),
        read_annotation_files(annotation_files),
        corpus=corpus,
        spans=read_spans(spans_file) if spans_file is not None else None,
        source=folder or Path(queries_file),
        strict=settings.strict,
        annotation_file=", ".join(str(f) for f in annotation_files),
        annotation_files=tuple(Path(f) for f in annotation_files),
        judged_by="spans" if settings.level == "span" else "annotations",
        unjudged_queries=unjudged_queries,
    )
    if settings.max_queries is not None:
        dataset = dataset.restrict(dataset.query_ids[: settings.max_queries])
    return dataset


def query_file_ids(settings: DatasetSettings) -> list[str]:
    """Every query id of the query file the dataset settings name (judged or not, before ``max_queries``):
    what a file keyed by query id (query rewrites) may name."""
    folder = _folder(settings)
    queries_file = settings.queries or (folder / "queries.jsonl" if folder else None)
    return [] if queries_file is None else [str(q) for q in read_queries(queries_file)["query_id"]]
