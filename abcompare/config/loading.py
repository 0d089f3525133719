"""Loading a config file: the bounded YAML reader, ``--set`` overrides, treatments merged over the control,
a sweep expanded into treatments, relative paths resolved, files checked (:mod:`abcompare.config.checks`), and
every problem reported as one located error (file, line, key: :mod:`abcompare.config.locations`)."""

from __future__ import annotations

import copy
import difflib
import os
import re
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pydantic import (
    ValidationError,
)

from abcompare.config.checks import (  # re-exported: the runner and tests import them from here
    _check_files,
    check_judges,
    check_models,
    check_retrievers,
    collection_key,
    python_retrievers,
)
from abcompare.config.examples import example_named_like
from abcompare.config.ignored import ignored_settings
from abcompare.config.locations import (
    _all_field_names,
    _config_error,
    _describe,
    _yaml_path,
    line_of,
    variant_key,
)
from abcompare.config.models import EvaluationSettings, ExperimentConfig
from abcompare.config.overrides import apply_set_option, changed_settings, deep_merge
from abcompare.config.runtime import DEFAULT_EXPERIMENT, TrackingSettings
from abcompare.config.sweep import (
    SweepPlan,
    SweepSettings,
    expand_sweep,
    grid_points,
    nested,
)
from abcompare.config.yaml_reader import load_yaml
from abcompare.core.errors import AbcompareWarning, ConfigError
from abcompare.core.vocabulary import not_computed
from abcompare.retrieval.settings import VariantSettings

#: Re-exported: the runner and tests import the checks and locations from here.
__all__ = [
    "apply_set_option", "changed_settings", "check_judges", "check_models", "check_retrievers",
    "collection_key", "deep_merge", "line_of", "load_config", "python_retrievers", "variant_key",
]  # fmt: skip


def _forget_a_replaced_example(written: Any, raw: dict[str, Any], overrides: Sequence[str]) -> None:
    """A ``dataset.name`` that loaded a builtin example (no ``path``, no ``queries``) no longer names the
    dataset once ``--set dataset.path=...`` (or ``dataset.queries``) replaces that example: it is dropped,
    so the collection is named after its folder (``scifact``), not after the example it replaced
    (``hr-docs``), in the console, MLflow and files. A name also given with ``--set`` stays."""
    if not isinstance(written, dict) or written.get("name") is None:
        return
    if written.get("path") is not None or written.get("queries") is not None:
        return  # the name labelled a dataset read from files already: the writer's own label
    keys = {a.partition("=")[0].strip() for a in overrides}
    block = raw.get("dataset")
    if keys & {"dataset.path", "dataset.queries"} and "dataset.name" not in keys and isinstance(block, dict):
        block.pop("name", None)


def _experiment_follows_the_collection(written: Any, raw: dict[str, Any], overrides: Sequence[str]) -> bool:
    """Whether the experiment is named after the collection (``abcompare-<collection>``): when the config
    names none (``tracking.experiment``, in the file or with ``--set``), and when the one it names is the
    collection's own name for the example that ``--set dataset.path=...`` (or ``dataset.queries``)
    replaced (``abcompare-hr-docs`` on SciFact is ``abcompare-scifact``). Any other name stays."""
    tracking = raw.get("tracking")
    named = tracking.get("experiment") if isinstance(tracking, dict) else None
    if named is None:
        return True
    keys = {a.partition("=")[0].strip() for a in overrides}
    if "tracking.experiment" in keys or not isinstance(written, dict) or written.get("name") is None:
        return False
    block = raw.get("dataset")
    replaced = isinstance(block, dict) and block.get("name") is None  # _forget_a_replaced_example dropped it
    return replaced and named == f"{DEFAULT_EXPERIMENT}-{written['name']}"


