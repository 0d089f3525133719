"""Build the shipped ``hr-docs`` example (BEIR layout) from its markdown and YAML sources.

Sources live in ``hr_docs/source/`` (``docs/<doc-id>.md``, ``queries_<a|b>.yaml``); the generated
``corpus.jsonl``, ``queries.jsonl``, ``qrels/test.tsv``, ``qrels/test.chunks.tsv`` and
``spans/test.jsonl`` are written next to ``source/``. Run ``python -m abcompare.examples.build_hr_docs``
(``--check`` validates only; ``--verify`` also fails when the committed files are stale).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from abcompare.core.errors import DataError

EXAMPLE_DIR = Path(__file__).resolve().parent / "hr_docs"
SOURCE_DIR = EXAMPLE_DIR / "source"

MIN_DOCUMENTS = 30
MIN_QUERIES = 80
MIN_CHUNKS = 150
QUOTE_MIN_CHARS = 40
QUOTE_MAX_CHARS = 300
CHUNKING = {"strategy": "recursive", "size": 1000, "overlap": 200}

GENERATED_FILES: tuple[str, ...] = (
    "corpus.jsonl",
    "queries.jsonl",
    "qrels/test.tsv",
    "qrels/test.chunks.tsv",
    "spans/test.jsonl",
)

_DOC_ID = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_QUERIES_FILE = re.compile(r"^queries_([a-z])\.yaml$")


# --------------------------------------------------------------------------- source models


@dataclass(frozen=True)
class SourceDocument:
    """One policy document: ``text`` is everything after the ``# Title`` line, stripped."""

    doc_id: str
    title: str
    text: str
    path: Path


class Evidence(BaseModel):
    """A quote from one document that answers the query, with its relevance grade."""

    model_config = ConfigDict(extra="forbid")

    doc: str = Field(min_length=1, description="doc-id of the document quoted")
    quote: str = Field(
        min_length=QUOTE_MIN_CHARS,
        max_length=QUOTE_MAX_CHARS,
        description="exact substring of the document text, found exactly once",
    )
    grade: Literal[1, 2] = Field(description="2 = main answer, 1 = supporting")


class SourceQuery(BaseModel):
    """One query as written in ``queries_<writer>.yaml``."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1)
    text: str = Field(min_length=3)
    group: Literal["keyword", "semantic"]
    topic: str = Field(min_length=1)
    evidence: list[Evidence] = Field(min_length=1)


@dataclass(frozen=True)
class LocatedQuery:
    """A validated query with the file and line it came from (for error messages)."""

    query: SourceQuery
    file: Path
    line: int


@dataclass(frozen=True)
class Span:
    """An evidence span: character offsets into the document text, end exclusive."""

    query_id: str
    document_id: str
    start: int
    end: int
    grade: int


@dataclass(frozen=True)
class BuildSummary:
    """Counts of a build, printed by the command line and checked by the tests."""

    documents: int
    queries: int
    chunks: int
    spans: int
    document_qrels: int
    chunk_qrels: int
    queries_by_group: dict[str, int]


# --------------------------------------------------------------------------- reading


def read_document(path: Path) -> SourceDocument:
    """Read one ``docs/<doc-id>.md``: a ``# Title`` line, a blank line, then ``## Section`` blocks."""
    doc_id = path.stem
    if not _DOC_ID.match(doc_id):
        raise DataError(
            f"document id {doc_id!r} is not a lowercase slug",
            file=path,
            hint="name the file like expense-reimbursement.md",
        )
    raw = path.read_text(encoding="utf-8")
    first, _, rest = raw.partition("\n")
    if not first.startswith("# ") or not first[2:].strip():
        raise DataError(
            "first line must be '# Title'", file=path, line=1, hint="start the file with '# Title'"
        )
    text = rest.strip()
    if not text:
        raise DataError("document has no body", file=path, hint="write the body after the title line")
    sections = re.findall(r"(?m)^## \S", text)
    if len(sections) < 2:
        raise DataError(
            f"document has {len(sections)} '## ' section(s), expected at least 2",
            file=path,
            hint="split the body into '## Section' blocks",
        )
    return SourceDocument(doc_id=doc_id, title=first[2:].strip(), text=text, path=path)


