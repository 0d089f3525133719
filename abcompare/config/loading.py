"""Loading a config file: the bounded YAML reader, ``--set`` overrides, treatments merged over the control,
a sweep expanded into treatments, relative paths resolved, files checked, and every problem reported as one
located error (file, line, key)."""

from __future__ import annotations

import copy
import difflib
import os
import re
import typing
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import (
    BaseModel,
    ValidationError,
)

from abcompare.config.models import (
    DEFAULT_EXPERIMENT,
    ExperimentConfig,
    TrackingSettings,
)
from abcompare.config.sweep import (
    SweepPlan,
    SweepSettings,
    expand_sweep,
    grid_points,
    nested,
)
from abcompare.config.yaml_reader import load_yaml, load_yaml_value
from abcompare.core.errors import AbcompareWarning, ConfigError, RetrievalError
from abcompare.core.vocabulary import not_computed
from abcompare.retrieval.settings import DenseSettings, VariantSettings


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


def _child(node: dict[str, Any] | list[Any], key: str, path: str) -> Any:
    """``node[key]`` for a mapping (None when absent), or the item at index ``key`` of a list
    (``datasets.1``): an index past its end is a ``ConfigError``."""
    if isinstance(node, dict):
        return node.get(key)
    if not key.isdigit() or int(key) >= len(node):
        raise ConfigError(f"cannot set {path}: the list has no item {key} (it has {len(node)})", field=path)
    return node[int(key)]


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
BEIR_QUERIES = "queries.jsonl"


def _named_files(config: ExperimentConfig) -> list[tuple[tuple[str, ...], Path, str]]:
    """Every file or folder the config names, with its key and what it must be (``file`` or ``folder``)."""
    named: list[tuple[tuple[str, ...], Path, str]] = []
    dataset = config.dataset
    if dataset.path is not None:
        named.append((("dataset", "path"), dataset.path, "folder"))
    for key in ("queries", "spans", "corpus"):
        if getattr(dataset, key) is not None:
            named.append((("dataset", key), getattr(dataset, key), "file"))
    annotations = dataset.annotations
    if isinstance(annotations, list):
        named += [(("dataset", "annotations", str(i)), item, "file") for i, item in enumerate(annotations)]
    elif annotations is not None:
        named.append((("dataset", "annotations"), annotations, "file"))
    for name, variant in config.variants().items():
        if variant.run is not None and variant.run.path is not None:
            where = variant_key(name)
            named.append(((*where, "run", "path"), Path(variant.run.path), "file"))
    if config.cache_dir is not None and config.cache_dir.exists():
        named.append((("cache_dir",), config.cache_dir, "folder"))
    return named


def _file_problem(value: Path, kind: str) -> str | None:
    """Why ``value`` is not the ``kind`` (file or folder) a setting needs, or None."""
    if not value.exists():
        return f"file not found: {value}"
    if kind == "file" and value.is_dir():
        return f"expected a file, found a folder: {value}"
    if kind == "folder" and not value.is_dir():
        return f"expected a folder, found a file: {value}"
    return None


def _beir_problem(config: ExperimentConfig) -> tuple[tuple[str, ...], str] | None:
    """What a BEIR folder lacks for the settings it stands in for (its queries, the split's qrels), at the
    key to change; None when the folder has them or the config names its own files."""
    dataset = config.dataset
    folder = dataset.path
    if folder is None or not folder.is_dir():
        return None
    if dataset.queries is None and not (folder / BEIR_QUERIES).is_file():
        return ("dataset", "path"), f"the dataset folder has no {BEIR_QUERIES}: {folder}"
    qrels = folder / "qrels"
    wanted = [f"{dataset.split}.tsv"] + [f"{dataset.split}.chunks.tsv"] * (dataset.level == "chunk")
    if dataset.annotations is None and not any((qrels / name).is_file() for name in wanted):
        splits = sorted(p.name.split(".")[0] for p in qrels.glob("*.tsv")) if qrels.is_dir() else []
        there = f" (splits there: {', '.join(dict.fromkeys(splits))})" if splits else " (it has none)"
        return ("dataset", "split"), f"no qrels for split {dataset.split!r} in {qrels}{there}"
    return None