def _described_on_the_collection(
    config: ExperimentConfig, written: Any, raw: dict[str, Any], overrides: Sequence[str]
) -> ExperimentConfig:
    """A description that ends "on <example>" says the collection the data gives once ``--set dataset.path``
    (or ``dataset.queries``) replaced that example: "... on hr-docs." on SciFact reads "... on scifact."
    (a description given with ``--set`` stays as given)."""
    block = raw.get("dataset")
    if not isinstance(written, dict) or written.get("name") is None or not isinstance(block, dict):
        return config
    keys = {a.partition("=")[0].strip() for a in overrides}
    if block.get("name") is not None or "description" in keys or config.dataset is None:
        return config  # not a replaced example (see _forget_a_replaced_example), or described with --set
    old, new = str(written["name"]), config.dataset.collection_name
    described = re.sub(rf"\bon {re.escape(old)}(\.?)$", lambda m: f"on {new}{m.group(1)}", config.description)
    return config if described == config.description else config.model_copy(update={"description": described})


def _in_experiment(config: ExperimentConfig, experiment: str, path: Path) -> ExperimentConfig:
    """``config`` logging into ``experiment`` (checked as a written name is: a collection's name may not
    make a usable experiment name)."""
    try:
        tracking = TrackingSettings.model_validate({**config.tracking.model_dump(), "experiment": experiment})
    except ValidationError as exc:
        raise ConfigError(
            f"the collection's experiment name {experiment!r} is not usable: {exc.errors()[0]['msg']}",
            file=path,
            field="tracking.experiment",
            hint="name the experiment in the config's tracking.experiment",
        ) from None
    return config.model_copy(update={"tracking": tracking})


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

    collections = raw.get("datasets") if isinstance(raw.get("datasets"), list) else []
    for dataset in [raw.get("dataset"), *collections]:
        for key in _PATH_FIELDS:
            fix(dataset, key)
        runs = dataset.get("runs") if isinstance(dataset, dict) else None
        for variant in runs if isinstance(runs, dict) else ():
            fix(runs, variant)
    fix(raw, "cache_dir")
    variants = [raw.get("control")] + list((raw.get("treatments") or {}).values())
    for variant in variants:
        if isinstance(variant, dict):
            fix(variant.get("run"), "path")
            fix(variant.get("query_planning"), "variants")
            for holder in _model_holders(variant):
                _resolve_model_folder(holder, base_dir)


def _model_holders(variant: dict[str, Any]) -> list[dict[str, Any]]:
    """The mappings of a raw variant that name a model: each retriever, the rerank."""
    retrievers = variant.get("retrievers")
    holders = list(retrievers.values()) if isinstance(retrievers, dict) else []
    return [h for h in [*holders, variant.get("rerank")] if isinstance(h, dict)]


def _resolve_model_folder(holder: dict[str, Any], base_dir: Path) -> None:
    """A model written as a folder or ONNX file relative to the config (``models/bge``, ``models/x.onnx``)
    resolves against the config's folder, as every other path does; a name that is no folder or file
    there (a hub name, a packaged name) stays as written."""
    name = holder.get("model")
    if not isinstance(name, str) or not name or os.path.isabs(os.path.expanduser(name)):
        return
    from abcompare.retrieval.models import PACKAGED_NAMES

    candidate = base_dir / name
    if name in PACKAGED_NAMES:
        return
    if candidate.is_dir():
        holder["model"] = str(candidate.resolve())
    elif candidate.suffix == ".onnx" and candidate.is_file():
        holder["model"] = os.path.abspath(candidate)  # not resolved: its tokenizer is beside the link


#: What a BEIR folder must hold for the settings it stands in for (the data stage reads these names).
def _merge_treatments(raw: dict[str, Any], path: Path, lines: dict[tuple[str, ...], int]) -> dict[str, Any]:
    """``raw`` with each treatment replaced by the control with its overrides laid over it."""
    control, treatments = raw.get("control"), raw.get("treatments")
    if not (isinstance(treatments, dict) and isinstance(control, dict)):
        return raw  # validation reports what is missing
    merged = {}
    for name, override in treatments.items():
        if not isinstance(override, dict | None):
            raise ConfigError(
                "a treatment must be a mapping of settings that override the control",
                file=path,
                line=lines.get(("treatments", str(name))),
                field=f"treatments.{name}",
            )
        merged[name] = deep_merge(control, override or {})
    return {**raw, "treatments": merged}


