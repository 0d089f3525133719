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
import hashlib
import itertools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from abcompare.core.errors import ConfigError
from abcompare.core.limits import MAX_NAME_LENGTH, MAX_VARIANTS
from abcompare.core.naming import label_problem, mlflow_safe_name
from abcompare.core.vocabulary import metric_name, parse_metric


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SelectSettings(_Model):
    """How the best candidate is chosen and tested (``abcompare.tuned_comparison``)."""

    metric: str | None = Field(
        None, description="The metric the choice maximises, e.g. ndcg@10; default: the primary metric."
    )
    folds: int = Field(5, ge=2, le=50, description="Cross-validation folds over the queries.")

    @field_validator("metric")
    @classmethod
    def _a_metric_name(cls, value: str | None) -> str | None:
        """Written canonically (``NDCG_at_10`` is ``ndcg@10``), so it names a column of the metrics table."""
        if value is None:
            return None
        try:
            return metric_name(*parse_metric(value))
        except ConfigError as exc:
            raise ValueError(f"{exc.message} ({exc.hint})" if exc.hint else exc.message) from None


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
        200,
        ge=1,
        le=MAX_VARIANTS,
        description="Refuse a sweep with more points than this (the grid's size, before invalid and "
        "repeated points are left out).",
    )

    @field_validator("grid")
    @classmethod
    def _values_are_lists(cls, value: dict[str, list[Any]] | None) -> dict[str, list[Any]] | None:
        if value is not None:
            if not value:
                raise ValueError("the grid is empty: give each setting to sweep a list of values")
            for path, values in value.items():
                _check_setting_path(path)
                if not values:
                    raise ValueError(f"grid path {path!r} has no values")
        return value

    @field_validator("points")
    @classmethod
    def _points_set_something(cls, value: list[dict[str, Any]] | None) -> list[dict[str, Any]] | None:
        for i, point in enumerate(value or []):
            if not point:
                raise ValueError(f"point {i + 1} sets nothing: give it {{setting path: value}}")
            for path in point:
                _check_setting_path(path)
        return value

    @model_validator(mode="after")
    def _one_source(self) -> SweepSettings:
        if (self.grid is None) == (self.points is None):
            raise ValueError("give either 'grid' (every combination) or 'points' (an explicit list)")
        if self.points is not None and not self.points:
            raise ValueError("'points' is empty")
        return self

    def size(self) -> int:
        """How many points the sweep has, known before expanding it: the product of the grid's list lengths
        (or the number of explicit points)."""
        if self.points is not None:
            return len(self.points)
        assert self.grid is not None
        return math.prod(len(values) for values in self.grid.values())

    def size_problem(self) -> str | None:
        """Why the sweep is too large to expand (its size and where it comes from), or None."""
        size = self.size()
        if size <= self.max_variants:
            return None
        if self.grid is None:
            return f"the sweep lists {size:,} points, more than max_variants ({self.max_variants})"
        factors = " x ".join(f"{len(values)} of {path}" for path, values in self.grid.items())
        bound = self.max_variants
        return f"the sweep's grid has {size:,} points ({factors}), more than max_variants ({bound})"


def _check_setting_path(path: str) -> None:
    """A setting path is dotted names, none empty (``fusion.k``; not ``fusion..k`` or ``.k``)."""
    if not path.strip() or any(not part.strip() for part in path.split(".")):
        raise ValueError(f"setting path {path!r} has an empty part: write it as dotted names, e.g. fusion.k")


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


def candidate_name(path_values: Mapping[str, Any], varying: list[str], *, whole_paths: bool = False) -> str:
    """A candidate's name from the settings that vary across the sweep: ``fusion.k=30``,
    ``fusion.method=rrf,fusion.k=30`` (all of them when nothing varies).

    The name is one abcompare accepts (:func:`abcompare.core.naming.name_problem`): a value that is a path
    shows its file name (``run.path=a.trec``; the whole path with ``_`` for its separators when
    ``whole_paths``), an invisible character becomes ``_``, and a name too long ends in a digest.
    """
    shown = [p for p in path_values if p in varying] or list(path_values)
    text = ",".join(f"{p}={_text(path_values[p], whole_paths)}" for p in shown)
    return _bounded(_visible(text).strip())


