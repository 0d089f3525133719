"""The experiment runner: the one module that knows the order config -> data -> retrieval -> evaluation
-> statistics -> tracking -> report. Each stage is a function of its inputs, called here in turn."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from abcompare.config.loading import ExperimentConfig
from abcompare.core.errors import DataError, error_context
from abcompare.core.progress import Reporter
from abcompare.outcome.results import ComparisonResult, VariantOutcome
from abcompare.retrieval.settings import VariantSettings
from abcompare.tracking.logger import Logger, NullLogger

if TYPE_CHECKING:
    from abcompare.data.alignment import AlignmentReport
    from abcompare.data.dataset import Dataset
    from abcompare.outcome.html import ReportInputs


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


# ------------------------------------------------------------------------------------------ stages
def load_experiment_dataset(config: ExperimentConfig):
    """The fixed query set, its annotations at the configured level, and the corpus (data stage)."""
    from abcompare.data.experiment import load_dataset_for_experiment

    return load_dataset_for_experiment(config.dataset)


def judge_variant(
    run: pd.DataFrame, dataset: Dataset, variant: VariantSettings, config: ExperimentConfig
) -> tuple[pd.DataFrame, pd.DataFrame, AlignmentReport]:
    """Annotations at the configured level, the alignment report (fails loudly) and per-query metrics; the
    run comes back with each hit's judgment ``grade`` (NaN: unjudged), for the report and the notebook."""
    from abcompare.data.alignment import alignment_report, check_alignment
    from abcompare.data.levels import apply_level
    from abcompare.evaluation.per_query import per_query_metrics

    evaluation = config.evaluation
    run, annotations = apply_level(
        run,
        dataset.annotations,
        config.dataset.level,
        spans=dataset.spans,
        corpus=dataset.corpus,
    )
    report = alignment_report(run, annotations, relevance_threshold=evaluation.relevance_threshold)
    check_alignment(
        report, min_fraction=evaluation.min_alignment, allow_misaligned=evaluation.allow_misaligned
    )
    per_query = per_query_metrics(
        run,
        annotations,
        dataset.query_ids,
        measures=evaluation.metrics,
        cutoffs=evaluation.cutoffs,
        convention=evaluation.convention,
        relevance_threshold=evaluation.relevance_threshold,
        unjudged=evaluation.unjudged,
    )
    return with_grades(run, annotations), per_query, report


def with_grades(run: pd.DataFrame, annotations: pd.DataFrame) -> pd.DataFrame:
    """The run table with each hit's judgment ``grade`` at the run's level (NaN: nobody judged the hit)."""
    if "grade" not in annotations or run.empty:
        return run.assign(grade=float("nan"))
    grades = annotations.groupby(["query_id", "key"], sort=False)["grade"].max().rename("grade")
    joined = run.drop(columns=["grade"], errors="ignore").join(grades, on=["query_id", "key"])
    return joined.astype({"grade": float})


def compared_metrics(config: ExperimentConfig) -> list[str]:
    """The configured measures at the configured cutoffs (``precision@1`` ...), in config order."""
    from abcompare.evaluation.measures import metric_name

    return [metric_name(m, k) for m in config.evaluation.metrics for k in config.evaluation.cutoffs]


def judged_columns(config: ExperimentConfig) -> list[str]:
    """``judged@k`` at every configured cutoff: how much of each list was judged (a diagnostic)."""
    from abcompare.evaluation.measures import JUDGED_MEASURE, metric_name

    return [metric_name(JUDGED_MEASURE, k) for k in config.evaluation.cutoffs]


def judgment_coverage(config: ExperimentConfig, per_query: dict[str, pd.DataFrame], reporter: Reporter):
    """Each variant's judged@k at the primary metric's cutoff, and a warning per treatment whose list is
    clearly less judged than the control's (its losses may be missing judgments)."""
    from abcompare.evaluation.judgments import judged_coverage, judged_gap_warnings
    from abcompare.evaluation.measures import parse_metric

    cutoff = parse_metric(config.evaluation.primary_metric)[1]
    coverage = judged_coverage(per_query, cutoff)
    notes = judged_gap_warnings(coverage)
    for note in notes:
        reporter.warn(note)
    return coverage, notes