def _overrides(raw: dict[str, Any], swept: set[str]) -> dict[str, Any]:
    """Each treatment's own overrides as written (a sweep's points excluded: a grid crosses settings that
    some of its points ignore by design, and points that are one pipeline run once)."""
    treatments = raw.get("treatments")
    if not isinstance(treatments, dict):
        return {}
    return {name: override for name, override in treatments.items() if name not in swept}


def _refuse_ignored_settings(
    config: ExperimentConfig, written: dict[str, Any], path: Path, lines: dict[tuple[str, ...], int]
) -> None:
    """A setting written for a variant that its kind ignores (a ``rerank`` on a run file, RRF's ``k``
    under DBSF) is a located error, never silently dropped (:mod:`abcompare.config.ignored`)."""
    for name, variant in config.variants().items():
        for setting, why in ignored_settings(written.get(name), variant):
            loc = (*variant_key(name), *setting)
            field = ".".join(loc)
            raise ConfigError(f"{setting[-1]} {why}", file=path, line=line_of(loc, lines), field=field)


def _differences(control: Any, treatment: Any, prefix: str = "") -> list[str]:
    """The setting paths where two validated variants (as dumped) differ; an entry only one of them has
    (a retriever, a weight) is one path."""
    if isinstance(control, dict) and isinstance(treatment, dict):
        paths: list[str] = []
        for key in dict.fromkeys([*control, *treatment]):
            if key not in control or key not in treatment:
                paths.append(f"{prefix}{key}")
            else:
                paths += _differences(control[key], treatment[key], f"{prefix}{key}.")
        return paths
    return [] if control == treatment else [prefix.rstrip(".")]


def _warn_about_changes(config: ExperimentConfig, swept: set[str], path: Path) -> None:
    """A treatment that changes nothing, or more than one setting, is probably not what was meant; the
    comparison is between the validated variants, so a ``null`` that equals the default is caught too."""
    control = config.control.model_dump(mode="json")
    for name, treatment in config.treatments.items():
        if name in swept:  # a sweep changes several settings by design
            continue
        changed = _differences(control, treatment.model_dump(mode="json"))
        if any(path.startswith("run.") for path in changed):  # another run (file or retriever): one change
            changed = [path for path in changed if not path.startswith("run.")] + ["run"]
        if "run" in changed:  # a run instead of retrieval, or back: its retrieval settings are that change
            changed = ["run"]
        added = [p for p in changed if p.count(".") == 1 and p.startswith("retrievers.")]
        if added and control["fusion"] is None and "fusion" in changed:
            changed.remove("fusion")  # a second retriever needs a fusion: one change, not two
        if len(changed) > 1:
            warnings.warn(
                f"{path}: treatment {name!r} changes {len(changed)} settings ({', '.join(changed)}): "
                "a difference can then not be attributed to one change",
                AbcompareWarning,
                stacklevel=3,
            )
        elif not changed:
            warnings.warn(
                f"{path}: treatment {name!r} changes nothing relative to the control",
                AbcompareWarning,
                stacklevel=3,
            )


