"""``--set`` and treatments written as overrides: one YAML value set at a dotted key, a mapping merged over
another (an entry mapping, such as a variant's retrievers, replaced whole when it switches its source), and
the settings an override changed."""

from __future__ import annotations

import copy
import typing
from typing import Any

from pydantic import (
    BaseModel,
)

from abcompare.config.yaml_reader import load_yaml_value
from abcompare.core.errors import ConfigError
from abcompare.retrieval.settings import VariantSettings


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    """The pydantic models an annotation names (through unions, ``Annotated`` and containers)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [model for arg in typing.get_args(annotation) for model in _models_in(arg)]


def _entry_mappings(model: type[BaseModel], at: tuple[str, ...] = ()) -> frozenset[tuple[str, ...]]:
    """The setting paths whose value is a mapping keyed by the user's names (``retrievers``,
    ``fusion.weights``); ``*`` stands for such a name in a longer path."""
    paths: set[tuple[str, ...]] = set()
    for name, field in model.model_fields.items():
        kinds = [field.annotation, *typing.get_args(field.annotation)]
        mapping = next((tp for tp in kinds if typing.get_origin(tp) is dict), None)
        if mapping is not None:
            paths.add((*at, name))
            for inner in _models_in(typing.get_args(mapping)[1]):
                paths |= _entry_mappings(inner, (*at, name, "*"))
        else:
            for inner in _models_in(field.annotation):
                paths |= _entry_mappings(inner, (*at, name))
    return frozenset(paths)


#: Where a ``null`` in an override removes an entry: a retriever, a fusion weight.
ENTRY_MAPPINGS = _entry_mappings(VariantSettings)


def _is_entry_mapping(at: tuple[str, ...]) -> bool:
    return any(
        len(path) == len(at) and all(p in ("*", a) for p, a in zip(path, at, strict=True))
        for path in ENTRY_MAPPINGS
    )


def deep_merge(base: Any, override: Any, _at: tuple[str, ...] = ()) -> Any:
    """``override`` laid over ``base``: mappings merge key by key, anything else replaces. ``null`` is the
    value None, as written in the control: ``stemmer: null`` is no stemming, ``rerank: null`` no rerank;
    an entry of a mapping keyed by names (a retriever under ``retrievers``, a weight under
    ``fusion.weights``) is removed by ``null``; a variant's ``run`` naming the other kind of source (a
    Python retriever over the control's run file, or a file over a retriever) replaces it whole. A
    ``null`` for a setting that cannot be None is left for validation to refuse at its key."""
    if not (isinstance(base, dict) and isinstance(override, dict)):
        return copy.deepcopy(override)
    merged = dict(base)
    for key, value in override.items():
        if value is None and _is_entry_mapping(_at):
            merged.pop(key, None)
        elif not _at and key == "run" and _switches_source(base.get(key), value):
            merged[key] = copy.deepcopy(value)  # a Python retriever instead of the control's file, or back
        elif isinstance(value, dict):
            below = base.get(key)
            merged[key] = deep_merge(below if isinstance(below, dict) else {}, value, (*_at, key))
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def _switches_source(base: Any, override: Any) -> bool:
    """Whether a variant's ``run`` override names the other kind of source than the run it is laid over (a
    Python retriever over a run file, or a file over a retriever): it then replaces that run whole."""
    if not (isinstance(base, dict) and isinstance(override, dict)):
        return False
    to_python = override.get("python") is not None and base.get("path") is not None
    to_file = override.get("path") is not None and base.get("python") is not None
    return to_python or to_file


def changed_settings(base: Any, override: Any, prefix: str = "") -> list[str]:
    """The leaf paths that ``override`` sets to a value different from ``base``."""
    if isinstance(override, dict) and isinstance(base, dict):
        changed: list[str] = []
        for key, value in override.items():
            sub = base.get(key) if isinstance(base, dict) else None
            changed += changed_settings(sub, value, f"{prefix}{key}.")
        return changed
    return [] if override == base else [prefix.rstrip(".")]


def apply_set_option(raw: dict[str, Any], assignment: str) -> None:
    """Apply one ``--set a.b.c=value`` to the raw config; the value is parsed as YAML (so 5 is a number)."""
    if "=" not in assignment:
        raise ConfigError(f"--set expects key.path=value, got {assignment!r}", field=assignment)
    path, _, text = assignment.partition("=")
    keys = [k for k in path.strip().split(".") if k]
    if not keys:
        raise ConfigError(f"--set has an empty key in {assignment!r}", field=assignment)
    value = load_yaml_value(text, path.strip()) if text.strip() else None
    node: Any = raw
    for key, below in zip(keys, keys[1:], strict=False):
        child = _child(node, key, path)
        if child is None:
            child = node[key] = {}
        if not isinstance(child, dict | list):
            raise ConfigError(f"cannot set {path}: {key} is not a mapping", field=path)
        if isinstance(child, list) and not below.isdigit():
            raise ConfigError(f"cannot set {path}: {key} is a list (give an index: {key}.0.…)", field=path)
        node = child
    if isinstance(node, list):
        _child(node, keys[-1], path)  # the index must exist
        node[int(keys[-1])] = value
    else:
        node[keys[-1]] = value


def _child(node: dict[str, Any] | list[Any], key: str, path: str) -> Any:
    """``node[key]`` for a mapping (None when absent), or the item at index ``key`` of a list
    (``datasets.1``): an index past its end is a ``ConfigError``."""
    if isinstance(node, dict):
        return node.get(key)
    if not key.isdigit() or int(key) >= len(node):
        raise ConfigError(f"cannot set {path}: the list has no item {key} (it has {len(node)})", field=path)
    return node[int(key)]