def compare(config: ExperimentConfig, per_query: dict[str, pd.DataFrame], reporter: Reporter) -> pd.DataFrame:
    """Paired tests of every treatment against the control (statistics stage)."""
    from abcompare.stats.comparison import paired_comparison

    sig = config.significance
    treatments = {name: frame for name, frame in per_query.items() if name != "control"}
    total = len(treatments) * len(compared_metrics(config))
    with reporter.progress("paired tests", total=total) as advance:
        return paired_comparison(
            per_query["control"],
            treatments,
            alpha=sig.alpha,
            n_resamples=sig.n_resamples,
            seed=sig.seed,
            correction=sig.correction,
            primary=sig.primary,
            tests=list(sig.tests),
            metrics=compared_metrics(config),
            primary_metric=config.evaluation.primary_metric,
            zero_method=sig.zero_method,
            power=sig.power,
            min_effect=sig.min_effect,
            progress=advance,
        )


def tune(config: ExperimentConfig, per_query: dict[str, pd.DataFrame]):
    """A sweep's tuned comparison: the candidate chosen by cross-validation, scored on the queries the
    choice never saw, tested by permuting the whole selection (statistics stage)."""
    from abcompare.stats.tuning import tuned_comparison

    plan, sweep, sig = config.sweep_plan, config.sweep, config.significance
    assert plan is not None and sweep is not None
    return tuned_comparison(
        per_query["control"],
        {name: per_query[name] for name in plan.candidates},
        metric=sweep.select.metric or config.evaluation.primary_metric,
        folds=min(sweep.select.folds, len(per_query["control"])),
        seed=sig.seed,
        n_resamples=sig.n_resamples,
        alpha=sig.alpha,
    )


def sweep_grid(config: ExperimentConfig, comparison: pd.DataFrame, outcomes: dict[str, VariantOutcome]):
    """One row per sweep candidate: its settings, its primary-metric comparison and its efficiency."""
    from abcompare.outcome.sentences import grid_table

    plan = config.sweep_plan
    assert plan is not None
    efficiency = {name: outcomes[name].efficiency for name in plan.candidates}
    return grid_table(comparison, plan.settings, efficiency)


def code_version() -> str:
    """The git commit of the abcompare checkout when there is one, else the package version."""
    from abcompare import __version__

    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=Path(__file__).parent,
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
        if out.returncode == 0 and out.stdout.strip():
            return f"{__version__}+g{out.stdout.strip()}"
    except (OSError, subprocess.SubprocessError):
        pass
    return __version__


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
    from abcompare.execution import open_executor

    reporter = reporter or Reporter()
    timer = _Timer()

    def check_tracking() -> None:
        with timer("tracking"):
            reporter.stage("connecting to MLflow")
            check_tracking_store(config)

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
    """The comparison proper: data, each variant's run from the executor, judged, tested and logged."""
    from abcompare.tracking.store import scratch_folder

    with timer("data"):
        reporter.stage("loading the dataset")
        dataset = load_experiment_dataset(config)
    n_queries = len(dataset.queries)
    excluded = dataset.excluded_queries
    from abcompare.core.vocabulary import plural

    reporter.stage(
        f"dataset {dataset.name}: {plural(n_queries, 'annotated query', 'annotated queries')}"
        + (
            f" ({plural(excluded, 'query')} without annotations in this split are not evaluated)"
            if excluded
            else ""
        )
    )
    if config.sweep_plan is not None:
        reporter.stage(config.sweep_plan.summary())
        for note in config.sweep_plan.invalid + config.sweep_plan.duplicates:
            reporter.stage(f"  left out: {note}")

    outcomes: dict[str, VariantOutcome] = {}
    with scratch_folder() as tmp:
        with timer("tracking"):
            logger = open_logger(config, config_path, dataset, tmp, background=background_tracking)
        with closing_logger(logger):
            with timer("tracking"):
                logger.start()
            produced = executor.variant_runs(config.variants(), dataset, config.resolved_cache_dir())
            for name, variant in config.variants().items():
                role = "control" if name == "control" else "treatment"
                reporter.stage("control" if role == "control" else f"treatment {name}")
                with timer("retrieval"):
                    variant_run = next(produced)
                run, efficiency = variant_run.run, variant_run.efficiency
                context = f"variant {name!r}" + (f" (run file {variant.run.path})" if variant.run else "")
                with timer("evaluation"), error_context(context, file=dataset.annotation_file):
                    run, per_query, report = judge_variant(run, dataset, variant, config)
                means = per_query[compared_metrics(config) + judged_columns(config)].mean().to_dict()
                outcomes[name] = VariantOutcome(name, role, run, per_query, report, means, efficiency)
                with timer("tracking"):
                    settings = variant.model_dump(mode="json", exclude_none=True)
                    logger.log_variant(outcomes[name], settings, variant_files(config, outcomes[name], tmp))
            per_query_tables = {n: o.per_query for n, o in outcomes.items()}
            coverage, judgment_warnings = judgment_coverage(config, per_query_tables, reporter)
            with timer("statistics"):
                reporter.stage("paired significance tests")
                comparison = compare(config, per_query_tables, reporter)
            from abcompare.evaluation.judgments import attach_judged_means

            comparison = attach_judged_means(comparison, per_query_tables)
            tuned, grid = None, None
            if config.sweep_plan is not None:
                with timer("statistics"):
                    reporter.stage("cross-validated choice among the sweep's candidates")
                    tuned = tune(config, per_query_tables)
                grid = sweep_grid(config, comparison, outcomes)
            result = ComparisonResult(
                config=config,
                dataset_name=dataset.name,
                n_queries=n_queries,
                primary_metric=config.evaluation.primary_metric,
                variants=outcomes,
                comparison=comparison,
                timings=timer.seconds,
                judged=coverage,
                judgment_warnings=judgment_warnings,
                tuned=tuned,
                grid=grid,
                queries=dataset.queries,
            )
            with timer("tracking"):
                logger.log_comparison(result, comparison_files(result))
                recorded = logger.finish()
        if recorded is not None:
            record(result, recorded, logger)
    return result


