"""The experiment runner: the one module that knows the order of the stages.

config -> data -> retrieval (the executor) -> evaluation -> statistics -> outcome -> tracking. Each stage
is a function of its inputs and its settings section, called here in turn; the metric names are computed
once, from the config, and handed to each stage."""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from abcompare.config import ExperimentConfig
from abcompare.core.errors import ConfigError, DataError, error_context
from abcompare.core.progress import Reporter
from abcompare.outcome.results import CollectionsResult, ComparisonResult, VariantOutcome

if TYPE_CHECKING:
    from abcompare.data.dataset import Dataset
    from abcompare.execution.base import Retriever, VariantRun


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
    retrievers: Mapping[str, Retriever] | None = None,
    generators: Mapping[str, Any] | None = None,
) -> ComparisonResult | CollectionsResult:
    """Run the control and every treatment, judge them on the same queries, test, log and return; a config
    with ``datasets`` (several collections) returns a :class:`CollectionsResult`: each collection's own
    comparison and the pooled test of the primary metric (:func:`compare_collections`).

    ``background_tracking`` writes to MLflow from a forked process while the comparison runs (what
    ``abcompare run`` does); by default it is written from this process. ``retrievers`` hands over the
    Python retrievers the config names (``run: {python: NAME}``): ``NAME -> fn``, where ``fn(queries)``
    gets the queries table (``query_id``, ``text``) and returns ``{query_id: [RagHit or dict, ...]}``
    (best first) or a run DataFrame; a name nobody handed over is refused before any run opens.
    ``generators`` hands over the answer generators an ``answers:`` section names (``python:NAME``).
    """
    from abcompare.config.loading import check_models, check_retrievers
    from abcompare.execution import open_executor
    from abcompare.tracking.lifecycle import check_tracking_store

    reporter = reporter or Reporter()
    timer = _Timer()
    check_models(config, config_path)  # a config built in Python skipped load_config's check
    check_retrievers(config, retrievers, config_path)  # the YAML names them; only Python hands them over

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
        if config.datasets is not None:
            result: ComparisonResult | CollectionsResult = compare_collections(
                config, config_path, reporter, timer, executor, background_tracking, retrievers
            )
        else:
            result = _compare_variants(
                config, config_path, reporter, timer, executor, background_tracking, retrievers,
                generators=generators,
            )  # fmt: skip
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
    retrievers: Mapping[str, Retriever] | None = None,
    *,
    dataset: Dataset | None = None,
    produced: Iterator[VariantRun] | None = None,
    nested: Any = None,
    generators: Mapping[str, Any] | None = None,
) -> ComparisonResult:
    """The comparison proper, stage by stage: data, each variant's run from the executor, judged at the
    annotation level, scored and logged; the paired tests (and a sweep's tuned choice), the result, and
    its record in MLflow. Each stage gets its settings section; the metric names are computed once.

    One collection of several hands over its ``dataset`` (already loaded and checked), its variants'
    runs (``produced``: already asked of the executor, so Ray has every collection's work at once) and
    where its MLflow run nests (``nested``: the tracking side's handle, from the whole comparison's run)."""
    from abcompare.answers.stage import answers_stage
    from abcompare.core.scratch import scratch_folder
    from abcompare.data.dataset import dataset_line
    from abcompare.data.experiment import load_dataset_for_experiment
    from abcompare.data.levels import judged_at_level, with_grades
    from abcompare.evaluation.attribution import attribution, attribution_summary, scored_lists
    from abcompare.evaluation.judgments import attach_judged_means, judgment_coverage, lists_relevant_only
    from abcompare.evaluation.measures import judged_columns, metric_columns
    from abcompare.evaluation.per_query import per_query_metrics
    from abcompare.evaluation.unjudged import unjudged_ranges
    from abcompare.judging.stage import judge_stage
    from abcompare.outcome.sentences import grid_frame
    from abcompare.stats.comparison import paired_comparison
    from abcompare.stats.cost import FRONT_COLUMN, PYTHON, RUN_FILE, cost_table, latency_metrics, on_front
    from abcompare.stats.power import queries_needed_table
    from abcompare.stats.robustness import robustness_table
    from abcompare.stats.tuning import tuned_comparison
    from abcompare.tracking.artifacts import comparison_files, variant_files
    from abcompare.tracking.lifecycle import closing_runs, open_logger, record

    evaluation, primary, plan = config.evaluation, config.evaluation.primary_metric, config.sweep_plan
    given = None  # a collection of several hands over its variants' runs (``produced``) instead
    metrics = metric_columns(evaluation.metrics, evaluation.cutoffs)  # the compared metrics, in config order
    means_of = metrics + judged_columns(evaluation.cutoffs)
    if dataset is None:
        with timer("data"):
            reporter.stage("loading the dataset")
            dataset = load_dataset_for_experiment(config.dataset)
        reporter.stage(dataset_line(dataset))
        given = check_inputs(config, dataset)  # the run files, read once: the run stage takes them
    if plan is not None:
        reporter.stage(plan.summary())
        for note in plan.invalid + plan.duplicates:
            reporter.stage(f"  left out: {note}")

    outcomes: dict[str, VariantOutcome] = {}
    control_lists, attributed = None, []  # each treatment's delta attribution, against the control's lists
    judgments_at_level = None  # the control's judgments at the annotation level (the unjudged hits' range)
    with scratch_folder() as tmp:
        with timer("tracking"):
            nesting = {} if nested is None else {"nested": nested}
            logger = open_logger(config, config_path, dataset, tmp, background=background_tracking, **nesting)
        with closing_runs(logger.abort):
            with timer("tracking"):
                logger.start()
            if produced is None:
                produced = executor.variant_runs(
                    config.variants(), dataset, config.resolved_cache_dir(), retrievers, given=given
                )
            for name, variant in config.variants().items():
                role = "control" if name == "control" else "treatment"
                reporter.stage("control" if role == "control" else f"treatment {name}")
                with timer("retrieval"):
                    variant_run = next(produced)
                context = f"variant {name!r}" + _given(variant)
                _check_scored_in_full(variant_run.run, variant, context, evaluation.convention)
                with timer("evaluation"), error_context(context, file=dataset.annotation_file):
                    run, annotations, report = judged_at_level(
                        variant_run.run, dataset, config.dataset.level, **evaluation.alignment_options()
                    )
                    per_query = per_query_metrics(
                        run, annotations, dataset.query_ids, **evaluation.scoring_options()
                    )
                    lists = scored_lists(run, annotations, dataset.query_ids, **evaluation.scoring_options())
                    if role == "control":
                        control_lists = lists
                    else:
                        attributed.append(attribution(control_lists, lists, metrics, name=name))
                    del lists
                run = with_grades(run, annotations)
                judgments_at_level = annotations if role == "control" else judgments_at_level
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
            given = {n: PYTHON if v.run.python else RUN_FILE for n, v in config.variants().items() if v.run}
            cost = cost_table(
                {n: o.efficiency for n, o in outcomes.items()}, samples,
                noise_floor=config.efficiency.noise_floor, seed=config.significance.seed, given=given,
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
                relevant_only = lists_relevant_only(dataset.annotations, evaluation.relevance_threshold)
                ranges = {}  # at span level every located hit is judged, by each variant's own spans
                if config.dataset.level != "span":
                    runs = {n: outcomes[n].run for n in treatments}
                    ranges = unjudged_ranges(
                        outcomes["control"].run, runs, judgments_at_level, dataset.query_ids,
                        metric=primary, **evaluation.unjudged_options(),
                    )  # fmt: skip
                robustness = robustness_table(comparison, ranges, relevant_only=relevant_only)
                needed = queries_needed_table(per_query_tables["control"], treatments, comparison)
            # a judge: section grades the pool and gives the corrected verdict (its seconds are in its cost)
            judged_by = judge_stage(config, dataset, {n: o.run for n, o in outcomes.items()},
                                    judgments_at_level, per_query_tables, reporter=reporter)  # fmt: skip
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
                judgments_relevant_only=relevant_only,
                judgment_warnings=judgment_warnings,
                tuned=tuned,
                grid=grid,
                queries=dataset.queries,
                attribution=attribution_summary(pd.concat(attributed)) if attributed else None,
                attribution_per_query=pd.concat(attributed, ignore_index=True) if attributed else None,
                robustness=robustness,
                queries_needed=needed,
                cost=cost,
                judge=judged_by,
            )
            with timer("tracking"):
                logger.log_comparison(result, comparison_files(result, logger.part_of()))
                recorded = logger.finish()
        if recorded is not None:
            record(result, recorded, logger)
        with timer("answers"):  # an answers: section: answers scored, compared and traced under the run
            result.answers = answers_stage(config, dataset, result, generators=generators, reporter=reporter)
    return result


