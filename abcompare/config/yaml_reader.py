"""Reading a YAML config safely: nesting depth and alias expansion are bounded before anything walks the
document, and every key path is mapped to its line so errors can point into the file.

``yaml.safe_load`` alone shares aliased values, so a 2 KB "billion laughs" document loads in no time; it is
every later walk (line mapping, pydantic, treatment merging) that expands it. Here the document is parsed
once: the event stream is checked for depth (no recursion), the node graph for its expanded size and for
recursive aliases (memoised, linear in the document), and only then is it constructed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from abcompare.core.errors import ConfigError
from abcompare.core.limits import MAX_CONFIG_BYTES, MAX_DEPTH, MAX_VALUES

__all__ = ["MAX_CONFIG_BYTES", "MAX_DEPTH", "MAX_VALUES", "YamlDocument", "load_yaml", "load_yaml_value"]


@dataclass(frozen=True)
class YamlDocument:
    """The constructed document and the 1-based line of every key path (``("treatments", "x") -> 9``)."""

    data: Any
    lines: dict[tuple[str, ...], int]


def _line(mark: Any) -> int | None:
    return mark.line + 1 if mark is not None else None


def _check_depth(text: str, file: str | Path | None) -> None:
    """Refuse nesting deeper than ``MAX_DEPTH``, counted on the event stream (no recursion)."""
    depth = 0
    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            depth += 1
            if depth > MAX_DEPTH:
                raise ConfigError(
                    f"YAML nested deeper than {MAX_DEPTH} levels",
                    file=file,
                    line=_line(event.start_mark),
                    hint="a config nests a few levels; flatten the document",
                )
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            depth -= 1


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def _check_expansion(root: yaml.Node, file: str | Path | None) -> None:
    """Refuse recursive aliases and documents whose aliases expand past ``MAX_VALUES`` values or
    ``MAX_DEPTH`` levels; sizes are memoised per node, so this is linear in the written document."""
    size: dict[int, int] = {}
    depth: dict[int, int] = {}
    entered: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, finished = stack.pop()
        key = id(node)
        if finished:
            entered.discard(key)
            kids = _children(node)
            size[key] = min(1 + sum(size[id(k)] for k in kids), MAX_VALUES + 1)
            depth[key] = 1 + max((depth[id(k)] for k in kids), default=0)
            if size[key] > MAX_VALUES:
                raise ConfigError(
                    f"YAML aliases expand to more than {MAX_VALUES:,} values",
                    file=file,
                    line=_line(node.start_mark),
                    hint="write the values out, or use fewer nested aliases",
                )
            if depth[key] > MAX_DEPTH + 1:
                raise ConfigError(
                    f"YAML aliases nest deeper than {MAX_DEPTH} levels",
                    file=file,
                    line=_line(node.start_mark),
                    hint="use fewer nested aliases",
                )
            continue
        if key in size:
            continue
        if key in entered:
            raise ConfigError(
                "recursive YAML alias (a value that contains itself)",
                file=file,
                line=_line(node.start_mark),
                hint="an alias must not refer to a mapping or list that encloses it",
            )
        entered.add(key)
        stack.append((node, True))
        stack.extend((kid, False) for kid in _children(node) if id(kid) not in size)


def _key_lines(root: yaml.Node) -> dict[tuple[str, ...], int]:
    """Map each key path to its 1-based line (the document is bounded, so this walk is too)."""
    lines: dict[tuple[str, ...], int] = {}
    stack: list[tuple[yaml.Node, tuple[str, ...]]] = [(root, ())]
    while stack:
        node, path = stack.pop()
        if isinstance(node, yaml.MappingNode):
            for key_node, value_node in node.value:
                key = (*path, str(key_node.value))
                lines.setdefault(key, key_node.start_mark.line + 1)
                stack.append((value_node, key))
        elif isinstance(node, yaml.SequenceNode):
            for i, item in enumerate(node.value):
                key = (*path, str(i))
                lines.setdefault(key, item.start_mark.line + 1)
                stack.append((item, key))
    return lines


def _yaml_error(exc: yaml.YAMLError, file: str | Path | None) -> ConfigError:
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    return ConfigError(f"invalid YAML: {problem}", file=file, line=_line(mark))


def load_yaml(text: str, file: str | Path | None = None) -> YamlDocument:
    """Parse one YAML document with ``yaml.SafeLoader`` after bounding its depth and alias expansion;
    every problem is a ``ConfigError`` at its line."""
    if len(text) > MAX_CONFIG_BYTES:
        raise ConfigError(
            f"config is {len(text):,} characters long (at most {MAX_CONFIG_BYTES:,})",
            file=file,
            hint="a config names files; it does not hold data",
        )
    try:
        _check_depth(text, file)
        loader = yaml.SafeLoader(text)
        try:
            node = loader.get_single_node()
            if node is None:
                return YamlDocument(None, {})
            _check_expansion(node, file)
            lines = _key_lines(node)
            data = loader.construct_document(node)
        finally:
            loader.dispose()
    except yaml.YAMLError as exc:
        raise _yaml_error(exc, file) from None
    return YamlDocument(data, lines)


def load_yaml_value(text: str, where: str) -> Any:
    """A value given on the command line (``--set key=value``), read as YAML with the same bounds; text
    that is not valid YAML stays a string."""
    try:
        return load_yaml(text).data
    except ConfigError as exc:
        if exc.message.startswith("invalid YAML"):
            return text
        raise ConfigError(exc.message, field=where, hint=exc.hint) from None