def _spans_problem(config: ExperimentConfig) -> tuple[tuple[str, ...], str] | None:
    """Judging at span level needs evidence spans: named, or in the dataset's folder (``spans/<split>.jsonl``
    or ``spans.jsonl``, where the data stage looks)."""
    dataset = config.dataset
    if dataset.level != "span" or dataset.spans is not None:
        return None
    folder = dataset.path
    from_example = dataset.queries is None or dataset.annotations is None
    if folder is None and dataset.name is not None and from_example:
        from abcompare.examples import example_path

        folder = example_path(dataset.name)
    candidates = [folder / "spans" / f"{dataset.split}.jsonl", folder / "spans.jsonl"] if folder else []
    if any(candidate.is_file() for candidate in candidates):
        return None
    where = f" (none in {folder})" if folder else ""
    return ("dataset", "level"), f"judging at span level needs evidence spans: give dataset.spans{where}"


def _check_files(config: ExperimentConfig, path: Path, lines: dict[tuple[str, ...], int]) -> None:
    """Every file or folder named in the config exists and is what its setting needs (a file, a folder,
    a BEIR folder with the split's qrels), reported with its YAML path before anything runs; across
    several collections, each one's (``datasets.<i>.path``, ``datasets.<i>.runs.<variant>``)."""
    if config.datasets is None:
        _check_collection_files(config, path, lines, lambda loc: loc)
        return
    for i, (entry, collection) in enumerate(zip(config.datasets, config.collections().values(), strict=True)):
        _check_collection_files(collection, path, lines, _collection_key(i, set(entry.runs)))


def _collection_key(index: int, runs: set[str]) -> Callable[[tuple[str, ...]], tuple[str, ...]]:
    """Where a one-collection config's key is written in the several-collections config it came from:
    ``dataset.X`` at ``datasets.<index>.X``, a variant's ``run.path`` at ``datasets.<index>.runs.<variant>``
    when the collection names its own file (``runs``), every other key where it is."""
    entry = ("datasets", str(index))

    def key(loc: tuple[str, ...]) -> tuple[str, ...]:
        if loc[:1] == ("dataset",):
            return (*entry, *loc[1:])
        variant = "control" if loc[:1] == ("control",) else loc[1] if loc[:1] == ("treatments",) else None
        if variant in runs and loc[-2:] == ("run", "path"):
            return (*entry, "runs", variant)
        return loc

    return key


def collection_key(config: ExperimentConfig, collection: str, loc: tuple[str, ...]) -> tuple[str, ...]:
    """The key ``loc`` of collection ``collection``'s own config (``ExperimentConfig.collections``) as the
    several-collections ``config`` writes it (``dataset.path`` -> ``datasets.2.path``)."""
    assert config.datasets is not None
    index = [entry.name for entry in config.datasets].index(collection)
    return _collection_key(index, set(config.datasets[index].runs))(loc)


def _check_collection_files(
    config: ExperimentConfig,
    path: Path,
    lines: dict[tuple[str, ...], int],
    written: Callable[[tuple[str, ...]], tuple[str, ...]],
) -> None:
    """One collection's files (see :func:`_check_files`); ``written`` maps a key to where it is written."""
    hint = "relative paths are resolved against the config file's folder"
    problems = [(loc, _file_problem(Path(value), kind), hint) for loc, value, kind in _named_files(config)]
    beir = _beir_problem(config)
    if beir is not None:
        problems.append((*beir, "give a folder with queries.jsonl and qrels/<split>.tsv, or name the files"))
    spans = _spans_problem(config)
    if spans is not None:
        problems.append((*spans, "JSONL lines {query_id, document_id, start, end}; docs/data.md"))
    for loc, problem, advice in problems:
        if problem is not None:
            loc = written(loc)
            line = line_of(loc, lines, written(("dataset", "path")), written(("dataset",)))
            raise ConfigError(problem, file=path, line=line, field=".".join(loc), hint=advice)


def _named_models(config: ExperimentConfig) -> list[tuple[tuple[str, ...], str, str | None, str]]:
    """Every model the config's variants use: the key of its settings, the model, its backend and what
    runs it (``dense``: a dense retriever or a bi-encoder rerank; ``cross-encoder``). A variant that is a
    run file retrieves nothing, so its models are not used."""
    models: list[tuple[tuple[str, ...], str, str | None, str]] = []
    for name, variant in config.variants().items():
        if variant.run is not None:
            continue
        where = variant_key(name)
        for retriever, settings in variant.retrievers.items():
            if isinstance(settings, DenseSettings):
                models.append(((*where, "retrievers", retriever), settings.model, settings.backend, "dense"))
        rerank = variant.rerank
        if rerank is not None:
            kind = "dense" if rerank.type == "bi-encoder" else "cross-encoder"
            models.append(((*where, "rerank"), rerank.model, rerank.backend, kind))
    return models


