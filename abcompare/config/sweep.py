"""Sweeps: a grid (or a list) of settings over the control, expanded into ordinary treatments.

A grid is config. ``expand_sweep`` turns ``sweep: {grid: {fusion.k: [10, 30]}}`` into treatments named
from their settings (``fusion.k=10``), each written as overrides of the control, before anything runs:
every later stage sees an ordinary comparison with many treatments. Points whose settings are invalid
are skipped with a note, points that are the same pipeline as an earlier one are dropped, and a bound
protects against a grid that a typo made huge. Choosing among the candidates is statistics
(:mod:`abcompare.stats`), never done here.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from abcompare.core.limits import MAX_VARIANTS


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SelectSettings(_Model):
    """How the best candidate is chosen and tested (``abcompare.tuned_comparison``)."""

    metric: str | None = Field(
        None, description="The metric the choice maximises, e.g. ndcg@10; default: the primary metric."
    )
    folds: int = Field(5, ge=2, le=50, description="Cross-validation folds over the queries.")


class SweepSettings(_Model):
    """A grid (every combination) or an explicit list of settings of the control to try as treatments."""

    grid: dict[str, list[Any]] | None = Field(
        None,
        description="Setting path of the control -> values to try; every combination is a candidate, "
        "e.g. {fusion.method: [rrf, dbsf], fusion.k: [10, 30, 60]}.",
    )
    points: list[dict[str, Any]] | None = Field(
        None, description="An explicit list of candidates, each {setting path: value}."
    )
    select: SelectSettings = Field(default_factory=SelectSettings)
    max_variants: int = Field(
        200, ge=1, le=MAX_VARIANTS, description="Refuse a sweep with more candidates than this."
    )

    @field_validator("grid")
    @classmethod
    def _values_are_lists(cls, value: dict[str, list[Any]] | None) -> dict[str, list[Any]] | None:
        if value is not None:
            for path, values in value.items():
                if not values:
                    raise ValueError(f"grid path {path!r} has no values")
        return value

    @model_validator(mode="after")
    def _one_source(self) -> SweepSettings:
        if (self.grid is None) == (self.points is None):
            raise ValueError("give either 'grid' (every combination) or 'points' (an explicit list)")
        if self.points is not None and not self.points:
            raise ValueError("'points' is empty")
        return self


@dataclass(frozen=True)
class SweepPlan:
    """What a sweep expanded into: candidates (name -> overrides of the control), and what was left out."""

    candidates: dict[str, dict[str, Any]]
    settings: dict[str, dict[str, Any]]  # name -> {path: value}, for tables and MLflow params
    points: int  # grid points before anything was left out
    invalid: list[str] = field(default_factory=list)
    duplicates: list[str] = field(default_factory=list)

    @property
    def swept_settings(self) -> list[str]:
        """The settings the sweep varies (dotted paths), in the order the candidates first name them."""
        return list(dict.fromkeys(path for values in self.settings.values() for path in values))

    def summary(self) -> str:
        """One line, printed before any work starts."""
        parts = [f"sweep: {self.points} grid points -> {len(self.candidates)} candidates"]
        if self.invalid:
            parts.append(f"{len(self.invalid)} invalid skipped")
        if self.duplicates:
            parts.append(f"{len(self.duplicates)} duplicates removed")
        return ", ".join(parts)


def nested(path_values: Mapping[str, Any]) -> dict[str, Any]:
    """``{"fusion.k": 30}`` -> ``{"fusion": {"k": 30}}``: dotted setting paths as a nested override."""
    out: dict[str, Any] = {}
    for path, value in path_values.items():
        node = out
        keys = path.split(".")
        for key in keys[:-1]:
            node = node.setdefault(key, {})
        node[keys[-1]] = copy.deepcopy(value)
    return out


def candidate_name(path_values: Mapping[str, Any], varying: list[str]) -> str:
    """A candidate's name from the settings that vary across the sweep: ``fusion.k=30``,
    ``fusion.method=rrf,fusion.k=30`` (all of them when nothing varies)."""
    shown = [p for p in path_values if p in varying] or list(path_values)
    return ",".join(f"{p}={_text(path_values[p])}" for p in shown)


def _text(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return repr(value)
    return str(value) if not isinstance(value, (dict, list)) else _compact(value)


def _compact(value: Any) -> str:
    import json

    return json.dumps(value, separators=(",", ":"), sort_keys=True)


def grid_points(sweep: SweepSettings) -> list[dict[str, Any]]:
    """Every combination of the grid (last path varying fastest), or the explicit points, in order."""
    if sweep.points is not None:
        return [dict(point) for point in sweep.points]
    assert sweep.grid is not None
    paths = list(sweep.grid)
    return [dict(zip(paths, combo, strict=True)) for combo in itertools.product(*sweep.grid.values())]


def expand_sweep(
    sweep: SweepSettings,
    build: Callable[[dict[str, Any]], Any],
    identity: Callable[[Any], Any],
    *,
    taken: set[str] = frozenset(),
) -> SweepPlan:
    """The sweep's candidates, each as an override of the control.

    ``build(override)`` merges an override into the control and validates it (raising ``ValueError``
    for an invalid combination); ``identity(variant)`` says when two candidates are the same pipeline.
    ``taken`` are names already used (the control and explicit treatments).
    """
    points = grid_points(sweep)
    varying = [p for p in dict.fromkeys(k for point in points for k in point) if _varies(points, p)]
    candidates: dict[str, dict[str, Any]] = {}
    settings: dict[str, dict[str, Any]] = {}
    seen: dict[Any, str] = {}
    invalid: list[str] = []
    duplicates: list[str] = []
    for point in points:
        name = candidate_name(point, varying)
        override = nested(point)
        try:
            variant = build(override)
        except ValueError as exc:
            invalid.append(f"{name}: {_first_line(exc)}")
            continue
        key = identity(variant)
        if key in seen:
            duplicates.append(f"{name} is the same pipeline as {seen[key]}")
            continue
        if name in taken or name in candidates:
            duplicates.append(f"{name} is listed twice")
            continue
        seen[key] = name
        candidates[name] = override
        settings[name] = dict(point)
    return SweepPlan(candidates, settings, len(points), invalid, duplicates)


def _varies(points: list[dict[str, Any]], path: str) -> bool:
    values = [_compact(point.get(path, "<unset>")) for point in points]
    return len(set(values)) > 1


def _first_line(exc: Exception) -> str:
    errors = getattr(exc, "errors", None)
    if callable(errors):
        try:
            first = errors()[0]
            where = ".".join(str(p) for p in first.get("loc", ()))
            return f"{where}: {first['msg']}" if where else str(first["msg"])
        except (IndexError, KeyError, TypeError):
            pass
    return str(exc).splitlines()[0]