# ------------------------------------------------------------------------------------------ collections
def compare_collections(
    config: ExperimentConfig,
    config_path: Path | None,
    reporter: Reporter,
    timer: _Timer,
    executor: Any,
    background_tracking: bool,
    retrievers: Mapping[str, Retriever] | None = None,
) -> CollectionsResult:
    """One comparison across several collections (``datasets:``): every collection's dataset loaded and
    checked before any run opens; every collection's variants asked of the executor before the first is
    collected (on Ray they then run together; locally one after the other, sharing the executor's
    retrieval cache and the embedding cache); each collection's ordinary comparison, nested in MLflow under
    the whole comparison's run; then the pooled test of the primary metric across the collections
    (``stats.pooled.pooled_comparison``), its per-collection family corrected as one."""
    from abcompare.core.scratch import scratch_folder
    from abcompare.data.dataset import dataset_line
    from abcompare.data.experiment import load_dataset_for_experiment
    from abcompare.stats.pooled import pooled_comparison
    from abcompare.tracking.lifecycle import closing_runs, open_collections_logger, record_collections

    collections = config.collections()
    datasets: dict[str, Dataset] = {}
    given: dict[str, dict[str, pd.DataFrame]] = {}  # each collection's run files, read once
    for name, collection in collections.items():
        with timer("data"), error_context(f"collection {name!r}"):
            reporter.stage(f"loading collection {name}")
            datasets[name] = load_dataset_for_experiment(collection.dataset)
        reporter.stage(f"  {dataset_line(datasets[name])}")
        given[name] = _checked_collection(config, name, datasets[name], config_path)
    results: dict[str, ComparisonResult] = {}
    with scratch_folder() as tmp:
        with timer("tracking"):
            logger = open_collections_logger(config, config_path, tmp, background=background_tracking)
        with closing_runs(logger.abort):
            with timer("tracking"):
                logger.start(datasets)
            with timer("retrieval"), error_context("collections"):
                produced = {
                    name: executor.variant_runs(
                        c.variants(), datasets[name], c.resolved_cache_dir(), retrievers, given=given[name]
                    )
                    for name, c in collections.items()
                }  # Ray: every collection's tasks are submitted here, before the first is collected
            for i, (name, collection) in enumerate(collections.items(), start=1):
                reporter.stage(f"collection {name} ({i} of {len(collections)})")
                own = _Timer()
                with error_context(f"collection {name!r}"):
                    results[name] = _compare_variants(
                        collection, config_path, reporter, own, executor, background_tracking, retrievers,
                        dataset=datasets[name], produced=produced.pop(name), nested=logger.nested(name),
                    )  # fmt: skip
                for stage, seconds in own.seconds.items():
                    timer.seconds[stage] = timer.seconds.get(stage, 0.0) + seconds
            with timer("statistics"):
                reporter.stage("pooled test across the collections")
                significance = config.significance
                pooled, per_collection = pooled_comparison(
                    {name: r.per_query for name, r in results.items()},
                    metric=config.evaluation.primary_metric,
                    weighting=significance.pooling,
                    correction=significance.correction,
                    alpha=significance.alpha,
                    n_resamples=significance.n_resamples,
                    seed=significance.seed,
                    comparisons={name: r.comparison for name, r in results.items()},
                    min_effect=significance.min_effect,
                    non_inferiority_margin=significance.non_inferiority_margin,
                )
            result = CollectionsResult(
                config=config,
                primary_metric=config.evaluation.primary_metric,
                collections=results,
                pooled=pooled,
                per_collection=per_collection,
                weighting=significance.pooling,
                timings=timer.seconds,
            )
            with timer("tracking"):
                logger.log_collections(result)
                recorded = logger.finish()
        if recorded is not None:
            record_collections(result, recorded, logger)
    return result


