"""The inputs checked before any run opens, by ``abcompare run`` and ``abcompare validate`` alike.

Each collection's dataset loaded, its run files read once and covering its queries, their ids of the kind
the level scores, query rewrites naming known queries: a refused input is a located error (the config key,
the file and line) before any retrieval or MLflow run. The runner's first stage; its own module so the
runner reads as its stages."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from abcompare.config import ExperimentConfig
from abcompare.config.loading import collection_key, line_of, variant_key
from abcompare.core.errors import ConfigError, error_context
from abcompare.data.experiment import load_dataset_for_experiment, query_file_ids
from abcompare.data.levels import check_run_alignment
from abcompare.data.runs import check_scored_in_full
from abcompare.execution.base import precomputed_run
from abcompare.retrieval.query_planning import check_against_queries

if TYPE_CHECKING:
    from abcompare.data.dataset import Dataset
    from abcompare.retrieval.settings import VariantSettings


@dataclass(frozen=True)
class Naming:
    """How a collection is named in errors and progress lines, decided once from its label (its name in
    ``config.parts()``): among several by its name, alone (``dataset:``, label ``""``) not at all. The
    wording is data, so the code that says it never asks which."""

    label: str
    contexts: tuple[str, ...] = ()  # what errors inside it are prefixed with
    headings: tuple[str, ...] = ()  # the progress line before it is compared (``{i}`` of ``{n}``)
    experiment: tuple[str, ...] = ()  # what errors across every collection are prefixed with
    loading: str = "loading the dataset"  # the progress line as its dataset loads
    indent: str = ""  # before its dataset's line

    @classmethod
    def of(cls, label: str) -> Naming:
        """The naming of the collection labelled ``label`` (``""``: the one collection of ``dataset:``)."""
        if not label:
            return cls(label)
        return cls(
            label, contexts=(f"collection {label!r}",), headings=(f"collection {label} ({{i}} of {{n}})",),
            experiment=("collections",), loading=f"loading collection {label}", indent="  ",
        )  # fmt: skip


@contextmanager
def prefixed(contexts: tuple[str, ...]) -> Iterator[None]:
    """Errors inside prefixed with each of ``contexts`` (none: as they are)."""
    with ExitStack() as stack:
        for context in contexts:
            stack.enter_context(error_context(context))
        yield


def named(name: str) -> AbstractContextManager[Any]:
    """Errors inside name the collection when it is one of several (``name`` set)."""
    return prefixed(Naming.of(name).contexts)


def validate_inputs(config: ExperimentConfig, config_path: Path | None = None) -> None:
    """What ``abcompare validate`` checks beyond the config: each collection's dataset loaded, its run
    files covering its queries, and :func:`check_inputs`, the very checks ``run`` applies before any
    retrieval (so a config ``validate`` passes is not refused by ``run`` for its inputs)."""

    for name, part in config.parts().items():
        with named(name):
            dataset = load_dataset_for_experiment(part.dataset)
        checked_part(config, name, part, dataset, config_path)


def checked_part(
    config: ExperimentConfig, name: str, part: ExperimentConfig, dataset: Dataset, config_path: Path | None
) -> dict[str, pd.DataFrame]:
    """One collection's inputs checked, its run files read once (:func:`check_inputs`); one of several
    also has its run files checked to cover its queries, a file of another collection's queries named as
    such (:func:`_checked_collection`). Returns the run files' tables for the run stage."""
    return _checked_collection(config, name, dataset, config_path) if name else check_inputs(part, dataset)


def _checked_collection(
    config: ExperimentConfig, name: str, dataset: Dataset, config_path: Path | None
) -> dict[str, pd.DataFrame]:
    """One collection's inputs checked (:func:`check_inputs`), its run files read once: a run file of
    another collection's queries is named as such before its keys are checked. Returns the run files'
    tables for the run stage."""
    collection = config.collections()[name]
    with error_context(f"collection {name!r}"):
        given = given_run_files(collection, dataset)
    _check_run_files_cover(config, name, collection, given, len(dataset.query_ids), config_path)
    with error_context(f"collection {name!r}"):
        return check_inputs(collection, dataset, given)


def _check_run_files_cover(
    config: ExperimentConfig,
    name: str,
    collection: ExperimentConfig,
    given: Mapping[str, pd.DataFrame],
    n_queries: int,
    config_path: Path | None,
) -> None:
    """Each run-file variant's file holds some of the collection's queries (``given``: each file's rows
    for them; a file of another collection's queries, or a variant missing from this one's file, would
    score zero on every query): a located error, naming the collection and the file, before any run."""

    for variant_name, run in given.items():
        if run.empty:
            path = collection.variants()[variant_name].run.path
            loc = collection_key(config, name, (*variant_key(variant_name), "run", "path"))
            raise ConfigError(
                f"collection {name!r}: the run file {path} of variant {variant_name!r} covers "
                f"none of its {n_queries:,} queries",
                file=config_path or config.source,
                line=line_of(loc, config.key_lines),
                field=".".join(loc),
                hint=f"give this collection's own run file of {variant_name!r} "
                f"(datasets.<i>.runs.{variant_name}: a file with its query ids)",
            )