def _check_cross_encoder(model: str, backend: str | None) -> None:
    """A cross-encoder runs on torch, from a folder found offline."""
    from abcompare.retrieval.models import check_installed, declared_architectures, locate_model, model_kind

    if backend not in (None, "torch"):
        raise RetrievalError(
            f"a cross-encoder runs on backend 'torch', not {backend!r}",
            field="backend",
            hint="leave backend out, or use rerank.type: bi-encoder with an ONNX embedding model",
        )
    check_installed(model, "torch")
    folder = Path(locate_model(model))
    if model_kind(folder) != "cross-encoder":
        declared = ", ".join(declared_architectures(folder)) or "no sequence-classification head"
        raise RetrievalError(
            f"model {model!r} is not a cross-encoder ({declared}): a cross-encoder's config.json declares a "
            "*ForSequenceClassification head, which scores a query and a text together; loading this one "
            "would bolt on a randomly initialised head (numbers that change from run to run)",
            field="model",
            hint="give a cross-encoder (e.g. cross-encoder/ms-marco-MiniLM-L-6-v2), or rerank with an "
            "embedding model as rerank.type: bi-encoder",
        )


def check_models(
    config: ExperimentConfig, path: Path | None = None, lines: dict[tuple[str, ...], int] | None = None
) -> None:
    """Every model the config names is on this machine (found offline, no network, no retries) and runs on
    its backend, so a model that cannot be had fails here, in one line naming its key (``...model`` or
    ``...backend``), before any run opens. ``load_config`` calls it with the file and its lines;
    ``run_comparison`` again, for a config built in Python."""
    lines = lines or {}
    from abcompare.retrieval.dense import check_model  # numpy and the hub client only when a model is named

    checked: set[tuple[str, str | None, str]] = set()
    for where, model, backend, kind in _named_models(config):
        if (model, backend, kind) in checked:
            continue
        try:
            if kind == "cross-encoder":
                _check_cross_encoder(model, backend)
            else:
                check_model(model, backend)
        except RetrievalError as error:
            loc = (*where, "backend" if error.field == "backend" else "model")
            line = line_of(loc, lines)
            field = ".".join(loc)
            raise ConfigError(error.message, file=path, line=line, field=field, hint=error.hint) from None
        checked.add((model, backend, kind))


def python_retrievers(config: ExperimentConfig) -> dict[str, str]:
    """Each variant whose run is a Python retriever (``run: {python: NAME}``) -> that retriever's name."""
    return {
        name: variant.run.python
        for name, variant in config.variants().items()
        if variant.run is not None and variant.run.python is not None
    }


def check_retrievers(
    config: ExperimentConfig, retrievers: Mapping[str, Any] | None, path: Path | None = None
) -> None:
    """Every retriever the config names (``run.python``) was handed over, and is callable: the YAML never
    imports code, so a name nobody handed over is a ``ConfigError`` at its key (``control.run.python``,
    ``treatments.<name>.run.python``), raised before any run opens. A retriever handed over that no
    variant names is a warning (a misspelt name)."""
    given = dict(retrievers or {})
    unused = sorted(set(given) - set(python_retrievers(config).values()))
    if unused:
        warnings.warn(
            f"retrievers {', '.join(map(repr, unused))} were handed over, but no variant's run.python names "
            "them",
            AbcompareWarning,
            stacklevel=3,
        )
    for variant, wanted in python_retrievers(config).items():
        field = ".".join((*variant_key(variant), "run", "python"))
        if wanted not in given:
            how = (
                f"handed over: {', '.join(map(repr, sorted(given)))}"
                if given
                else "no retrievers were handed over, as the command line cannot"
            )
            raise ConfigError(
                f"names the Python retriever {wanted!r}, which nobody handed over ({how})",
                file=path,
                field=field,
                hint=f"the YAML never imports code: run it from Python with "
                f"run_comparison(config, retrievers={{{wanted!r}: fn}}), or give the variant a run file "
                "(run.path)",
            )
        if not callable(given[wanted]):
            raise ConfigError(
                f"the retriever {wanted!r} handed over is a {type(given[wanted]).__name__}, not a callable",
                field=field,
                hint="hand over fn(queries) -> {query_id: [RagHit or dict, ...]} or a run DataFrame",
            )


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
    from abcompare.config.ignored import ignored_settings

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
    from abcompare.config.examples import example_named_like

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
    from abcompare.config.models import EvaluationSettings

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