def _shipped_hint(path: Path) -> str | None:
    """For a missing config named like a shipped one (``configs/rrf_vs_dbsf.yaml`` in a folder that is no
    checkout, e.g. after ``pip install``): the ``--example`` that runs the shipped file from any folder."""
    name = example_named_like(path)
    if name is None:
        return None
    return (
        f"{name} is a config shipped with abcompare: `abcompare run --example {name}` runs it from any folder"
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
        raise ConfigError("config file not found", file=path, hint=_shipped_hint(path)) from None
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
    written_dataset = copy.deepcopy(raw.get("dataset"))
    for assignment in overrides:
        apply_set_option(raw, assignment)
    _forget_a_replaced_example(written_dataset, raw, overrides)
    follows_collection = _experiment_follows_the_collection(written_dataset, raw, overrides)
    _resolve_paths(raw, path.resolve().parent)

    # a sweep expands into treatments before anything else sees the config
    plan = _expand_sweep(raw, path, lines)
    swept = set(plan.candidates) if plan is not None else set()
    # treatments are overrides of the control: merged before validation, so errors point at their keys
    written = {"control": raw.get("control"), **_overrides(raw, swept)}
    raw = _merge_treatments(raw, path, lines)
    try:
        config = ExperimentConfig.model_validate(raw)
    except ValidationError as exc:
        raise _config_error(exc, path, lines) from None
    if follows_collection and config.dataset is not None and config.dataset.collection_name is not None:
        config = _in_experiment(config, f"{DEFAULT_EXPERIMENT}-{config.dataset.collection_name}", path)
    config = _described_on_the_collection(config, written_dataset, raw, overrides)
    _warn_about_changes(config, swept, path)
    _refuse_ignored_settings(config, written, path, lines)
    _check_files(config, path, lines)
    check_models(config, path, lines)
    config._sweep_plan = plan
    config._lines, config._source = lines, path
    return config


def _expand_sweep(raw: dict[str, Any], path: Path, lines: dict[tuple[str, ...], int]) -> SweepPlan | None:
    """Expand ``sweep:`` into treatments of ``raw`` (in place, after any explicit ones); errors are
    located at the sweep's keys as the user wrote them. What is known before expanding (an unknown setting,
    a size past ``max_variants``, a ``select.metric`` that is not computed, a missing swept file) is refused
    before a single point is built; each point's paths resolve against the config's folder, as the same
    setting written in a treatment does. Returns the plan, or None when the config has no sweep."""
    block = raw.get("sweep")
    if block is None:
        return None
    at = _SweepLocator(path, lines)
    try:
        sweep = SweepSettings.model_validate(block)
    except ValidationError as exc:
        first = exc.errors()[0]
        message = _describe(first, _all_field_names(SweepSettings)).removeprefix("Value error, ")
        raise at.error(message, "sweep", *(str(p) for p in first["loc"])) from None
    control = raw.get("control")
    if not isinstance(control, dict):
        return None  # validation reports the missing control
    where = _swept_settings(sweep)
    _check_sweep_before_expanding(sweep, raw, where, at)
    base = path.resolve().parent

    def resolve(override: dict[str, Any]) -> dict[str, Any]:
        holder = {"treatments": {"point": override}}
        _resolve_paths(holder, base)  # the one rule for a treatment's paths
        return holder["treatments"]["point"]

    def build(override: dict[str, Any]) -> VariantSettings:
        try:
            return VariantSettings.model_validate(deep_merge(control, override))
        except ValidationError as exc:
            raise _point_error(exc, where, at) from None

    _check_swept_files(sweep, resolve, where, at)
    explicit = raw.get("treatments") if isinstance(raw.get("treatments"), dict) else {}
    taken = {"control", *explicit}
    plan = expand_sweep(sweep, build, VariantSettings.pipeline_identity, taken=taken, resolve=resolve)
    if not plan.candidates:
        reason = plan.invalid[0] if plan.invalid else "every point repeats another"
        raise at.error(f"the sweep has no valid candidate ({reason})", "sweep", _axis(sweep))
    raw["treatments"] = {**explicit, **plan.candidates}
    return plan


class _SweepLocator:
    """Errors at a sweep's keys: the file, the line of the deepest key written, the key path."""

    def __init__(self, path: Path, lines: dict[tuple[str, ...], int]) -> None:
        self.path, self.lines = path, lines

    def error(self, message: str, *loc: str, hint: str | None = None) -> ConfigError:
        return ConfigError(
            message, file=self.path, line=line_of(loc, self.lines), field=".".join(loc), hint=hint
        )


def _axis(sweep: SweepSettings) -> str:
    return "grid" if sweep.grid is not None else "points"


def _swept_settings(sweep: SweepSettings) -> dict[str, tuple[str, ...]]:
    """Each swept setting path -> where it is written (``sweep.grid.<path>``, or its first point's key)."""
    where = {setting: ("sweep", "grid", setting) for setting in sweep.grid or {}}
    for i, point in enumerate(sweep.points or []):
        for setting in point:
            where.setdefault(setting, ("sweep", "points", str(i), setting))
    return where


def _unknown_setting(
    setting: str, unknown: str, known: list[str], loc: tuple[str, ...], at: _SweepLocator
) -> ConfigError:
    """``setting`` (as written) names a key ``unknown`` that does not exist; suggest the nearest ``known``."""
    close = difflib.get_close_matches(unknown, known, n=1)
    return at.error(
        f"unknown setting {setting!r}" + (f" (did you mean {close[0]!r}?)" if close else ""),
        *loc,
        hint="a sweep varies settings of the control, written as paths like fusion.k",
    )


def _check_sweep_before_expanding(
    sweep: SweepSettings, raw: dict[str, Any], where: dict[str, tuple[str, ...]], at: _SweepLocator
) -> None:
    """What is known from the sweep's text alone, refused before any point is built: a setting the control
    does not have, a size past ``max_variants`` (the product of the grid's list lengths), a
    ``select.metric`` the evaluation does not compute."""
    for setting, loc in where.items():
        head = setting.split(".")[0]
        if head not in VariantSettings.model_fields:
            raise _unknown_setting(setting, head, list(VariantSettings.model_fields), loc, at)
    too_large = sweep.size_problem()
    if too_large is not None:
        hint = "narrow the grid, or raise sweep.max_variants (at most 1000) if you mean it"
        raise at.error(too_large, "sweep", _axis(sweep), hint=hint)
    try:
        evaluation = EvaluationSettings.model_validate(raw.get("evaluation") or {})
    except ValidationError:
        return  # the config's validation reports it, at its own key
    if sweep.select.metric is not None:
        problem = not_computed(sweep.select.metric, list(evaluation.metrics), evaluation.cutoffs)
        if problem is not None:
            raise at.error(problem, "sweep", "select", "metric")


def _point_error(
    exc: ValidationError, where: dict[str, tuple[str, ...]], at: _SweepLocator
) -> ValueError | ConfigError:
    """An invalid point: a ``ValueError`` naming the setting as written (no discriminator tag), so the
    point is skipped; an unknown key under a swept setting is the config's error (every point has it)."""
    first = exc.errors()[0]
    loc = _yaml_path(tuple(str(p) for p in first["loc"]) + tuple((first.get("ctx") or {}).get("at", ())))
    written = ".".join(loc)
    if first["type"] == "extra_forbidden":
        for setting, key in where.items():
            if setting == written or setting.startswith(f"{written}."):
                return _unknown_setting(setting, loc[-1], sorted(_all_field_names(VariantSettings)), key, at)
    message = _describe(first, _all_field_names(VariantSettings)).removeprefix("Value error, ")
    return ValueError(f"{written}: {message}" if written else message)


def _check_swept_files(
    sweep: SweepSettings,
    resolve: Callable[[dict[str, Any]], dict[str, Any]],
    where: dict[str, tuple[str, ...]],
    at: _SweepLocator,
) -> None:
    """A swept path setting (a run file per point) names a file that exists, located at the sweep's key."""

    def leaf(override: Any, setting: str) -> Any:
        for key in setting.split("."):
            override = override.get(key) if isinstance(override, dict) else None
        return override

    probe = "relative-probe"  # a setting is a path when the path rule changes a relative value
    is_path = {setting: leaf(resolve(nested({setting: probe})), setting) != probe for setting in where}
    for point in grid_points(sweep):
        for setting, value in point.items():
            if not is_path[setting] or not isinstance(value, str):
                continue
            resolved = leaf(resolve(nested({setting: value})), setting)
            if not Path(resolved).exists():
                raise at.error(
                    f"file not found: {resolved} (written {value!r})",
                    *where[setting],
                    hint="relative paths are resolved against the config file's folder",
                )