def check_inputs(
    config: ExperimentConfig, dataset: Dataset, given: Mapping[str, pd.DataFrame] | None = None
) -> dict[str, pd.DataFrame]:
    """What a comparison refuses about its inputs once the dataset is loaded, before any retrieval or
    encoding; ``abcompare validate`` calls it too, so whatever ``run`` would refuse, ``validate`` refuses.
    The rewrites files against the query ids, each run file read and checked as the run stage takes it,
    and the annotated ids against the keys each variant can return at the configured level (a
    chunk-level config against document judgments fails here, not after encoding the corpus).

    Returns the run files' tables (``given``, when the caller read them already; else read here), which
    the run stage takes instead of reading the files a second time."""
    check_query_rewrites(config, dataset)
    given = given_run_files(config, dataset) if given is None else dict(given)
    _check_id_kinds(config, dataset, given)
    return given


def given_run_files(config: ExperimentConfig, dataset: Dataset) -> dict[str, pd.DataFrame]:
    """Each run-file variant's rows for the dataset's queries, read once and checked as the run stage
    checks a run (scored in full in the trec convention), each problem naming the variant and its file.
    A named pipe is left to the run stage, which reads it once."""

    given: dict[str, pd.DataFrame] = {}
    for name, variant in config.variants().items():
        if variant.run is None or variant.run.path is None or not Path(variant.run.path).is_file():
            continue  # a pipe gives its bytes once: the run stage reads it, with the comparison open
        context = f"variant {name!r}" + given_note(variant)
        with error_context(context, file=variant.run.path):
            given[name] = precomputed_run(variant, dataset)
        check_scored_in_full_of(given[name], variant, context, config.evaluation.convention)
    return given


def _check_id_kinds(config: ExperimentConfig, dataset: Dataset, given: Mapping[str, pd.DataFrame]) -> None:
    """Each variant's possible hit keys against the annotated ids, with the alignment check the run applies
    to its hits (same threshold, same diagnosis): a run file's own keys (``given``), and for a retrieving
    variant the keys its level gives the corpus's documents (``doc`` at document level, ``doc#chunk-N``
    at chunk level, generously: every annotated chunk of a known document counts)."""

    level, evaluation = config.dataset.level, config.evaluation
    if level == "span" or evaluation.allow_misaligned:
        return
    options = evaluation.alignment_options()
    possible = _retrievable_keys(dataset, level)
    for name, variant in config.variants().items():
        if variant.run is not None and name not in given:
            continue  # a Python retriever's keys are known once it has answered
        context = f"variant {name!r}" + given_note(variant)
        run = given.get(name, possible)
        if run is None:
            continue
        with error_context(context, file=dataset.annotation_file):
            check_run_alignment(run, dataset, level, **options)  # the report only when it fails


def _retrievable_keys(dataset: Dataset, level: str) -> pd.DataFrame | None:
    """A stand-in run holding every key a retrieving variant could return at ``level`` (None without a
    corpus): one row per key, the evaluated queries spread over them so each is in the run."""
    if dataset.corpus is None or not len(dataset.query_ids):
        return None
    documents = dataset.corpus["doc_id"].astype("str")
    if level == "document":
        keys = pd.Index(documents)
    else:
        annotated = dataset.annotations["key"].astype("str")
        chunks = annotated.str.contains("#chunk-", regex=False)
        of_known = annotated[chunks & annotated.str.split("#chunk-", n=1).str[0].isin(set(documents))]
        keys = pd.Index(documents + "#chunk-0").append(pd.Index(of_known)).unique()
    queries = dataset.query_ids
    rows = max(len(keys), len(queries))
    return pd.DataFrame(
        {
            "query_id": [queries[i % len(queries)] for i in range(rows)],
            "key": [keys[i % len(keys)] for i in range(rows)],
            "rank": [i // len(queries) + 1 for i in range(rows)],
            "score": 0.0,
        }
    )


def check_query_rewrites(config: ExperimentConfig, dataset: Dataset) -> None:
    """Query rewrites files against the dataset's query ids, before any run opens (a located error for an
    unknown id, a warning for queries without rewrites)."""
    variants = config.variants()
    if not any(v.query_planning is not None and v.query_planning.variants for v in variants.values()):
        return

    check_against_queries(variants, query_file_ids(config.dataset), dataset.query_ids)


def check_scored_in_full_of(
    run: pd.DataFrame, variant: VariantSettings, context: str, convention: str
) -> None:
    """``data.runs.check_scored_in_full``, naming the variant's run (its file and line, or its Python
    retriever) and the query, not the judgments it would next be scored against."""

    given = variant.run.path if variant.run is not None and variant.run.path is not None else None
    with error_context(context, file=given):
        check_scored_in_full(run, convention, path=given, fmt=variant.run.format if given else "auto")


def given_note(variant: VariantSettings) -> str:
    """How a variant's run was given, for its error messages: `` (run file X)``, `` (Python retriever
    'X')``, or nothing (retrieved)."""
    if variant.run is None:
        return ""
    if variant.run.python is not None:
        return f" (Python retriever {variant.run.python!r})"
    return f" (run file {variant.run.path})"


# ------------------------------------------------------------------------------------------ pooling
