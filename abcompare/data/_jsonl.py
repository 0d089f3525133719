"""JSON Lines records with their 1-based line numbers, for the small readers (queries, corpus, spans)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from abcompare.data._lines import content_lines
from abcompare.errors import DataError

__all__ = ["jsonl_records", "text_field"]


def jsonl_records(path: str | Path, what: str, hint: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for every non-blank line; a line that is not a JSON object is a DataError."""
    lines, numbers = content_lines(path, what, comments=False)
    for text, number in zip(lines.to_pylist(), numbers.tolist(), strict=True):
        try:
            record = json.loads(text)
        except json.JSONDecodeError as exc:
            raise DataError(
                f"malformed line: not JSON ({exc.msg})", file=path, line=number, hint=hint
            ) from None
        if not isinstance(record, dict):
            raise DataError("malformed line: expected a JSON object", file=path, line=number, hint=hint)
        yield number, record


def text_field(
    record: dict[str, Any], names: tuple[str, ...], *, path: str | Path, line: int, hint: str
) -> str:
    """The first of ``names`` present in ``record``, as a stripped non-empty string (ids may be numbers)."""
    for name in names:
        if name in record:
            value = record[name]
            if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value).strip():
                return str(value).strip()
            raise DataError(f"empty or invalid {name} {value!r}", file=path, line=line, field=name, hint=hint)
    raise DataError(f"missing field {names[0]!r}", file=path, line=line, field=names[0], hint=hint)
