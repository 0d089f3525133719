"""A query-rewrites file (JSONL: ``{"query_id": ..., "variants": [...]}`` a line), read and checked once.

Its own module because the settings check the file when they are made (``QueryPlanningSettings``) and the
planner reads it when it plans: both import it, neither imports the other.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from abcompare.core.errors import ConfigError
from abcompare.core.hits import clean_id
from abcompare.core.limits import MAX_REWRITES_PER_QUERY

FILE_HINT = 'one JSON object per line: {"query_id": "q1", "variants": ["a rewrite", "another"]}'


@dataclass(frozen=True)
class VariantsFile:
    """A rewrites file, read and checked: each query id's variants, and the line it is on."""

    path: Path
    rewrites: dict[str, tuple[str, ...]]
    lines: dict[str, int]


def read_variants_file(path: str | Path) -> VariantsFile:
    """The rewrites of a JSONL variants file; a problem is a :class:`ConfigError` at its ``file:line``
    (not JSON, not an object, no ``query_id``, a query listed twice, ``variants`` not a list, a variant
    empty or not a string). Read once per file version (memoised on its size and modification time)."""
    resolved = Path(path).resolve()
    stat = resolved.stat()
    return _read_variants_file(resolved, stat.st_mtime_ns, stat.st_size)


@lru_cache(maxsize=16)
def _read_variants_file(path: Path, _mtime_ns: int, _size: int) -> VariantsFile:
    rewrites: dict[str, tuple[str, ...]] = {}
    lines: dict[str, int] = {}
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"not UTF-8 text ({exc.reason} at byte {exc.start})", file=path) from None
    for number, line in enumerate(text.split("\n"), start=1):  # numbered as editors number lines
        if not line.strip():
            continue

        def error(message: str, field: str | None = None, number: int = number) -> ConfigError:
            return ConfigError(message, file=path, line=number, field=field, hint=FILE_HINT)

        try:
            record = json.loads(line)
        except (json.JSONDecodeError, RecursionError) as exc:
            reason = exc.msg if isinstance(exc, json.JSONDecodeError) else "nested too deeply"
            raise error(f"not JSON: {reason}") from None
        if not isinstance(record, dict):
            raise error(f"expected a JSON object, found {type(record).__name__}")
        written = record.get("query_id")
        query_id = (
            clean_id(written) if isinstance(written, str | int) and not isinstance(written, bool) else None
        )
        if query_id is None:
            raise error("the line has no query_id (a string or an integer)", "query_id")
        if query_id in lines:
            raise error(f"query {query_id!r} is listed twice (first on line {lines[query_id]})", "query_id")
        variants = record.get("variants")
        if not isinstance(variants, list):
            raise error(f"query {query_id!r}: 'variants' must be a list of query texts", "variants")
        if len(variants) > MAX_REWRITES_PER_QUERY:
            raise error(
                f"query {query_id!r} has {len(variants):,} rewrites: at most {MAX_REWRITES_PER_QUERY:,} a "
                "query (each is retrieved and fused)",
                "variants",
            )
        for position, variant in enumerate(variants, start=1):
            if not isinstance(variant, str):
                raise error(
                    f"query {query_id!r}: variant {position} is not a string ({json.dumps(variant)})",
                    f"variants[{position - 1}]",
                )
            if not variant.strip():
                raise error(f"query {query_id!r}: variant {position} is empty", f"variants[{position - 1}]")
        rewrites[query_id] = tuple(variants)
        lines[query_id] = number
    return VariantsFile(path, rewrites, lines)
