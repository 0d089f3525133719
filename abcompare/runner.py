"""The experiment runner: the one module that knows the order of the stages.

config -> data -> retrieval (the executor) -> evaluation -> statistics -> outcome -> tracking. Each stage
is a function of its inputs and its settings section, called here in turn; the metric names are computed
once, from the config, and handed to each stage."""

from __future__ import annotations

import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import pandas as pd

from abcompare.config import ExperimentConfig
from abcompare.core.errors import DataError, error_context
from abcompare.core.progress import Reporter
from abcompare.outcome.results import ComparisonResult, VariantOutcome


class _Timer:
    """Wall time per stage, so benchmarks and the report can show where time goes."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    @contextmanager
    def __call__(self, stage: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[stage] = self.seconds.get(stage, 0.0) + time.perf_counter() - start


# ------------------------------------------------------------------------------------------ the run
def run_comparison(
    config: ExperimentConfig,
    *,
    config_path: Path | None = None,
    reporter: Reporter | None = None,
    background_tracking: bool = False,
) -> ComparisonResult:
    """Run the control and every treatment, judge them on the same queries, test, log and return.

    ``background_tracking`` writes to MLflow from a forked process while the comparison runs (what
    ``abcompare run`` does); by default it is written from this process.
    """
    from abcompare.config.loading import check_models
    from abcompare.execution import open_executor
    from abcompare.tracking.lifecycle import check_tracking_store

    reporter = reporter or Reporter()
    timer = _Timer()
    check_models(config, config_path)  # a config built in Python skipped load_config's check

    def check_tracking() -> None:
        with timer("tracking"):
            reporter.stage("connecting to MLflow")
            check_tracking_store(config.tracking)

    with ExitStack() as stack, ThreadPoolExecutor(1, thread_name_prefix="abcompare-mlflow") as pool:
        # the tracking store is checked while the executor starts (Ray takes seconds); both are checked
        # before any MLflow run opens, so an unreachable server or cluster fails early and leaves no run
        checking = pool.submit(check_tracking) if config.tracking.enabled else None
        try:
            with timer("execution"):
                executor = stack.enter_context(open_executor(config.execution, reporter))
        finally:
            if checking:
                checking.result()
        result = _compare_variants(config, config_path, reporter, timer, executor, background_tracking)
        with timer("execution"):
            stack.close()  # a Ray this run started stops here
    return result


def _compare_variants(
    config: ExperimentConfig,
    config_path: Path | None,
    reporter: Reporter,
    timer: _Timer,
    executor: Any,
    background_tracking: bool,
) -> ComparisonResult:
    """The comparison proper, stage by stage: data, each variant's run from the executor, judged at the
    annotation level, scored and logged; the paired tests (and a sweep's tuned choice), the result, and
    its record in MLflow. Each stage gets its settings section; the metric names are computed once."""
    from abcompare.core.scratch import scratch_folder
    from abcompare.data.dataset import dataset_line
    from abcompare.data.experiment import load_dataset_for_experiment
    from abcompare.data.levels import judged_at_level, with_grades
    from abcompare.evaluation.judgments import attach_judged_means, judgment_coverage, lists_relevant_only
    from abcompare.evaluation.measures import judged_columns, metric_columns
    from abcompare.evaluation.per_query import per_query_metrics
    from abcompare.outcome.sentences import grid_frame
    from abcompare.stats.comparison import paired_comparison
    from abcompare.stats.cost import FRONT_COLUMN, cost_table, latency_metrics, on_front
    from abcompare.stats.tuning import tuned_comparison
    from abcompare.tracking.artifacts import comparison_files, variant_files
    from abcompare.tracking.lifecycle import closing_runs, open_logger, record

    evaluation, primary, plan = config.evaluation, config.evaluation.primary_metric, config.sweep_plan
    metrics = metric_columns(evaluation.metrics, evaluation.cutoffs)  # the compared metrics, in config order
    means_of = metrics + judged_columns(evaluation.cutoffs)
    with timer("data"):
        reporter.stage("loading the dataset")
        dataset = load_dataset_for_experiment(config.dataset)
    reporter.stage(dataset_line(dataset))
    if plan is not None:
        reporter.stage(plan.summary())
        for note in plan.invalid + plan.duplicates:
            reporter.stage(f"  left out: {note}")

    outcomes: dict[str, VariantOutcome] = {}
    with scratch_folder() as tmp:
        with timer("tracking"):
            logger = open_logger(config, config_path, dataset, tmp, background=background_tracking)
        with closing_runs(logger.abort):
            with timer("tracking"):
                logger.start()
            produced = executor.variant_runs(config.variants(), dataset, config.resolved_cache_dir())
            for name, variant in config.variants().items():
                role = "control" if name == "control" else "treatment"
                reporter.stage("control" if role == "control" else f"treatment {name}")
                with timer("retrieval"):
                    variant_run = next(produced)
                context = f"variant {name!r}" + (f" (run file {variant.run.path})" if variant.run else "")
                with timer("evaluation"), error_context(context, file=dataset.annotation_file):
                    run, annotations, report = judged_at_level(
                        variant_run.run, dataset, config.dataset.level, **evaluation.alignment_options()
                    )
                    per_query = per_query_metrics(
                        run, annotations, dataset.query_ids, **evaluation.scoring_options()
                    )
                run = with_grades(run, annotations)
                means = per_query[means_of].mean().to_dict()
                outcomes[name] = VariantOutcome(
                    name, role, run, per_query, report, means, variant_run.efficiency
                )
                with timer("tracking"):
                    settings = variant.model_dump(mode="json", exclude_none=True)
                    logger.log_variant(outcomes[name], settings, variant_files(config, outcomes[name], tmp))
            with timer("timing"):
                samples = executor.time_queries(
                    config.variants(), dataset, config.resolved_cache_dir(), config.efficiency.timing_plan()
                )
            cost = cost_table(
                {n: o.efficiency for n, o in outcomes.items()}, samples,
                noise_floor=config.efficiency.noise_floor, seed=config.significance.seed,
            )  # fmt: skip
            for name in cost.index:  # the timed latency joins each variant's build figures
                outcomes[name].efficiency.update(latency_metrics(cost.loc[name]))
            per_query_tables = {n: o.per_query for n, o in outcomes.items()}
            coverage, judgment_warnings = judgment_coverage(per_query_tables, primary)
            for note in judgment_warnings:
                reporter.warn(note)
            with timer("statistics"):
                reporter.stage("paired significance tests")
                treatments = {n: frame for n, frame in per_query_tables.items() if n != "control"}
                with reporter.progress("paired tests") as advance:  # the tests report their own total
                    comparison = paired_comparison(
                        per_query_tables["control"], treatments, metrics=metrics, primary_metric=primary,
                        progress=advance, **config.significance.testing_options(),
                    )  # fmt: skip
                comparison = attach_judged_means(comparison, per_query_tables)
            tuned, grid = None, None
            if plan is not None:
                with timer("statistics"):
                    reporter.stage("cross-validated choice among the sweep's candidates")
                    control, sig, select = (
                        per_query_tables["control"],
                        config.significance,
                        config.sweep.select,
                    )
                    tuned = tuned_comparison(
                        control, {n: per_query_tables[n] for n in plan.candidates},
                        metric=select.metric or primary, folds=min(select.folds, len(control)),
                        seed=sig.seed, n_resamples=sig.n_resamples, alpha=sig.alpha,
                    )  # fmt: skip
                grid = grid_frame(
                    comparison, plan.settings, {n: outcomes[n].efficiency for n in plan.candidates}
                )
                if not grid.empty:
                    grid[FRONT_COLUMN] = on_front(grid, samples, config.efficiency.noise_floor, sig.seed)
            result = ComparisonResult(
                config=config,
                dataset_name=dataset.name,
                n_queries=len(dataset.queries),
                primary_metric=primary,
                variants=outcomes,
                comparison=comparison,
                timings=timer.seconds,
                judged=coverage,
                judgments_relevant_only=lists_relevant_only(
                    dataset.annotations, evaluation.relevance_threshold
                ),
                judgment_warnings=judgment_warnings,
                tuned=tuned,
                grid=grid,
                queries=dataset.queries,
                cost=cost,
            )
            with timer("tracking"):
                logger.log_comparison(result, comparison_files(result))
                recorded = logger.finish()
        if recorded is not None:
            record(result, recorded, logger)
    return result


# ------------------------------------------------------------------------------------------ pooling
def pool_to_file(
    config: ExperimentConfig,
    path: Path,
    *,
    fmt: str = "csv",
    depth: int = 10,
    reporter: Reporter | None = None,
) -> pd.DataFrame:
    """Pool every variant's unjudged top ``depth`` hits (:func:`pool_unjudged_hits`) and write them to
    ``path`` as CSV or JSONL for annotators; returns the pool."""
    from abcompare.data.pooling import write_pool

    table = pool_unjudged_hits(config, depth=depth, reporter=reporter)
    write_pool(table, path, fmt)
    return table


def pool_unjudged_hits(
    config: ExperimentConfig, *, depth: int = 10, reporter: Reporter | None = None
) -> pd.DataFrame:
    """Every variant's top ``depth`` hits that nobody judged, once each, for annotators (no MLflow run).

    Variants are produced as ``abcompare run`` produces them (the embedding cache makes a rerun cheap) and
    judged at the configured annotation level: chunk keys at chunk level, document ids at document level.
    Queries nobody judged yet are pooled too: they are the largest holes.
    """
    from abcompare.data.levels import apply_level
    from abcompare.data.pooling import pool_unjudged
    from abcompare.evaluation.batch import in_evaluation_order

    reporter = reporter or Reporter()
    level = config.dataset.level
    if level == "span":
        raise DataError(
            "nothing to pool at span level: evidence spans judge every located hit",
            field="dataset.level",
            hint="pool at chunk or document level, where judgments are listed (query, id) pairs",
        )
    reporter.stage("loading the dataset")
    from abcompare.data.experiment import load_dataset_for_experiment
    from abcompare.execution import open_executor

    dataset = load_dataset_for_experiment(config.dataset, unjudged_queries=True)
    runs: dict[str, pd.DataFrame] = {}
    with open_executor(config.execution, reporter) as executor:
        produced = executor.variant_runs(config.variants(), dataset, config.resolved_cache_dir())
        for name in config.variants():
            reporter.stage("control" if name == "control" else f"treatment {name}")
            run = next(produced).run
            leveled, _ = apply_level(run, dataset.annotations, level, corpus=dataset.corpus)
            runs[name] = in_evaluation_order(leveled, config.evaluation.convention)
    documents = dataset.corpus if level == "document" else None
    return pool_unjudged(runs, dataset.annotations, dataset.queries, depth=depth, documents=documents)
