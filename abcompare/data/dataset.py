"""The Dataset value object: queries, annotations, optional corpus and spans, and how they were reconciled.

``assemble`` applies the evaluation rules once: only queries with annotations are kept (counted, or an
error when strict), annotations for unknown queries are dropped with a warning.
"""

from __future__ import annotations

import hashlib
import warnings
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

import pandas as pd

from abcompare.core.errors import AbcompareWarning, DataError
from abcompare.core.vocabulary import plural
from abcompare.data.subset import restrict_to_queries

__all__ = ["Dataset", "assemble"]


@dataclass(frozen=True, eq=False, repr=False)
class Dataset:
    """A query set with its judgments, ready to evaluate; tables as in docs/architecture.md.

    ``excluded_queries`` counts queries dropped for having no annotations; ``unknown_annotation_queries``
    counts annotated query ids missing from the query set (their annotations are dropped);
    ``annotation_files`` holds ``(path, sha256)`` of every judgment file merged into ``annotations``;
    ``annotation_file`` names them in one string, for error messages.
    """

    name: str
    corpus: pd.DataFrame | None
    queries: pd.DataFrame
    annotations: pd.DataFrame
    spans: pd.DataFrame | None = None
    source: Path | None = None
    excluded_queries: int = 0
    unknown_annotation_queries: int = 0
    annotation_files: tuple[tuple[str, str], ...] = ()
    annotation_file: Path | None = None

    def __repr__(self) -> str:
        def rows(frame: pd.DataFrame | None) -> str:
            return "None" if frame is None else f"{len(frame):,} rows"

        return (
            f"Dataset(name={self.name!r}, queries={rows(self.queries)}, "
            f"annotations={rows(self.annotations)}, corpus={rows(self.corpus)}, spans={rows(self.spans)}, "
            f"excluded_queries={self.excluded_queries}, "
            f"unknown_annotation_queries={self.unknown_annotation_queries})"
        )

    def fingerprint(self) -> str:
        """A stable sha256 of the content (queries, annotations, spans, corpus), independent of row order."""
        digest = hashlib.sha256()
        for _, file_digest in sorted(self.annotation_files, key=lambda item: item[1]):
            digest.update(b"annotation-file")
            digest.update(file_digest.encode())
        for label, frame, by in (
            ("queries", self.queries, ["query_id"]),
            ("annotations", self.annotations, ["query_id", "key"]),
            ("spans", self.spans, ["query_id", "document_id", "start", "end"]),
            ("corpus", self.corpus, ["doc_id"]),
        ):
            digest.update(label.encode())
            if frame is None:
                digest.update(b"<none>")
                continue
            canonical = frame[sorted(frame.columns, key=str)].sort_values(by, kind="stable")
            canonical = canonical.astype("str").reset_index(drop=True)
            digest.update(",".join(map(str, canonical.columns)).encode())
            digest.update(pd.util.hash_pandas_object(canonical, index=False).to_numpy().tobytes())
        return digest.hexdigest()

    @property
    def query_ids(self) -> list[str]:
        """The evaluated query ids, in query-set order."""
        return self.queries["query_id"].astype("str").tolist()

    def restrict(self, query_ids: Iterable[str]) -> Dataset:
        """The same dataset limited to ``query_ids`` (e.g. the queries every run answered)."""
        ids = list(query_ids)
        spans = None if self.spans is None else restrict_to_queries(self.spans, ids)
        return replace(
            self,
            queries=restrict_to_queries(self.queries, ids),
            annotations=restrict_to_queries(self.annotations, ids),
            spans=spans,
        )


def dataset_line(dataset: Dataset) -> str:
    """``dataset hr-docs: 124 annotated queries`` (and how many queries of the split have no annotation)."""
    n, excluded = len(dataset.queries), dataset.excluded_queries
    line = f"dataset {dataset.name}: {plural(n, 'annotated query', 'annotated queries')}"
    if excluded:
        line += f" ({plural(excluded, 'query')} without annotations in this split are not evaluated)"
    return line


def assemble(
    name: str,
    queries: pd.DataFrame,
    annotations: pd.DataFrame,
    *,
    corpus: pd.DataFrame | None = None,
    spans: pd.DataFrame | None = None,
    source: Path | None = None,
    strict: bool = False,
    annotation_file: str | Path | None = None,
    annotation_files: tuple[Path, ...] = (),
    judged_by: str = "annotations",
    unjudged_queries: bool = False,
) -> Dataset:
    """Reconcile queries with their judgments into a Dataset.

    ``judged_by`` says which judgments decide the evaluated queries: the annotation file's queries
    (chunk and document level), or the evidence spans' queries (span level).

    Annotations for queries not in the query set are dropped with an ``AbcompareWarning``; queries with
    no judgment are excluded and counted, or, with ``strict``, are a ``DataError`` (or, with
    ``unjudged_queries``, kept: pooling needs them).
    """
    query_ids = pd.Index(queries["query_id"].astype("str"))
    if judged_by not in ("annotations", "spans"):
        raise ValueError(f"judged_by must be 'annotations' or 'spans', got {judged_by!r}")
    judgments = spans if judged_by == "spans" else annotations
    if judgments is None:
        raise DataError("evidence spans are needed to judge at span level", field="dataset.spans")
    judged = pd.Index(pd.unique(judgments["query_id"].astype("str")))
    unknown = judged[~judged.isin(query_ids)]
    if len(unknown):
        examples = ", ".join(repr(q) for q in unknown[:5])
        warnings.warn(
            f"{annotation_file or 'annotations'}: {len(unknown)} annotated queries are not in the query set "
            f"(e.g. {examples}); their annotations are ignored",
            AbcompareWarning,
            stacklevel=2,
        )
    missing = query_ids[~query_ids.isin(judged)]
    if strict and len(missing):
        examples = ", ".join(repr(q) for q in missing[:5])
        raise DataError(
            f"{len(missing)} queries have no annotations (e.g. {examples})",
            file=annotation_file,
            field="query_id",
            hint="annotate them, remove them from the query set, or turn strict off to exclude them",
        )
    keep = query_ids if unjudged_queries else query_ids[query_ids.isin(judged)]
    if len(keep) == 0:
        raise DataError(
            "no query has annotations: the query ids of the query set and the annotations never match",
            file=annotation_file,
            field="query_id",
            hint=f"query ids look like {list(query_ids[:3])}, annotated ones like {list(judged[:3])}",
        )
    return Dataset(
        name=name,
        corpus=corpus,
        queries=restrict_to_queries(queries, keep),
        annotations=restrict_to_queries(annotations, keep),
        spans=None if spans is None else restrict_to_queries(spans, keep),
        source=source,
        excluded_queries=0 if unjudged_queries else len(missing),
        unknown_annotation_queries=len(unknown),
        annotation_files=tuple((str(path), file_sha256(path)) for path in annotation_files),
        annotation_file=None if annotation_file is None else Path(annotation_file),
    )


def file_sha256(path: str | Path) -> str:
    """The sha256 of a file's bytes, so two comparisons on different judgment files are never confused."""
    digest = hashlib.sha256()
    with Path(path).open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