def read_documents(docs_dir: Path) -> list[SourceDocument]:
    """All documents of ``docs_dir``, sorted by id."""
    paths = sorted(docs_dir.glob("*.md"))
    if not paths:
        raise DataError("no documents found", file=docs_dir, hint="write docs/<doc-id>.md files")
    return [read_document(p) for p in paths]


def _item_lines(text: str, path: Path) -> list[int]:
    """1-based line of each top-level list item, so validation errors can point at the query."""
    try:
        node = yaml.compose(text)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        raise DataError(
            f"invalid YAML: {getattr(err, 'problem', err)}",
            file=path,
            line=mark.line + 1 if mark is not None else None,
            hint="fix the YAML syntax (quote strings containing ': ' or '#')",
        ) from None
    if not isinstance(node, yaml.SequenceNode):
        raise DataError("expected a YAML list of queries", file=path, hint="each query is a '- id: ...' item")
    return [item.start_mark.line + 1 for item in node.value]


def read_queries(path: Path) -> list[LocatedQuery]:
    """Read and schema-check one ``queries_<writer>.yaml``; ids must carry the writer's prefix."""
    match = _QUERIES_FILE.match(path.name)
    prefix = f"q{match.group(1)}-" if match else "q"
    text = path.read_text(encoding="utf-8")
    lines = _item_lines(text, path)
    items = yaml.safe_load(text) or []
    located: list[LocatedQuery] = []
    for index, (item, line) in enumerate(zip(items, lines, strict=True)):
        try:
            query = SourceQuery.model_validate(item)
        except ValidationError as err:
            first = err.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            if isinstance(item, dict) and isinstance(item.get("id"), str):
                where = f"{item['id']}.{where}" if where else item["id"]
            raise DataError(
                f"query #{index + 1}: {first['msg']}",
                file=path,
                line=line,
                field=where or None,
                hint="fields: id, text, group (keyword|semantic), topic, evidence [{doc, quote, grade}]",
            ) from None
        if not query.id.startswith(prefix):
            raise DataError(
                f"query id {query.id!r} does not start with {prefix!r}",
                file=path,
                line=line,
                field="id",
                hint=f"ids in {path.name} are {prefix}001, {prefix}002, ...",
            )
        located.append(LocatedQuery(query=query, file=path, line=line))
    return located


def read_all_queries(source_dir: Path) -> list[LocatedQuery]:
    """The queries of every ``queries_<writer>.yaml``, in file then list order; ids unique."""
    located: list[LocatedQuery] = []
    seen: dict[str, LocatedQuery] = {}
    for path in sorted(source_dir.glob("queries_*.yaml")):
        for item in read_queries(path):
            previous = seen.get(item.query.id)
            if previous is not None:
                raise DataError(
                    f"duplicate query id {item.query.id!r} (first at {previous.file.name}:{previous.line})",
                    file=item.file,
                    line=item.line,
                    field="id",
                    hint="query ids must be unique across all query files",
                )
            seen[item.query.id] = item
            located.append(item)
    return located


# --------------------------------------------------------------------------- pure building blocks


def locate_spans(
    queries: Sequence[LocatedQuery],
    documents: dict[str, SourceDocument],
    problems: list[DataError] | None = None,
) -> list[Span]:
    """Character spans of every evidence quote; each quote must occur exactly once in its document.

    Raises the first problem, or, when a ``problems`` list is given, collects them all there instead.
    """
    spans: list[Span] = []
    collected: list[DataError] = []
    for item in queries:
        for n, ev in enumerate(item.query.evidence):
            field = f"{item.query.id}.evidence[{n}]"
            doc = documents.get(ev.doc)
            if doc is None:
                collected.append(
                    DataError(
                        f"evidence cites unknown document {ev.doc!r}",
                        file=item.file,
                        line=item.line,
                        field=field,
                        hint="use the file name of a docs/<doc-id>.md without .md",
                    )
                )
                continue
            count = doc.text.count(ev.quote)
            if count != 1:
                what = "not found" if count == 0 else f"found {count} times"
                collected.append(
                    DataError(
                        f"quote {what} in {ev.doc}: {ev.quote[:60]!r}...",
                        file=item.file,
                        line=item.line,
                        field=field,
                        hint="copy the quote character for character from the document (and make it unique)",
                    )
                )
                continue
            start = doc.text.index(ev.quote)
            spans.append(Span(item.query.id, ev.doc, start, start + len(ev.quote), ev.grade))
    if problems is not None:
        problems.extend(collected)
    elif collected:
        raise collected[0]
    return spans


