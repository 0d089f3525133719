"""Loading a config file: the bounded YAML reader, ``--set`` overrides, treatments merged over the control,
a sweep expanded into treatments, relative paths resolved, files checked, and every problem reported as one
located error (file, line, key)."""

from __future__ import annotations

import copy
import difflib
import os
import warnings
from pathlib import Path
from typing import Any

from pydantic import (
    BaseModel,
    ValidationError,
)

from abcompare.config.models import (
    ExperimentConfig,
)
from abcompare.config.sweep import SweepPlan, SweepSettings, expand_sweep
from abcompare.config.yaml_reader import load_yaml, load_yaml_value
from abcompare.core.errors import AbcompareWarning, ConfigError
from abcompare.retrieval.settings import VariantSettings


def deep_merge(base: Any, override: Any) -> Any:
    """``override`` laid over ``base``: mappings merge key by key, ``null`` removes a key (back to its
    default, e.g. ``rerank: null`` or ``retrievers: {dense: null}``), anything else replaces."""
    if isinstance(base, dict) and isinstance(override, dict):
        merged = dict(base)
        for key, value in override.items():
            if value is None:
                merged.pop(key, None)
            else:
                merged[key] = deep_merge(base[key], value) if key in base else copy.deepcopy(value)
        return merged
    return copy.deepcopy(override)


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
    node = raw
    for key in keys[:-1]:
        child = node.get(key)
        if child is None:
            child = node[key] = {}
        if not isinstance(child, dict):
            raise ConfigError(f"cannot set {path}: {key} is not a mapping", field=path)
        node = child
    node[keys[-1]] = value


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
    loc = tuple(str(p) for p in first["loc"]) + tuple((first.get("ctx") or {}).get("at", ()))
    yaml_loc = _yaml_path(loc)
    line = None
    for cut in range(len(yaml_loc), 0, -1):
        line = lines.get(yaml_loc[:cut])
        if line is not None:
            break
    more = len(exc.errors()) - 1
    message = _describe(first, vocabulary) + (f" (and {more} more problem{'s' * (more > 1)})" if more else "")
    return ConfigError(message, file=path, line=line, field=".".join(yaml_loc) or None)


_PATH_FIELDS = ("path", "queries", "annotations", "spans", "corpus")


def _resolve_paths(raw: dict[str, Any], base_dir: Path) -> None:
    """Relative paths resolve against the config file's folder, so a config runs from anywhere."""

    def resolved(value: str) -> str:
        value = os.path.expanduser(value)
        return str(Path(value) if os.path.isabs(value) else (base_dir / value).resolve())

    def fix(mapping: Any, key: str) -> None:
        if isinstance(mapping, dict) and isinstance(mapping.get(key), str):
            mapping[key] = resolved(mapping[key])
        elif isinstance(mapping, dict) and isinstance(mapping.get(key), list):
            mapping[key] = [resolved(v) if isinstance(v, str) else v for v in mapping[key]]

    dataset = raw.get("dataset")
    for key in _PATH_FIELDS:
        fix(dataset, key)
    fix(raw, "cache_dir")
    variants = [raw.get("control")] + list((raw.get("treatments") or {}).values())
    for variant in variants:
        if isinstance(variant, dict):
            fix(variant.get("run"), "path")
            fix(variant.get("rerank"), "model_path")


def _check_files(config: ExperimentConfig, path: Path, lines: dict[tuple[str, ...], int]) -> None:
    """Every file or folder named in the config must exist, reported with its YAML path."""
    checks: list[tuple[tuple[str, ...], Path | None]] = []
    for key in _PATH_FIELDS:
        value = getattr(config.dataset, key)
        if isinstance(value, list):
            checks += [(("dataset", key, str(i)), item) for i, item in enumerate(value)]
        else:
            checks.append((("dataset", key), value))
    for name, variant in config.variants().items():
        if variant.run is not None:
            where = ("control",) if name == "control" else ("treatments", name)
            checks.append(((*where, "run", "path"), Path(variant.run.path)))
    for loc, value in checks:
        if value is not None and not Path(value).exists():
            raise ConfigError(
                f"file not found: {value}",
                file=path,
                line=lines.get(loc) or lines.get(loc[:-1]),
                field=".".join(loc),
                hint="relative paths are resolved against the config file's folder",
            )