def validate_inputs(config: ExperimentConfig, config_path: Path | None = None) -> None:
    """What ``abcompare validate`` checks beyond the config: each collection's dataset loaded, its run
    files covering its queries, and :func:`check_inputs`, the very checks ``run`` applies before any
    retrieval (so a config ``validate`` passes is not refused by ``run`` for its inputs)."""
    from abcompare.data.experiment import load_dataset_for_experiment

    if config.datasets is None:
        check_inputs(config, load_dataset_for_experiment(config.dataset))
        return
    for name, collection in config.collections().items():
        with error_context(f"collection {name!r}"):
            dataset = load_dataset_for_experiment(collection.dataset)
        _checked_collection(config, name, dataset, config_path)


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
    from abcompare.config.loading import collection_key, line_of, variant_key
    from abcompare.core.errors import ConfigError

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
    _check_query_rewrites(config, dataset)
    given = given_run_files(config, dataset) if given is None else dict(given)
    _check_id_kinds(config, dataset, given)
    return given


def given_run_files(config: ExperimentConfig, dataset: Dataset) -> dict[str, pd.DataFrame]:
    """Each run-file variant's rows for the dataset's queries, read once and checked as the run stage
    checks a run (scored in full in the trec convention), each problem naming the variant and its file.
    A named pipe is left to the run stage, which reads it once."""
    from abcompare.execution.base import precomputed_run

    given: dict[str, pd.DataFrame] = {}
    for name, variant in config.variants().items():
        if variant.run is None or variant.run.path is None or not Path(variant.run.path).is_file():
            continue  # a pipe gives its bytes once: the run stage reads it, with the comparison open
        context = f"variant {name!r}" + _given(variant)
        with error_context(context, file=variant.run.path):
            given[name] = precomputed_run(variant, dataset)
        _check_scored_in_full(given[name], variant, context, config.evaluation.convention)
    return given