# ------------------------------------------------------------------------------------------ tracking handoff
def check_tracking_store(config: ExperimentConfig) -> None:
    """Fail within seconds, before any work, when the tracking store cannot be used (no MLflow import)."""
    from abcompare.tracking.store import check_reachable, resolve_tracking_uri

    check_reachable(resolve_tracking_uri(config.tracking.uri))


def open_logger(config: ExperimentConfig, config_path: Path | None, dataset: Dataset, scratch: Path, *,
                background: bool) -> Logger:  # fmt: skip
    """The comparison's MLflow logger, or one that does nothing when tracking is off."""
    from abcompare.tracking.logger import ComparisonLogger

    if not config.tracking.enabled:
        return NullLogger()
    return ComparisonLogger(
        config, config_path, dataset, code_version(), scratch / "mlflow", background=background
    )


@contextmanager
def closing_logger(logger: Logger) -> Iterator[None]:
    """Whatever happens inside, no run is left RUNNING: errors mark them FAILED, Ctrl-C marks them KILLED."""
    try:
        yield
    except KeyboardInterrupt:
        logger.abort("KILLED")
        raise
    except BaseException:
        logger.abort("FAILED")
        raise


def variant_files(config: ExperimentConfig, outcome: VariantOutcome, scratch: Path) -> dict[str, str | Path]:
    """The files of a variant's run: its hits as a TREC run file and its per-query score histogram."""
    if not config.tracking.enabled:
        return {}
    import warnings

    from abcompare.core.errors import AbcompareWarning
    from abcompare.core.naming import mlflow_safe_name
    from abcompare.data.runs import write_run
    from abcompare.evaluation.measures import metric_name
    from abcompare.outcome.svg import histogram_svg
    from abcompare.tracking.layout import DISTRIBUTION_PLOT, RUN_FILE

    folder = scratch / "files" / mlflow_safe_name(outcome.name)
    folder.mkdir(parents=True, exist_ok=True)
    with warnings.catch_warnings():
        # tied fused scores get rank-derived scores in the TREC file; hits.parquet keeps the real ones
        warnings.simplefilter("ignore", AbcompareWarning)
        trec = Path(write_run(outcome.run, folder / "run.trec", fmt="trec", run_name=outcome.name))
    k = max(config.evaluation.cutoffs)
    metrics = [metric_name(m, k) for m in config.evaluation.metrics]
    title = f"{outcome.name}: per-query scores at cutoff {k} ({len(outcome.per_query)} queries)"
    return {RUN_FILE: trec, DISTRIBUTION_PLOT: histogram_svg(outcome.per_query, metrics, title)}


def comparison_files(result: ComparisonResult) -> dict[str, str | Path]:
    """The parent run's files: the forest of differences, the paired scatters, a sweep's quality-vs-latency
    plane, the self-contained ``report.html`` and what it was made from (``result.json``); none when
    tracking is off (nothing would keep them)."""
    if not result.config.tracking.enabled:
        return {}
    import json

    from abcompare.outcome.html import forest_figure, inputs_summary, render
    from abcompare.outcome.svg import pareto_svg, scatter_svg
    from abcompare.tracking.layout import DELTAS_PLOT, PARETO_PLOT, REPORT_FILE, RESULT_FILE, paired_plot

    inputs = report_inputs(result)
    files: dict[str, str | Path] = {}
    html = render(inputs)
    files[REPORT_FILE] = html
    files[RESULT_FILE] = json.dumps(inputs_summary(inputs), indent=2, default=str)
    files[DELTAS_PLOT] = forest_figure(inputs)
    primary = result.primary_metric
    control = result.per_query["control"][primary]
    for name in result.config.treatments:
        files[paired_plot(name)] = scatter_svg(control, result.per_query[name][primary], primary, name)
    if result.grid is not None and "efficiency.seconds_per_query" in result.grid:
        files[PARETO_PLOT] = pareto_svg(result.grid, primary, inputs.control_seconds_per_query)
    return files