def document_qrels(spans: Iterable[Span]) -> dict[tuple[str, str], int]:
    """Document-level relevance: the max grade over a (query, document)'s spans, in first-seen order."""
    qrels: dict[tuple[str, str], int] = {}
    for span in spans:
        key = (span.query_id, span.document_id)
        qrels[key] = max(qrels.get(key, 0), span.grade)
    return qrels


def chunk_qrels(spans: Iterable[Span], chunks_by_doc: dict[str, list]) -> dict[tuple[str, str], int]:
    """Chunk-level relevance: a chunk whose [start, end) overlaps a span gets its grade (max of several)."""
    qrels: dict[tuple[str, str], int] = {}
    for span in spans:
        for chunk in chunks_by_doc[span.document_id]:
            if chunk.start < span.end and span.start < chunk.end:
                key = (span.query_id, chunk.id)
                qrels[key] = max(qrels.get(key, 0), span.grade)
    return qrels


def chunk_documents(documents: Sequence[SourceDocument]) -> dict[str, list]:
    """Chunks of every document at the default chunking (recursive, 1000 characters, 200 overlap)."""
    from abcompare.retrieval.chunking import chunk_document

    return {
        d.doc_id: chunk_document(d.doc_id, d.text, d.title, **CHUNKING)  # type: ignore[arg-type]
        for d in documents
    }


def _chunk_sort_key(chunk_id: str) -> tuple[str, int]:
    doc, _, n = chunk_id.rpartition("#chunk-")
    return doc, int(n)


# --------------------------------------------------------------------------- writing


def _jsonl(rows: Iterable[dict]) -> str:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)


def _qrels_tsv(qrels: dict[tuple[str, str], int], order: dict[str, int], chunked: bool) -> str:
    def sort_key(item: tuple[tuple[str, str], int]) -> tuple:
        (qid, cid), _ = item
        return (order[qid], _chunk_sort_key(cid) if chunked else (cid, 0))

    lines = ["query-id\tcorpus-id\tscore\n"]
    lines += [f"{qid}\t{cid}\t{grade}\n" for (qid, cid), grade in sorted(qrels.items(), key=sort_key)]
    return "".join(lines)


def render(
    documents: Sequence[SourceDocument],
    queries: Sequence[LocatedQuery],
    spans: Sequence[Span],
    chunks_by_doc: dict[str, list],
) -> dict[str, str]:
    """The content of every generated file, keyed by its path relative to the example folder."""
    order = {item.query.id: n for n, item in enumerate(queries)}
    corpus = _jsonl(
        {
            "_id": d.doc_id,
            "title": d.title,
            "text": d.text,
            "metadata": {"source": f"source/docs/{d.doc_id}.md"},
        }
        for d in documents
    )
    query_rows = _jsonl(
        {"_id": q.query.id, "text": q.query.text, "group": q.query.group, "topic": q.query.topic}
        for q in queries
    )
    ordered_spans = sorted(spans, key=lambda s: (order[s.query_id], s.document_id, s.start, s.end))
    span_rows = _jsonl(
        {
            "query_id": s.query_id,
            "document_id": s.document_id,
            "start": s.start,
            "end": s.end,
            "grade": s.grade,
        }
        for s in ordered_spans
    )
    return {
        "corpus.jsonl": corpus,
        "queries.jsonl": query_rows,
        "qrels/test.tsv": _qrels_tsv(document_qrels(spans), order, chunked=False),
        "qrels/test.chunks.tsv": _qrels_tsv(chunk_qrels(spans, chunks_by_doc), order, chunked=True),
        "spans/test.jsonl": span_rows,
    }


def check_counts(summary: BuildSummary, *, source_dir: Path) -> None:
    """The corpus must stay big enough for variants to differ (>= 30 docs, 80 queries, 150 chunks)."""
    for name, have, need in (
        ("documents", summary.documents, MIN_DOCUMENTS),
        ("queries", summary.queries, MIN_QUERIES),
        ("chunks", summary.chunks, MIN_CHUNKS),
    ):
        if have < need:
            raise DataError(
                f"only {have} {name}, the example needs at least {need}",
                file=source_dir,
                hint=f"write more {name} (or pass --allow-small while drafting)",
            )