def _check_id_kinds(config: ExperimentConfig, dataset: Dataset, given: Mapping[str, pd.DataFrame]) -> None:
    """Each variant's possible hit keys against the annotated ids, with the alignment check the run applies
    to its hits (same threshold, same diagnosis): a run file's own keys (``given``), and for a retrieving
    variant the keys its level gives the corpus's documents (``doc`` at document level, ``doc#chunk-N``
    at chunk level, generously: every annotated chunk of a known document counts)."""
    from abcompare.data.levels import judged_at_level

    level, evaluation = config.dataset.level, config.evaluation
    if level == "span" or evaluation.allow_misaligned:
        return
    options = evaluation.alignment_options()
    possible = _retrievable_keys(dataset, level)
    for name, variant in config.variants().items():
        if variant.run is not None and name not in given:
            continue  # a Python retriever's keys are known once it has answered
        context = f"variant {name!r}" + _given(variant)
        run = given.get(name, possible)
        if run is None:
            continue
        with error_context(context, file=dataset.annotation_file):
            judged_at_level(run, dataset, level, **options)


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


def _check_query_rewrites(config: ExperimentConfig, dataset: Any) -> None:
    """Query rewrites files against the dataset's query ids, before any run opens (a located error for an
    unknown id, a warning for queries without rewrites)."""
    variants = config.variants()
    if not any(v.query_planning is not None and v.query_planning.variants for v in variants.values()):
        return
    from abcompare.data.experiment import query_file_ids
    from abcompare.retrieval.query_planning import check_against_queries

    check_against_queries(variants, query_file_ids(config.dataset), dataset.query_ids)