def _text(value: Any, whole_paths: bool = False) -> str:
    """A value as a name part: a path shows its file name (or, ``whole_paths``, its parts joined by ``_``)."""
    text = _written(value)
    if "/" in text or "\\" in text:
        parts = [part for part in text.replace("\\", "/").split("/") if part not in ("", ".")]
        text = "_".join(parts) if whole_paths or isinstance(value, (dict, list)) else (parts or ["_"])[-1]
    return text


def _written(value: Any) -> str:
    """A value as YAML writes it: ``null``, ``true``, ``1.0``, ``{"a":1}``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return repr(value)
    return str(value) if not isinstance(value, (dict, list)) else _compact(value)


def _written_name(path_values: Mapping[str, Any], varying: list[str]) -> str:
    """The name as the values are written, before anything is made safe."""
    shown = [p for p in path_values if p in varying] or list(path_values)
    return ",".join(f"{p}={_written(path_values[p])}" for p in shown)


def _visible(text: str) -> str:
    """``text`` with every control or invisible character (the names' rule) as ``_``."""
    return "".join("_" if label_problem(f"x{char}") is not None else char for char in text)


def _bounded(name: str) -> str:
    """``name`` within the names' length bound: a long one keeps its start and ends in a digest of itself."""
    if len(name) <= MAX_NAME_LENGTH:
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:8]
    return f"{name[: MAX_NAME_LENGTH - 9]}~{digest}"


def _clash_key(name: str) -> str:
    """Two names meet when their MLflow keys do, ignoring case (as ``core.naming.first_collision``)."""
    return mlflow_safe_name(name).casefold()


def candidate_names(points: list[dict[str, Any]], varying: list[str], taken: set[str]) -> list[str]:
    """Each point's name, readable and distinct: equal points share one name (they are one pipeline), a
    file name shared by different paths shows the whole paths, and a name that still meets another (or
    a ``taken`` one other than itself) gets ``-2``, ``-3``."""
    short = [candidate_name(point, varying) for point in points]
    written = [_compact(point) for point in points]
    meaning: dict[str, set[str]] = {}
    for name, point in zip(short, written, strict=True):
        meaning.setdefault(_clash_key(name), set()).add(point)
    reserved = {_clash_key(name): name for name in taken}
    given: set[str] = set()  # the clash keys of the names given so far
    names: dict[str, str] = {}  # the point as written -> its name
    for point, name, text in zip(points, short, written, strict=True):
        if text in names:
            continue
        if len(meaning[_clash_key(name)]) > 1:
            name = candidate_name(point, varying, whole_paths=True)
        as_written = _written_name(point, varying)
        unique, n = name, 1
        while _clashes(unique, as_written, given, reserved):
            n += 1
            unique = _bounded(f"{name}-{n}")
        given.add(_clash_key(unique))
        names[text] = unique
    return [names[text] for text in written]


def _clashes(name: str, as_written: str, given: set[str], reserved: dict[str, str]) -> bool:
    """``name`` meets a name given before, or a taken one (unless it is that very name as written: the
    point is then reported as listed twice)."""
    key = _clash_key(name)
    return key in given or (key in reserved and not reserved[key] == name == as_written)


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
    resolve: Callable[[dict[str, Any]], dict[str, Any]] = lambda override: override,
) -> SweepPlan:
    """The sweep's candidates, each as an override of the control.

    ``build(override)`` merges an override into the control and validates it (raising ``ValueError``
    for an invalid combination); ``identity(variant)`` says when two candidates are the same pipeline.
    ``taken`` are names already used (the control and explicit treatments). ``resolve(override)`` makes a
    point's override what the same settings written in a treatment become (relative paths resolved);
    names and ``settings`` keep the values as written. A sweep larger than ``max_variants`` is refused
    (``ValueError``) before a single point is built.
    """
    problem = sweep.size_problem()
    if problem is not None:
        raise ValueError(problem)
    points = grid_points(sweep)
    varying = [p for p in dict.fromkeys(k for point in points for k in point) if _varies(points, p)]
    names = candidate_names(points, varying, set(taken))
    candidates: dict[str, dict[str, Any]] = {}
    settings: dict[str, dict[str, Any]] = {}
    seen: dict[Any, str] = {}
    invalid: list[str] = []
    duplicates: list[str] = []
    for point, name in zip(points, names, strict=True):
        override = resolve(nested(point))
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
