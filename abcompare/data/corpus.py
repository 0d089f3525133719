"""Corpora: BEIR ``corpus.jsonl`` (``_id``, ``title``, ``text``) read into ``doc_id, title, text``."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from abcompare.core.errors import DataError
from abcompare.data._jsonl import jsonl_records, text_field
from abcompare.data._lines import as_input

__all__ = ["read_corpus"]

_HINT = 'each line is {"_id": "...", "title": "...", "text": "..."}'


def read_corpus(path: str | Path) -> pd.DataFrame:
    """Read a BEIR corpus; ids must be unique, ``text`` a string (may be empty), ``title`` optional."""
    path = as_input(path, "corpus")
    ids: list[str] = []
    titles: list[str] = []
    texts: list[str] = []
    line_of: dict[str, int] = {}
    for number, record in jsonl_records(path, "corpus", _HINT):
        doc_id = text_field(record, ("_id", "doc_id", "id"), path=path, line=number, hint=_HINT)
        if doc_id in line_of:
            raise DataError(
                f"duplicate document id {doc_id!r} (first at line {line_of[doc_id]})",
                file=path,
                line=number,
                field="_id",
                hint="document ids must be unique",
            )
        line_of[doc_id] = number
        text = record.get("text")
        title = record.get("title") or ""
        if not isinstance(text, str):
            raise DataError(
                f"text must be a string, got {text!r}", file=path, line=number, field="text", hint=_HINT
            )
        if not isinstance(title, str):
            raise DataError(
                f"title must be a string, got {title!r}", file=path, line=number, field="title", hint=_HINT
            )
        ids.append(doc_id)
        titles.append(title)
        texts.append(text)
    if not ids:
        raise DataError("corpus file is empty", file=path, hint=_HINT)
    return pd.DataFrame({"doc_id": ids, "title": titles, "text": texts}).astype("str")
