"""The files each MLflow run of a comparison carries: a variant's run file and score histogram; the parent's
forest of differences, paired scatters, a sweep's quality-vs-latency plane, ``report.html`` and
``result.json``. Made here from what ``outcome`` renders, named by :mod:`abcompare.tracking.layout`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from abcompare.core.errors import AbcompareWarning
from abcompare.core.naming import mlflow_safe_name
from abcompare.core.vocabulary import metric_name
from abcompare.data.runs import write_run
from abcompare.outcome.html import collections_forest, forest_figure, page
from abcompare.outcome.svg import histogram_svg, pareto_svg, scatter_svg
from abcompare.outcome.view import ComparisonView, ExperimentView
from abcompare.tracking.layout import (
    DELTAS_PLOT,
    DISTRIBUTION_PLOT,
    HITS_FILE,
    PARETO_PLOT,
    POOLED_FOREST_PLOT,
    REPORT_FILE,
    RESULT_FILE,
    RUN_FILE,
    paired_plot,
)

#: Above this many hits a variant's run carries its hits once, as ``run/hits.parquet`` (the same hits, ranks
#: and scores, plus each hit's grade), and no ``run/run.trec`` beside it: at 10k queries x 1,000 hits the
#: TREC text is 10 million lines (about 370 MB a variant) written, staged and copied for a file nothing
#: reads back. Below it both are logged, so trec_eval runs on the artifact as it is.
RUN_FILE_MAX_HITS = 1_000_000

if TYPE_CHECKING:
    from abcompare.config import ExperimentConfig
    from abcompare.outcome.results import Comparison, VariantOutcome
    from abcompare.outcome.view import PooledView


def variant_files(config: ExperimentConfig, outcome: VariantOutcome, scratch: Path) -> dict[str, str | Path]:
    """The files of a variant's run: its hits (as compressed, dictionary-encoded Parquet, and as a TREC run
    file up to :data:`RUN_FILE_MAX_HITS` hits) and its per-query score histogram. The hits are written here,
    in the comparison's process, and handed to the writer as a file: a 10-million-hit table pickled through
    the writer's pipe cost more time and memory than the Parquet itself."""
    if not config.tracking.enabled:
        return {}
    folder = scratch / "files" / mlflow_safe_name(outcome.name)
    folder.mkdir(parents=True, exist_ok=True)
    hits = folder / "hits.parquet"
    outcome.run.to_parquet(hits, compression="zstd")  # pyarrow dictionary-encodes the ids' columns
    files: dict[str, str | Path] = {HITS_FILE: hits}
    if len(outcome.run) <= RUN_FILE_MAX_HITS:
        files[RUN_FILE] = _trec_file(config, outcome, folder)
    k = max(config.evaluation.cutoffs)
    metrics = [metric_name(m, k) for m in config.evaluation.metrics]
    title = f"{outcome.name}: per-query scores at cutoff {k} ({len(outcome.per_query)} queries)"
    files[DISTRIBUTION_PLOT] = histogram_svg(outcome.per_query, metrics, title)
    return files


def _trec_file(config: ExperimentConfig, outcome: VariantOutcome, folder: Path) -> Path:
    """The variant's hits as a TREC run file. The trec convention scores lists as trec_eval orders them
    (score, then key, descending): the file keeps the real scores, so trec_eval (or any peer tool) on it
    gives the tool's numbers, ties included; lists judged in served order (ai4j), or hits without scores,
    get rank-derived scores instead."""
    import warnings

    real = config.evaluation.convention == "trec" and bool(outcome.run["score"].notna().all())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AbcompareWarning)  # rank-derived scores replace tied ones: on purpose
        return Path(
            write_run(
                outcome.run,
                folder / "run.trec",
                fmt="trec",
                run_name=outcome.name,
                scores="keep" if real else "auto",
            )
        )


def comparison_files(result: Comparison, part_of: tuple[str, str] | None = None) -> dict[str, str | Path]:
    """The parent run's files: the forest of differences, the paired scatters, a sweep's quality-vs-latency
    plane, the self-contained ``report.html`` (leading back to the comparison across collections it is
    part of: ``part_of``, its name and link) and what it was made from (``result.json``); none when
    tracking is off (nothing would keep them)."""
    if not result.config.tracking.enabled:
        return {}
    import json

    inputs = ComparisonView.from_result(result, part_of)
    files: dict[str, str | Path] = {}
    files[REPORT_FILE] = page(ExperimentView.shown(inputs))
    files[RESULT_FILE] = json.dumps(inputs.to_json(), indent=2, default=str)
    files[DELTAS_PLOT] = forest_figure(inputs)
    primary = result.primary_metric
    control = result.per_query["control"][primary]
    for name in result.config.treatments:
        files[paired_plot(name)] = scatter_svg(control, result.per_query[name][primary], primary, name)
    if result.grid is not None and "efficiency.seconds_per_query" in result.grid:
        files[PARETO_PLOT] = pareto_svg(result.grid, primary, inputs.control_seconds_per_query)
    return files


def collections_files(config: ExperimentConfig, view: PooledView) -> dict[str, str | Path]:
    """The top run's files for a comparison across collections: the forest of the collections,
    ``report.html`` (its per-collection table linking to each collection's run: ``links``) and what it was
    made from (``result.json``); none when tracking is off."""
    if not config.tracking.enabled:
        return {}
    import json

    inputs = view
    return {
        REPORT_FILE: page(ExperimentView.shown(pooled=inputs)),
        RESULT_FILE: json.dumps(inputs.to_json(), indent=2, default=str),
        POOLED_FOREST_PLOT: collections_forest(inputs),
    }