def report_inputs(result: ComparisonResult) -> ReportInputs:
    """What ``report.html`` shows, from a fresh result."""
    from dataclasses import asdict

    from abcompare.outcome.html import ReportInputs
    from abcompare.outcome.sentences import tuned_sentence

    cfg = result.config
    settings = cfg.sweep_plan.swept_settings if cfg.sweep_plan else []
    control_cost = result.variants["control"].efficiency.get("efficiency.seconds_per_query")
    focus = [result.tuned.most_chosen] if result.tuned is not None else []
    return ReportInputs(
        name=cfg.name,
        description=cfg.description or "",
        dataset=result.dataset_name,
        n_queries=result.n_queries,
        level=cfg.dataset.level,
        convention=cfg.evaluation.convention,
        comparison=result.comparison,
        per_query=result.per_query,
        queries=result.queries.set_index("query_id") if result.queries is not None else pd.DataFrame(),
        hits={name: outcome.run for name, outcome in result.variants.items()},
        relevance_threshold=cfg.evaluation.relevance_threshold,
        judged={name: asdict(coverage) for name, coverage in result.judged.items()},
        judgment_warnings=list(result.judgment_warnings),
        tuned_sentence=tuned_sentence(result.tuned) if result.tuned is not None else None,
        grid=result.grid,
        grid_settings=settings,
        control_seconds_per_query=control_cost,
        focus=focus,
    )


def logged_report(
    parent_run_id: str | None = None, *, tracking_uri: str | None = None, experiment: str | None = None
) -> tuple[str, Any]:
    """``report.html`` for a comparison already in MLflow (default: the latest), read back through
    :func:`abcompare.tracking.reader.load_comparison`; the page and the loaded comparison."""
    from abcompare.outcome.html import render
    from abcompare.tracking.reader import load_comparison

    loaded = load_comparison(parent_run_id, experiment=experiment, tracking_uri=tracking_uri)
    return render(loaded_report_inputs(loaded)), loaded


def loaded_report_inputs(loaded: Any) -> ReportInputs:
    """What ``report.html`` shows, from a comparison read back from MLflow (older comparisons, without
    ``result.json``, get what their tables and params say)."""
    from abcompare.outcome.html import ReportInputs
    from abcompare.tracking.layout import DATASET_TAG

    extras, params = loaded.extras, loaded.params
    return ReportInputs(
        name=extras.get("name", loaded.name),
        description=extras.get("description", ""),
        dataset=extras.get("dataset", loaded.tags.get(DATASET_TAG, "")),
        n_queries=int(extras.get("n_queries", len(loaded.queries))),
        level=extras.get("level", params.get("dataset.level", "")),
        convention=extras.get("convention", params.get("evaluation.convention", "")),
        comparison=loaded.summary,
        per_query=loaded.per_query,
        queries=loaded.queries,
        hits=loaded.hits,
        relevance_threshold=float(
            extras.get("relevance_threshold", params.get("evaluation.relevance_threshold", 1))
        ),
        judged=extras.get("judged", {}),
        judgment_warnings=extras.get("judgment_warnings", []),
        tuned_sentence=extras.get("tuned_sentence"),
        grid=loaded.grid,
        grid_settings=extras.get("grid_settings", []),
        control_seconds_per_query=extras.get("control_seconds_per_query"),
        source=f"run {loaded.parent_run_id} in {loaded.tracking_uri}",
        focus=extras.get("focus", []),
    )


def record(result: ComparisonResult, recorded: Any, logger: Any) -> None:
    """Put where the comparison was recorded on the result; a lost server is an error (exit 3) that keeps
    the result."""
    from abcompare.tracking.logger import PARENT, recorded_lines, variant_handle

    if recorded.lost:  # the server stopped answering: keep the result, say it is not recorded
        from abcompare.outcome.console import result_as_json
        from abcompare.tracking.store import lost_error

        raise lost_error(recorded.uri, result, result_as_json(result))
    result.tracking_uri = recorded.uri
    result.parent_run_id = recorded.run_ids.get(PARENT)
    result.variant_run_ids = {name: recorded.run_ids[variant_handle(name)] for name in result.variants}
    result.recorded = recorded_lines(recorded, result.config.tracking.experiment, {PARENT: logger.run_name()})
    result.ui_hint = result.recorded[-1].removeprefix("View: ")


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
