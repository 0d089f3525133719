"""Where a setting sits in a config file: a key path's line, a variant's and a collection's key paths, and
a pydantic error read as the located one-line error a person gets (file, line, key)."""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import (
    BaseModel,
    ValidationError,
)

from abcompare.config.models import (
    ExperimentConfig,
)
from abcompare.core.errors import ConfigError


def line_of(loc: Sequence[str], lines: dict[tuple[str, ...], int], *fallback: tuple[str, ...]) -> int | None:
    """The line of the deepest key of ``loc`` written in the file (else of a ``fallback`` key): where every
    located config error points."""
    keys = [tuple(loc[:cut]) for cut in range(len(loc), 0, -1)] + list(fallback)
    return next((lines[key] for key in keys if key in lines), None)


def variant_key(name: str) -> tuple[str, ...]:
    """Where a variant is written in a config: ``control``, or ``treatments.<name>``."""
    return ("control",) if name == "control" else ("treatments", name)


def _yaml_path(loc: tuple[str, ...]) -> tuple[str, ...]:
    """The pydantic error location as the user wrote it: drop the discriminator tag pydantic inserts
    after ``retrievers.<name>`` (``bm25`` / ``dense``) and validator-function markers."""
    path: list[str] = []
    for i, part in enumerate(loc):
        if i >= 2 and loc[i - 2] == "retrievers" and part in {"bm25", "dense"}:
            continue
        if part.startswith("function-"):
            continue
        path.append(part)
    return tuple(path)


def _null_at(error: dict[str, Any]) -> tuple[str, ...] | None:
    """Where a ``null`` was refused, relative to the error's location (``()`` or ``("type",)`` for a
    retriever whose kind is null), or None when the error is about something else."""
    if error["type"] in ("missing", "abcompare", "value_error", "assertion_error"):
        return None
    if error["type"] == "union_tag_invalid":
        given = error.get("input")
        return ("type",) if isinstance(given, dict) and "type" in given and given["type"] is None else None
    return () if error.get("input", ...) is None else None


def _null_message(yaml_loc: tuple[str, ...]) -> str:
    """A ``null`` for a setting that cannot be None: say so, and what to write instead."""
    keep = "to keep the control's" if yaml_loc[:1] == ("treatments",) else "for its default"
    key = ".".join(yaml_loc)
    return f"null is not a value of {key}: it cannot be none (give a value, or leave the key out {keep})"


def _describe(error: dict[str, Any], vocabulary: set[str]) -> str:
    loc = [str(p) for p in error["loc"]]
    kind = error["type"]
    if kind == "extra_forbidden":
        key = loc[-1]
        close = difflib.get_close_matches(key, sorted(vocabulary), n=1, cutoff=0.6)
        return f"unknown key {key!r}" + (f" (did you mean {close[0]!r}?)" if close else "")
    if kind == "missing":
        return "required setting is missing"
    return error["msg"]


def _config_error(exc: ValidationError, path: Path, lines: dict[tuple[str, ...], int]) -> ConfigError:
    vocabulary = _all_field_names(ExperimentConfig)
    first = exc.errors()[0]
    null_at = _null_at(first)
    loc = (
        tuple(str(p) for p in first["loc"]) + tuple((first.get("ctx") or {}).get("at", ())) + (null_at or ())
    )
    yaml_loc = _yaml_path(loc)
    line = line_of(yaml_loc, lines)
    more = len(exc.errors()) - 1
    described = _null_message(yaml_loc) if null_at is not None else _describe(first, vocabulary)
    message = described + (f" (and {more} more problem{'s' * (more > 1)})" if more else "")
    return ConfigError(message, file=path, line=line, field=".".join(yaml_loc) or None)


def _all_field_names(model: type[BaseModel], seen: set[type] | None = None) -> set[str]:
    """Every field name reachable from ``model`` (for 'did you mean' suggestions)."""
    seen = seen or set()
    if model in seen:
        return set()
    seen.add(model)
    names: set[str] = set()
    for name, field in model.model_fields.items():
        names.add(name)
        stack = [field.annotation]
        while stack:
            tp = stack.pop()
            if isinstance(tp, type) and issubclass(tp, BaseModel):
                names |= _all_field_names(tp, seen)
            stack.extend(getattr(tp, "__args__", ()) or ())
    return names
