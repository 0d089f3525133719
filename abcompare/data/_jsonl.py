"""JSON Lines records with their 1-based line numbers, for the small readers (queries, corpus, spans)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from abcompare.core.errors import DataError
from abcompare.core.limits import MAX_JSON_DEPTH
from abcompare.data._lines import InputFile, content_lines

__all__ = ["jsonl_records", "text_field"]


_TOO_DEEP = object()


def _nesting(value: object) -> int:
    """How deeply lists and objects nest in a parsed JSON value (1 for a flat object), without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            node = list(node.values())
        if isinstance(node, list):
            deepest = max(deepest, depth)
            stack.extend((item, depth + 1) for item in node if isinstance(item, (dict, list)))
    return deepest


def jsonl_records(path: str | Path | InputFile, what: str, hint: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for every non-blank line; a line that is not a JSON object, or that nests
    deeper than ``MAX_JSON_DEPTH`` levels, is a DataError at its line."""
    lines, numbers = content_lines(path, what, comments=False)
    for text, number in zip(lines.to_pylist(), numbers.tolist(), strict=True):
        try:
            record = json.loads(text)
        except json.JSONDecodeError as exc:
            raise DataError(
                f"malformed line: not JSON ({exc.msg})", file=path, line=number, hint=hint
            ) from None
        except RecursionError:
            record = _TOO_DEEP  # nested beyond what the parser can follow: reported below
        # only a line with enough brackets can nest that deep: most lines skip the walk
        many_brackets = text.count("[") + text.count("{") > MAX_JSON_DEPTH
        if many_brackets and (record is _TOO_DEEP or _nesting(record) > MAX_JSON_DEPTH):
            raise DataError(
                f"malformed line: JSON nested deeper than {MAX_JSON_DEPTH} levels",
                file=path,
                line=number,
                hint=hint,
            )
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