def build(
    source_dir: Path = SOURCE_DIR,
    out_dir: Path | None = None,
    *,
    allow_small: bool = False,
    write: bool = True,
) -> BuildSummary:
    """Validate the sources and (unless ``write=False``) write the BEIR files into ``out_dir``.

    ``out_dir`` defaults to the folder holding ``source_dir``. Raises ``DataError`` on any problem.
    """
    out_dir = source_dir.parent if out_dir is None else out_dir
    documents = read_documents(source_dir / "docs")
    by_id = {d.doc_id: d for d in documents}
    queries = read_all_queries(source_dir)
    problems: list[DataError] = []
    spans = locate_spans(queries, by_id, problems)
    if problems:
        first = problems[0]
        if len(problems) > 1:
            first.message += f" [and {len(problems) - 1} more quote problems: --check lists them all]"
        raise first
    try:
        chunks_by_doc = chunk_documents(documents)
    except ImportError:  # the chunker is not installed yet: validation can still run
        if write:
            raise
        chunks_by_doc = {d.doc_id: [] for d in documents}
    files = render(documents, queries, spans, chunks_by_doc)
    groups: dict[str, int] = {}
    for q in queries:
        groups[q.query.group] = groups.get(q.query.group, 0) + 1
    summary = BuildSummary(
        documents=len(documents),
        queries=len(queries),
        chunks=sum(len(c) for c in chunks_by_doc.values()),
        spans=len(spans),
        document_qrels=files["qrels/test.tsv"].count("\n") - 1,
        chunk_qrels=files["qrels/test.chunks.tsv"].count("\n") - 1,
        queries_by_group=dict(sorted(groups.items())),
    )
    if not allow_small and summary.chunks:
        check_counts(summary, source_dir=source_dir)
    if write:
        for rel, content in files.items():
            target = out_dir / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content, encoding="utf-8", newline="\n")
    return summary


def quote_problems(source_dir: Path = SOURCE_DIR) -> list[DataError]:
    """Every evidence problem of the sources (unknown doc, quote missing or repeated), not only the first."""
    documents = {d.doc_id: d for d in read_documents(source_dir / "docs")}
    problems: list[DataError] = []
    locate_spans(read_all_queries(source_dir), documents, problems)
    return problems


def stale_files(example_dir: Path = EXAMPLE_DIR) -> list[str]:
    """Generated files that differ from a fresh build of ``example_dir/source`` (empty when up to date)."""
    with tempfile.TemporaryDirectory() as tmp:
        build(example_dir / "source", Path(tmp))
        stale = []
        for rel in GENERATED_FILES:
            committed = example_dir / rel
            fresh = (Path(tmp) / rel).read_bytes()
            if not committed.is_file() or committed.read_bytes() != fresh:
                stale.append(rel)
        return stale


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: build (default), ``--check`` (validate only) or ``--verify`` (fail when stale)."""
    parser = argparse.ArgumentParser(prog="python -m abcompare.examples.build_hr_docs", description=__doc__)
    parser.add_argument("--source", type=Path, default=SOURCE_DIR, help="the source/ folder")
    parser.add_argument("--out", type=Path, default=None, help="output folder (default: beside source/)")
    parser.add_argument("--check", action="store_true", help="validate the sources, write nothing")
    parser.add_argument("--verify", action="store_true", help="fail when the generated files are stale")
    parser.add_argument("--allow-small", action="store_true", help="skip the minimum counts (drafting)")
    args = parser.parse_args(argv)
    try:
        if args.verify:
            stale = stale_files(args.source.parent)
            if stale:
                print(f"stale generated files: {', '.join(stale)} (run the build)", file=sys.stderr)
                return 1
            print("generated files are up to date")
            return 0
        if args.check:
            problems = quote_problems(args.source)
            for problem in problems:
                print(f"error: {problem}", file=sys.stderr)
            if problems:
                return 2
        summary = build(args.source, args.out, allow_small=args.allow_small, write=not args.check)
    except DataError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    print(
        f"{summary.documents} documents, {summary.chunks} chunks, {summary.queries} queries "
        f"{summary.queries_by_group}, {summary.spans} evidence spans, "
        f"{summary.document_qrels} document qrels, {summary.chunk_qrels} chunk qrels"
        + ("" if args.check else f" -> {args.out or args.source.parent}")
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