def _check_scored_in_full(run: pd.DataFrame, variant: Any, context: str, convention: str) -> None:
    """``data.runs.check_scored_in_full``, naming the variant's run (its file and line, or its Python
    retriever) and the query, not the judgments it would next be scored against."""
    from abcompare.data.runs import check_scored_in_full

    given = variant.run.path if variant.run is not None and variant.run.path is not None else None
    with error_context(context, file=given):
        check_scored_in_full(run, convention, path=given, fmt=variant.run.format if given else "auto")


def _given(variant: Any) -> str:
    """How a variant's run was given, for its error messages: `` (run file X)``, `` (Python retriever
    'X')``, or nothing (retrieved)."""
    if variant.run is None:
        return ""
    if variant.run.python is not None:
        return f" (Python retriever {variant.run.python!r})"
    return f" (run file {variant.run.path})"


# ------------------------------------------------------------------------------------------ pooling
def pool_to_file(
    config: ExperimentConfig,
    path: Path,
    *,
    fmt: str = "csv",
    depth: int = 10,
    order: str = "decisive",
    reporter: Reporter | None = None,
) -> pd.DataFrame:
    """Pool every variant's unjudged top ``depth`` hits (:func:`pool_unjudged_hits`) and write them to
    ``path`` as CSV or JSONL for annotators; returns the pool."""
    from abcompare.data.pooling import write_pool

    table = pool_unjudged_hits(config, depth=depth, order=order, reporter=reporter)
    write_pool(table, path, fmt)
    return table


def pool_unjudged_hits(
    config: ExperimentConfig,
    *,
    depth: int = 10,
    order: str = "decisive",
    reporter: Reporter | None = None,
    retrievers: Mapping[str, Retriever] | None = None,
) -> pd.DataFrame:
    """Every variant's top ``depth`` hits that nobody judged, once each, for annotators (no MLflow run).

    Variants are produced as ``abcompare run`` produces them (the embedding cache makes a rerun cheap) and
    judged at the configured annotation level: chunk keys at chunk level, document ids at document level.
    Queries nobody judged yet are pooled too: they are the largest holes. ``order="decisive"`` puts first
    the hits whose judgment can move a treatment's primary delta most (the largest |swing| over the
    treatments, over the judged queries; a hit of a query nobody judged yet counts 0), ``stable`` keeps
    the query-by-query order. ``retrievers`` hands over the Python retrievers the config names, as for
    :func:`run_comparison`.
    """
    from abcompare.config.loading import check_retrievers
    from abcompare.data.levels import apply_level
    from abcompare.data.pooling import pool_unjudged
    from abcompare.evaluation.batch import in_evaluation_order
    from abcompare.evaluation.unjudged import decisiveness

    reporter = reporter or Reporter()
    check_retrievers(config, retrievers)
    if config.datasets is not None:
        raise ConfigError(
            "pooling unjudged hits works on one collection, and this config has several (datasets)",
            field="datasets",
            hint="pool each collection on its own: a config with its entry as 'dataset'",
        )
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
    _check_query_rewrites(config, dataset)
    runs: dict[str, pd.DataFrame] = {}
    judgments = dataset.annotations
    with open_executor(config.execution, reporter) as executor:
        produced = executor.variant_runs(config.variants(), dataset, config.resolved_cache_dir(), retrievers)
        for name in config.variants():
            reporter.stage("control" if name == "control" else f"treatment {name}")
            run = next(produced).run
            leveled, at_level = apply_level(run, dataset.annotations, level, corpus=dataset.corpus)
            judgments = at_level if name == "control" else judgments
            runs[name] = in_evaluation_order(leveled, config.evaluation.convention)
    documents = dataset.corpus if level == "document" else None
    evaluation = config.evaluation
    weights = decisiveness(
        runs, judgments, metric=evaluation.primary_metric, **evaluation.unjudged_options()
    ) if order == "decisive" else None  # fmt: skip
    return pool_unjudged(
        runs, dataset.annotations, dataset.queries, depth=depth, documents=documents, decisiveness=weights,
        order=order,
    )  # fmt: skip