def load_config(path: str | Path, overrides: list[str] | tuple[str, ...] = ()) -> ExperimentConfig:
    """Read, override, validate and resolve a YAML experiment config.

    Parameters
    ----------
    path : str or Path
        The YAML config; relative paths in it resolve against its folder.
    overrides : sequence of str
        ``key.path=value`` settings laid over the file (``--set``); the value is read as YAML.

    Returns
    -------
    ExperimentConfig
        Validated and immutable; a sweep is already expanded into treatments (``sweep_plan`` says how).
        A problem is a ``ConfigError`` naming the file, the line and the key, with a suggestion for a
        misspelt key.

    Examples
    --------
    >>> from pathlib import Path
    >>> repo = Path(__file__).resolve().parents[2]  # the checkout's shipped configs
    >>> config = load_config(repo / "configs" / "rrf_vs_dbsf.yaml", ["significance.n_resamples=2000"])
    >>> list(config.variants()), config.significance.n_resamples, config.evaluation.primary_metric
    (['control', 'dbsf'], 2000, 'ndcg@10')
    """
    path = Path(path)
    if path.is_dir():
        raise ConfigError("expected a config file, found a folder", file=path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError("config file not found", file=path) from None
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"cannot read config: not UTF-8 text ({exc.reason} at byte {exc.start})", file=path
        ) from None
    except OSError as exc:
        raise ConfigError(f"cannot read config: {exc.strerror or exc}", file=path) from None
    document = load_yaml(text, path)
    raw, lines = document.data, document.lines
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ConfigError("the config must be a YAML mapping (key: value)", file=path, line=1)
    for assignment in overrides:
        apply_set_option(raw, assignment)
    _resolve_paths(raw, path.resolve().parent)

    # a sweep expands into treatments before anything else sees the config
    plan = _expand_sweep(raw, path, lines)
    swept = set(plan.candidates) if plan is not None else set()
    # treatments are overrides of the control: merge before validation, remember where each came from
    control = raw.get("control")
    treatments = raw.get("treatments")
    if isinstance(treatments, dict) and isinstance(control, dict):
        merged = {}
        for name, override in treatments.items():
            if override is None:
                override = {}
            if not isinstance(override, dict):
                raise ConfigError(
                    "a treatment must be a mapping of settings that override the control",
                    file=path,
                    line=lines.get(("treatments", str(name))),
                    field=f"treatments.{name}",
                )
            merged[name] = deep_merge(control, override)
            if name in swept:  # a sweep changes several settings by design
                continue
            changed = changed_settings(control, override)
            if len(changed) > 1:
                warnings.warn(
                    f"{path}: treatment {name!r} changes {len(changed)} settings ({', '.join(changed)}): "
                    "a difference can then not be attributed to one change",
                    AbcompareWarning,
                    stacklevel=2,
                )
            elif not changed:
                warnings.warn(
                    f"{path}: treatment {name!r} changes nothing relative to the control",
                    AbcompareWarning,
                    stacklevel=2,
                )
        raw = {**raw, "treatments": merged}
    try:
        config = ExperimentConfig.model_validate(raw)
    except ValidationError as exc:
        raise _config_error(exc, path, lines) from None
    _check_files(config, path, lines)
    config._sweep_plan = plan
    return config


def _expand_sweep(raw: dict[str, Any], path: Path, lines: dict[tuple[str, ...], int]) -> SweepPlan | None:
    """Expand ``sweep:`` into treatments of ``raw`` (in place, after any explicit ones); errors are
    located at the sweep's keys. Returns the plan, or None when the config has no sweep."""
    block = raw.get("sweep")
    if block is None:
        return None
    try:
        sweep = SweepSettings.model_validate(block)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ("sweep", *(str(p) for p in first["loc"]))
        line = next((lines[loc[:cut]] for cut in range(len(loc), 0, -1) if loc[:cut] in lines), None)
        raise ConfigError(
            _describe(first, _all_field_names(SweepSettings)), file=path, line=line, field=".".join(loc)
        ) from None
    control = raw.get("control")
    if not isinstance(control, dict):
        return None  # validation reports the missing control
    for setting in sweep.grid or {k: None for point in sweep.points or [] for k in point}:
        head = setting.split(".")[0]
        if head not in VariantSettings.model_fields:
            close = difflib.get_close_matches(head, list(VariantSettings.model_fields), n=1)
            raise ConfigError(
                f"unknown setting {setting!r}" + (f" (did you mean {close[0]!r}?)" if close else ""),
                file=path,
                line=lines.get(("sweep", "grid", setting)) or lines.get(("sweep",)),
                field=f"sweep.grid.{setting}" if sweep.grid else "sweep.points",
                hint="a sweep varies settings of the control, written as paths like fusion.k",
            )
    explicit = raw.get("treatments") if isinstance(raw.get("treatments"), dict) else {}
    plan = expand_sweep(
        sweep,
        build=lambda override: VariantSettings.model_validate(deep_merge(control, override)),
        identity=VariantSettings.pipeline_identity,
        taken={"control", *explicit},
    )
    where = {"file": path, "line": lines.get(("sweep",)), "field": "sweep"}
    if not plan.candidates:
        reason = plan.invalid[0] if plan.invalid else "every point repeats another"
        raise ConfigError(f"the sweep has no valid candidate ({reason})", **where)
    if len(plan.candidates) > sweep.max_variants:
        raise ConfigError(
            f"the sweep expands into {len(plan.candidates)} candidates, more than max_variants "
            f"({sweep.max_variants})",
            hint="narrow the grid, or raise sweep.max_variants (at most 1000) if you mean it",
            **where,
        )
    raw["treatments"] = {**explicit, **plan.candidates}
    return plan
