"""What a loaded config names is checked before any work: its files exist and have the right kind (a BEIR
folder, evidence spans, each collection's), its models resolve (a cross-encoder, a dense model's files), and
the Python retrievers it names were handed over."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from abcompare.config.locations import line_of, variant_key
from abcompare.config.models import (
    ExperimentConfig,
)
from abcompare.core.errors import AbcompareWarning, ConfigError, RetrievalError
from abcompare.examples import example_path
from abcompare.retrieval.settings import DenseSettings

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
    written = _written_keys(config)
    for name, part in config.parts().items():
        _check_collection_files(part, path, lines, written.get(name, _as_written))


def _as_written(loc: tuple[str, ...]) -> tuple[str, ...]:
    """A key of a one-collection config (``dataset:``): where it is written."""
    return loc


def _written_keys(config: ExperimentConfig) -> dict[str, Callable[[tuple[str, ...]], tuple[str, ...]]]:
    """Each collection of ``datasets:`` (none for ``dataset:``) by name: where its own config's keys are
    written (:func:`_collection_key`)."""
    return {entry.name: _collection_key(i, set(entry.runs)) for i, entry in enumerate(config.datasets or [])}


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
    return _written_keys(config)[collection](loc)


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


def check_judges(
    config: ExperimentConfig, judges: Mapping[str, Any] | None, path: Path | None = None
) -> None:
    """A ``python`` judge the config names (``judge.name``) was handed over and is callable, checked before
    any run opens (the YAML never imports code, and the command line cannot hand one over)."""
    given = dict(judges or {})
    judge = config.judge
    if judge is None or judge.provider != "python":
        return
    field = "judge.name"
    if judge.name not in given:
        how = (
            f"handed over: {', '.join(map(repr, sorted(given)))}"
            if given
            else "no judges were handed over, as the command line cannot"
        )
        raise ConfigError(
            f"names the Python judge {judge.name!r}, which nobody handed over ({how})",
            file=path,
            field=field,
            hint=f"run it from Python with run_comparison(config, judges={{{judge.name!r}: fn}}), where "
            "fn(query_text, hit_text) returns a grade 0-3",
        )
    if not callable(given[judge.name]):
        raise ConfigError(
            f"the judge {judge.name!r} handed over is a {type(given[judge.name]).__name__}, not a callable",
            file=path,
            field=field,
            hint="hand over fn(query_text, hit_text) -> a grade 0-3 (or a text to read one from)",
        )
