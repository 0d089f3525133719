"""``abcompare init``: the dataset inspected and each run aligned (said before anything is written), then
a commented config written and checked by ``load_config``, as ``abcompare validate`` would check it."""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from pathlib import Path

from abcompare.config import load_config
from abcompare.core.errors import ConfigError
from abcompare.core.vocabulary import plural
from abcompare.starter.inspection import inspect_dataset, inspect_runs, parse_run_option
from abcompare.starter.writing import config_text


def write_initial_config(
    output: Path,
    *,
    dataset: str | None,
    runs: Sequence[str] = (),
    queries: Path | None = None,
    qrels: Path | None = None,
    command: str = "abcompare init",
    echo: Callable[[str], None] = print,
) -> str:
    """Inspect the dataset and the runs (``NAME=FILE``; the first is the control), say what was found and
    how each run aligns with the judgments, then write the config to ``output`` (checked first: it loads
    as ``abcompare validate`` loads it). Returns the comparison's one-line summary. The caller decides
    whether ``output`` may be overwritten."""
    given = [parse_run_option(option) for option in runs]
    found = inspect_dataset(dataset, queries, qrels)
    if found.corpus is None and len(given) < 2:
        raise ConfigError(
            f"the dataset has no corpus to retrieve from, and {plural(len(given), 'run')} given",
            field="--run",
            hint="give two run files (--run NAME=FILE, the first the control), or a folder with corpus.jsonl",
        )
    judged = found.annotations["query_id"].nunique()
    grades = found.grades
    kind = f"graded {grades[0]}-{grades[-1]}" if found.graded else "binary"
    documents = f"{len(found.corpus):,} documents" if found.corpus is not None else "no corpus"
    echo(
        f"dataset {found.label}: {plural(len(found.queries), 'query')}, {len(found.annotations):,} judgments "
        f"of {plural(judged, 'query')} ({kind}), {documents}"
    )
    echo(f"level: {found.level} ({found.level_reason})")
    aligned = inspect_runs(given, found)
    for run in aligned:
        echo(f"run {run.name} ({run.path}): {run.report.summary()}")
        if run.report.fix:
            echo(f"  fix: {run.report.fix}")
        fraction = run.report.fraction_in_run
        if math.isnan(fraction) or fraction < 0.5:
            echo(f"  warning: `abcompare run` will stop on run {run.name}: too few judged ids among its hits")
    if not aligned:
        echo("no run files given: the control retrieves with BM25, the treatment adds dense MiniLM (RRF)")
    folder = output.absolute().parent
    text, summary = config_text(found, aligned, folder, command)
    _check(text, folder, output.name)
    output.write_text(text, encoding="utf-8")
    return summary


def _check(text: str, folder: Path, name: str) -> None:
    """The config loads, with its relative paths resolved from ``folder``, as it will once written."""
    import warnings

    probe = folder / f".{name}.abcompare-init"
    probe.write_text(text, encoding="utf-8")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a hybrid treatment adds a retriever and its fusion, on purpose
            load_config(probe)
    except ConfigError as error:  # never name the probe, a file that is gone once this returns
        if error.file is None or Path(error.file).name != probe.name:
            raise
        key = f"{error.field}: " if error.field else ""
        raise ConfigError(
            f"the config init would write ({folder / name}) does not load: {key}{error.message}",
            field="--run" if error.field and error.field.startswith("treatments") else None,
            hint=error.hint,
        ) from None
    finally:
        os.unlink(probe)
