"""The experiment runner: the one module that knows the order of the stages.

An experiment is 1..n collections (``dataset:`` is a list of one), each compared the same way, and across
several the pooled test of the primary metric. Read :func:`run_comparison` top to bottom: load, produce
runs, then per collection judge, cost, test, explain; then pool, and the result. Each stage is a function
of its inputs and its settings section; tracking is one session around them all
(:func:`abcompare.tracking.lifecycle.tracking_session`), and where it recorded is handed back to the
result, never written into it by the tracking side. A new stage (a judge, answers) is one more function
called from :func:`_compare_collection`, its output one more field of :class:`Comparison`."""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager, ExitStack, contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from abcompare.answers.stage import Generator, answers_stage, check_generators
from abcompare.config import ExperimentConfig
from abcompare.config.loading import check_judges, check_models, check_retrievers
from abcompare.core.errors import ConfigError, DataError, error_context
from abcompare.core.progress import Reporter
from abcompare.core.scratch import scratch_folder
from abcompare.data.dataset import dataset_line
from abcompare.data.experiment import load_dataset_for_experiment
from abcompare.data.levels import apply_level, judged_at_level, with_grades
from abcompare.data.pooling import pool_unjudged, write_pool
from abcompare.evaluation.attribution import attribution, attribution_summary, scored_lists
from abcompare.evaluation.batch import in_evaluation_order
from abcompare.evaluation.judgments import attach_judged_means, judgment_coverage, lists_relevant_only
from abcompare.evaluation.measures import judged_columns, metric_columns
from abcompare.evaluation.unjudged import decisiveness, unjudged_ranges
from abcompare.execution import open_executor

# the input checks, run before any run opens (re-exported: `abcompare validate` and tests read them here)
from abcompare.inputs import (  # check_inputs, given_run_files, validate_inputs: read here too
    Naming,
    check_inputs,  # noqa: F401
    check_query_rewrites,
    check_scored_in_full_of,
    checked_part,
    given_note,
    given_run_files,  # noqa: F401
    prefixed,
    validate_inputs,  # noqa: F401
)
from abcompare.judging.pooled import pooled_judge
from abcompare.judging.python_judge import JudgeFunction
from abcompare.judging.stage import judge_pool, judge_stage, with_judge_grades
from abcompare.outcome.results import Comparison, ComparisonResult, VariantOutcome
from abcompare.outcome.sentences import grid_frame
from abcompare.stats.comparison import PairedComparison, paired_test
from abcompare.stats.cost import (
    FRONT_COLUMN,
    GENERATOR,
    JUDGE,
    PYTHON,
    RUN_FILE,
    WorkCost,
    cost_table,
    latency_metrics,
    on_front,
    with_work_rows,
    work_row_name,
)
from abcompare.stats.pooled import pooled_test
from abcompare.stats.power import queries_needed_table
from abcompare.stats.robustness import robustness_table
from abcompare.stats.tuning import tuned_comparison
from abcompare.tracking.artifacts import comparison_files, variant_files
from abcompare.tracking.lifecycle import Part, check_tracking_store, tracking_session

if TYPE_CHECKING:
    from abcompare.answers.stage import AnswersOutcome
    from abcompare.data.dataset import Dataset
    from abcompare.execution.base import Retriever, VariantRun
    from abcompare.judging.stage import JudgeOutcome
    from abcompare.retrieval.settings import VariantSettings
    from abcompare.tracking.lifecycle import TrackingSession
    from abcompare.tracking.logger import Logger


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

    def add(self, other: _Timer) -> None:
        for stage, seconds in other.seconds.items():
            self.seconds[stage] = self.seconds.get(stage, 0.0) + seconds


@dataclass
class _Run:
    """What every stage of one experiment shares: its settings, where to report and time, the executor,
    the Python retrievers handed over, and whether MLflow is written from a forked process."""

    config: ExperimentConfig
    config_path: Path | None
    reporter: Reporter
    timer: _Timer
    executor: Any
    retrievers: Mapping[str, Retriever] | None
    background_tracking: bool
    judges: Mapping[str, JudgeFunction] | None = None
    generators: Mapping[str, Generator] | None = None


@dataclass
class _Collection:
    """One collection to compare: its name, its own one-collection config and its loaded dataset."""

    name: str
    config: ExperimentConfig
    dataset: Dataset
    naming: Naming  # how its errors and progress lines name it (from its name in ``config.parts()``)
    given: dict[str, pd.DataFrame] = field(default_factory=dict)  # its run files, read once by the checks

    def context(self) -> AbstractContextManager[Any]:
        """Errors inside name the collection as its naming says (among several, by its name)."""
        return prefixed(self.naming.contexts)


# ------------------------------------------------------------------------------------------ the run
def run_comparison(
    config: ExperimentConfig,
    *,
    config_path: Path | None = None,
    reporter: Reporter | None = None,
    background_tracking: bool = False,
    retrievers: Mapping[str, Retriever] | None = None,
    judges: Mapping[str, JudgeFunction] | None = None,
    generators: Mapping[str, Generator] | None = None,
) -> ComparisonResult:
    """Run the control and every treatment on each collection, judge them on the same queries, test, log
    and return the :class:`ComparisonResult`: each collection's comparison and, across several
    (``datasets:``), the pooled test of the primary metric.

    ``background_tracking`` writes to MLflow from a forked process while the comparison runs (what
    ``abcompare run`` does); by default it is written from this process. ``retrievers`` hands over the
    Python retrievers the config names (``run: {python: NAME}``): ``NAME -> fn``, where ``fn(queries)``
    gets the queries table (``query_id``, ``text``) and returns ``{query_id: [RagHit or dict, ...]}``
    (best first) or a run DataFrame; a name nobody handed over is refused before any run opens.
    ``judges`` hands over a ``python`` judge (``judge.name``) likewise: ``fn(query_text, hit_text)``
    returns a grade 0-3 (or a text to read one from). ``generators`` hands over the answer generators an
    ``answers:`` section names (``python:NAME``): ``fn(question, hits)`` returns the answer text, or
    ``(answer, cited_ids)`` (docs/answers.md).
    """

    check_models(config, config_path)  # a config built in Python skipped load_config's check
    check_retrievers(config, retrievers, config_path)  # the YAML names them; only Python hands them over
    check_judges(config, judges, config_path)
    check_generators(config, generators, config_path)
    timer, reporter = _Timer(), reporter or Reporter()
    with ExitStack() as stack:
        executor = _start_executor(config, reporter, timer, stack)
        run = _Run(
            config,
            config_path,
            reporter,
            timer,
            executor,
            retrievers,
            background_tracking,
            judges,
            generators,
        )
        collections = load_collections(run)
        result = _compare(run, collections)
        with timer("execution"):
            stack.close()  # a Ray this run started stops here
    return result


def _start_executor(config: ExperimentConfig, reporter: Reporter, timer: _Timer, stack: ExitStack) -> Any:
    """The executor, started while the tracking store is checked (Ray takes seconds); both are checked
    before any MLflow run opens, so an unreachable server or cluster fails early and leaves no run."""

    def check_tracking() -> None:
        with timer("tracking"):
            reporter.stage("connecting to MLflow")
            check_tracking_store(config.tracking)

    with ThreadPoolExecutor(1, thread_name_prefix="abcompare-mlflow") as pool:
        checking = pool.submit(check_tracking) if config.tracking.enabled else None
        try:
            with timer("execution"):
                return stack.enter_context(open_executor(config.execution, reporter))
        finally:
            if checking:
                checking.result()


def load_collections(run: _Run) -> list[_Collection]:
    """Stage 1, load: every collection's dataset loaded and checked before any run opens (``dataset:``
    is a list of one, named by its dataset)."""

    config, reporter = run.config, run.reporter
    loaded = []
    for name, part in config.parts().items():
        naming = Naming.of(name)
        with run.timer("data"), prefixed(naming.contexts):
            reporter.stage(naming.loading)
            dataset = load_dataset_for_experiment(part.dataset)
        reporter.stage(naming.indent + dataset_line(dataset))
        given = checked_part(config, name, part, dataset, run.config_path)
        loaded.append(_Collection(name or dataset.name, part, dataset, naming, given))
    return loaded


def _compare(run: _Run, collections: list[_Collection]) -> ComparisonResult:
    """Stages 2 to 6 in one tracking session: each collection's variants asked of the executor before the
    first is collected (on Ray they then run together), each collection compared, the pooled test across
    several, the result; where it was recorded joins the result last."""

    with scratch_folder() as tmp:
        parts = {c.name: Part(c.config, c.dataset, tmp / str(i)) for i, c in enumerate(collections, start=1)}
        for part in parts.values():
            part.scratch.mkdir()
        with tracking_session(
            run.config, run.config_path, parts, tmp, background=run.background_tracking
        ) as log:
            produced = produce_runs(run, collections)
            compared = {}
            for i, collection in enumerate(collections, start=1):
                for heading in collection.naming.headings:
                    run.reporter.stage(heading.format(i=i, n=len(collections)))
                with collection.context():
                    compared[collection.name] = _compare_collection(
                        run, collection, produced.pop(collection.name), log, parts[collection.name].scratch
                    )
            result = pool(run, compared)
            log.experiment(result)
    return replace(result, where=log.where)


def produce_runs(run: _Run, collections: list[_Collection]) -> dict[str, Iterator[VariantRun]]:
    """Stage 2, produce runs: every collection's variants asked of the executor before the first is
    collected (Ray: every task submitted here; locally each is produced as it is collected)."""
    produced = {}
    with run.timer("retrieval"), prefixed(collections[0].naming.experiment):
        for c in collections:
            produced[c.name] = run.executor.variant_runs(
                c.config.variants(), c.dataset, c.config.resolved_cache_dir(), run.retrievers, given=c.given
            )
    return produced


def _compare_collection(
    run: _Run, collection: _Collection, produced: Iterator[VariantRun], log: TrackingSession, scratch: Path
) -> Comparison:
    """One collection's comparison, stage by stage: each variant judged as it arrives, then its cost, the
    paired tests and what explains them; logged in its own MLflow runs (nested across several)."""

    timer, config, dataset = _Timer(), collection.config, collection.dataset
    own = replace(run, config=config, timer=timer)
    _sweep_summary(own)
    with log.collection(collection.name) as logger:
        judged = judge(own, dataset, produced, logger, scratch)
        cost = measure_cost(own, dataset, judged.outcomes)
        tested = test(own, judged)
        explained = explain(own, dataset, judged, tested, cost)
        # a new stage (a relevance judge, answers) goes here: a function of (own, dataset, judged,
        # comparison), its output one more field of Comparison, logged by logger.log_comparison below
        judged_by = judge_stage(
            config, dataset, {n: o.run for n, o in judged.outcomes.items()}, judged.judgments,
            {n: o.per_query for n, o in judged.outcomes.items()}, reporter=run.reporter,
            judges=run.judges,
        )  # fmt: skip  # a judge: section grades the pool and gives the corrected verdict
        with timer("answers"):  # an answers: section: answers per variant, scored, tested paired, traced
            answered = answers_stage(
                config, dataset, judged.outcomes, generators=run.generators, judges=run.judges,
                reporter=run.reporter,
            )  # fmt: skip
        result = Comparison(
            config=config, dataset_name=dataset.name, n_queries=len(dataset.queries),
            primary_metric=config.evaluation.primary_metric, variants=judged.outcomes,
            comparison=tested.table, timings=timer.seconds, judged=judged.coverage,
            judgments_relevant_only=explained.relevant_only, judgment_warnings=judged.warnings,
            tuned=explained.tuned, grid=explained.grid, queries=dataset.queries,
            attribution=explained.attribution, attribution_per_query=explained.attribution_per_query,
            robustness=explained.robustness,
            queries_needed=explained.queries_needed, cost=_with_work(cost.table, judged_by, answered),
            judge=judged_by, answers=answered, settings=tested.settings,
        )  # fmt: skip
        with timer("tracking"):
            logger.log_comparison(result, comparison_files(result, logger.part_of()))
    run.timer.add(timer)
    return result


def _with_work(
    table: pd.DataFrame, judged_by: JudgeOutcome | None, answered: AnswersOutcome | None
) -> pd.DataFrame:
    """The cost table with a row for the relevance judge, each answer generator and the answer judge the
    comparison ran (issues 39, 40): their calls, tokens, seconds and cache hits."""
    work: dict[str, tuple[str, WorkCost]] = {}
    if judged_by is not None:
        work[work_row_name("relevance judge", judged_by.judge)] = (JUDGE, judged_by.cost)
    if answered is not None:
        for name, generated in answered.generation_cost.items():
            work[work_row_name("answers", name)] = (GENERATOR, generated)
        if answered.judge_cost is not None:
            work[work_row_name("answer judge", str(answered.judge))] = (JUDGE, answered.judge_cost)
    return with_work_rows(table, work)


def _sweep_summary(run: _Run) -> None:
    plan = run.config.sweep_plan
    if plan is not None:
        run.reporter.stage(plan.summary())
        for note in plan.invalid + plan.duplicates:
            run.reporter.stage(f"  left out: {note}")


def _metrics(config: ExperimentConfig) -> list[str]:
    """The compared metric names, in config order, computed once from the evaluation section."""

    return metric_columns(config.evaluation.metrics, config.evaluation.cutoffs)


# ------------------------------------------------------------------------------------------ the stages
@dataclass
class _Judged:
    """Stage 3's output: each variant's outcome, each treatment's delta attribution against the control's
    lists, the control's judgments at the annotation level, and the judged coverage with its warnings."""

    outcomes: dict[str, VariantOutcome]
    attributed: list[pd.DataFrame]
    judgments: pd.DataFrame | None = None
    coverage: dict[str, Any] | None = None
    warnings: list[str] | None = None


def judge(
    run: _Run, dataset: Dataset, produced: Iterator[VariantRun], logger: Logger, scratch: Path
) -> _Judged:
    """Stage 3, judge: each variant's run as the executor hands it over, judged at the annotation level
    and scored per query; its delta attributed against the control's lists; its run logged."""

    judged, control_lists = _Judged({}, []), None
    for name, variant in run.config.variants().items():
        run.reporter.stage("control" if name == "control" else f"treatment {name}")
        with run.timer("retrieval"):
            variant_run = next(produced)
        outcome, lists, annotations = _judge_variant(run, dataset, name, variant, variant_run)
        if outcome.role == "control":
            control_lists, judged.judgments = lists, annotations
        else:
            with run.timer("evaluation"):
                judged.attributed.append(attribution(control_lists, lists, _metrics(run.config), name=name))
        judged.outcomes[name] = outcome
        with run.timer("tracking"):
            settings = variant.model_dump(mode="json", exclude_none=True)
            logger.log_variant(outcome, settings, variant_files(run.config, outcome, scratch))
    return judged


def _judge_variant(
    run: _Run, dataset: Dataset, name: str, variant: VariantSettings, produced: VariantRun
) -> tuple[VariantOutcome, Any, pd.DataFrame]:
    """One variant's hits at the annotation level (aligned, checked), its per-query metrics, its scored
    lists (for the attribution) and the judgments at that level."""

    config, evaluation = run.config, run.config.evaluation
    context = f"variant {name!r}" + given_note(variant)
    check_scored_in_full_of(produced.run, variant, context, evaluation.convention)
    with run.timer("evaluation"), error_context(context, file=dataset.annotation_file):
        hits, annotations, report = judged_at_level(
            produced.run, dataset, config.dataset.level, **evaluation.alignment_options()
        )
        per_query = run.executor.per_query_metrics(
            hits, annotations, dataset.query_ids, **evaluation.scoring_options()
        )  # sharded on Ray for a large run
        lists = scored_lists(hits, annotations, dataset.query_ids, **evaluation.scoring_options())
    means = per_query[_metrics(config) + judged_columns(evaluation.cutoffs)].mean().to_dict()
    role = "control" if name == "control" else "treatment"
    outcome = VariantOutcome(
        name, role, with_grades(hits, annotations), per_query, report, means, produced.efficiency
    )
    return outcome, lists, annotations


@dataclass
class _Cost:
    """Stage 4's output: the cost table and the timed latency samples behind it."""

    table: pd.DataFrame
    samples: Mapping[str, Any]


def measure_cost(run: _Run, dataset: Dataset, outcomes: Mapping[str, VariantOutcome]) -> _Cost:
    """Stage 4, cost: each retrieved variant's query latency timed after every variant ran (in the
    driver, for every backend), the cost table with each treatment's ratios to the control; the timed
    latency joins each variant's build figures."""

    config = run.config
    with run.timer("timing"):
        timed = run.executor.time_queries(
            config.variants(), dataset, config.resolved_cache_dir(), config.efficiency.timing_plan()
        )
    samples = timed.samples
    given = {n: PYTHON if v.run.python else RUN_FILE for n, v in config.variants().items() if v.run}
    table = cost_table(
        {n: o.efficiency for n, o in outcomes.items()}, samples,
        noise_floor=config.efficiency.noise_floor, seed=config.significance.seed, given=given,
        untimed_encoding=timed.untimed,
    )  # fmt: skip
    for name in table.index:
        outcomes[name].efficiency.update(latency_metrics(table.loc[name]))
    return _Cost(table, samples)


def test(run: _Run, judged: _Judged) -> PairedComparison:
    """Stage 5, test: the judged coverage (its warnings said), then the paired tests of each treatment
    against the control on every metric, with each variant's judged means."""

    config, primary = run.config, run.config.evaluation.primary_metric
    tables = {n: o.per_query for n, o in judged.outcomes.items()}
    judged.coverage, judged.warnings = judgment_coverage(tables, primary)
    for note in judged.warnings:
        run.reporter.warn(note)
    with run.timer("statistics"):
        run.reporter.stage("paired significance tests")
        treatments = {n: frame for n, frame in tables.items() if n != "control"}
        with run.reporter.progress("paired tests") as advance:  # the tests report their own total
            tested = paired_test(
                tables["control"], treatments, metrics=_metrics(config), primary_metric=primary,
                progress=advance, **config.significance.testing_options(),
            )  # fmt: skip
        return replace(tested, table=attach_judged_means(tested.table, tables))


@dataclass
class _Explained:
    """Stage 6's output: what explains each treatment's delta and how far it can be trusted."""

    relevant_only: bool
    robustness: pd.DataFrame
    queries_needed: pd.DataFrame
    attribution: pd.DataFrame | None
    attribution_per_query: pd.DataFrame | None
    tuned: Any = None
    grid: pd.DataFrame | None = None


def explain(
    run: _Run, dataset: Dataset, judged: _Judged, tested: PairedComparison, cost: _Cost
) -> _Explained:
    """Stage 6, explain: where each delta comes from (the attribution), whether the verdict holds over
    what the unjudged hits could be (the robustness), the queries needed, and a sweep's tuned choice."""

    config, evaluation, outcomes = run.config, run.config.evaluation, judged.outcomes
    with run.timer("statistics"):
        relevant_only = lists_relevant_only(dataset.annotations, evaluation.relevance_threshold)
        treatments = {n: o.per_query for n, o in outcomes.items() if n != "control"}
        ranges = {}  # at span level every located hit is judged, by each variant's own spans
        if config.dataset.level != "span":
            ranges = unjudged_ranges(
                outcomes["control"].run, {n: outcomes[n].run for n in treatments}, judged.judgments,
                dataset.query_ids, metric=evaluation.primary_metric, **evaluation.unjudged_options(),
            )  # fmt: skip
        robustness = robustness_table(tested, ranges, relevant_only=relevant_only)
        needed = queries_needed_table(outcomes["control"].per_query, treatments, tested)
    parts = judged.attributed
    summary = attribution_summary(pd.concat(parts)) if parts else None
    per_query = pd.concat(parts, ignore_index=True) if parts else None
    explained = _Explained(relevant_only, robustness, needed, summary, per_query)
    if config.sweep_plan is not None:
        explained.tuned, explained.grid = _tuned_choice(run, outcomes, tested.table, cost)
    return explained


def _tuned_choice(
    run: _Run, outcomes: Mapping[str, VariantOutcome], comparison: pd.DataFrame, cost: _Cost
) -> tuple[Any, pd.DataFrame]:
    """A sweep's tuned choice among its candidates (cross-validated, so its gain is measured unseen) and
    its grid of candidates, with the noise-aware quality-vs-latency front."""

    config, plan, sig = run.config, run.config.sweep_plan, run.config.significance
    select, control = config.sweep.select, outcomes["control"].per_query
    with run.timer("statistics"):
        run.reporter.stage("cross-validated choice among the sweep's candidates")
        tuned = tuned_comparison(
            control, {n: outcomes[n].per_query for n in plan.candidates},
            metric=select.metric or config.evaluation.primary_metric, folds=min(select.folds, len(control)),
            seed=sig.seed, n_resamples=sig.n_resamples, alpha=sig.alpha,
        )  # fmt: skip
    grid = grid_frame(comparison, plan.settings, {n: outcomes[n].efficiency for n in plan.candidates})
    if not grid.empty:
        grid[FRONT_COLUMN] = on_front(grid, cost.samples, config.efficiency.noise_floor, sig.seed)
    return tuned, grid


def pool(run: _Run, compared: dict[str, Comparison]) -> ComparisonResult:
    """Stage 7, pool: across several collections, the pooled test of the primary metric
    (``stats.pooled.pooled_comparison``), its per-collection family corrected as one; the result."""

    config, significance = run.config, run.config.significance
    result = ComparisonResult(
        config, config.evaluation.primary_metric, compared, weighting=significance.pooling,
        timings=run.timer.seconds,
    )  # fmt: skip
    if len(compared) > 1:
        with run.timer("statistics"):
            run.reporter.stage("pooled test across the collections")
            pooled = pooled_test(
                {name: c.per_query for name, c in compared.items()},
                metric=config.evaluation.primary_metric, weighting=significance.pooling,
                correction=significance.correction, alpha=significance.alpha,
                n_resamples=significance.n_resamples, seed=significance.seed,
                comparisons={name: c.tested for name, c in compared.items()},
                min_effect=significance.min_effect,
                non_inferiority_margin=significance.non_inferiority_margin,
            )  # fmt: skip
        result = replace(
            result, pooled=pooled.pooled, per_collection=pooled.per_collection,
            pooled_settings=pooled.settings, family=pooled.family,
            pooled_judge=pooled_judge({name: c.judge for name, c in compared.items()}, significance.pooling),
        )  # fmt: skip
    return result


def pool_to_file(
    config: ExperimentConfig,
    path: Path,
    *,
    fmt: str = "csv",
    depth: int = 10,
    order: str = "decisive",
    reporter: Reporter | None = None,
    retrievers: Mapping[str, Retriever] | None = None,
    judges: Mapping[str, JudgeFunction] | None = None,
) -> pd.DataFrame:
    """Pool every variant's unjudged top ``depth`` hits (:func:`pool_unjudged_hits`) and write them to
    ``path`` as CSV or JSONL for annotators; returns the pool. With a ``judge:`` section (not a ``file``
    one) the judge grades the first ``judge.max_pairs`` and the file says which, with what grade
    (``judge_grade``, ``judged_by``), beside the empty ``grade`` people fill in."""

    check_judges(config, judges)
    table = pool_unjudged_hits(config, depth=depth, order=order, reporter=reporter, retrievers=retrievers)
    if config.judge is not None and config.judge.provider != "file" and len(table):
        (reporter or Reporter()).stage(f"grading up to {config.judge.max_pairs} pooled hits with the judge")
        table = with_judge_grades(table, judge_pool(config, table, judges=judges))
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

    reporter = reporter or Reporter()
    check_retrievers(config, retrievers)
    _check_poolable(config)
    reporter.stage("loading the dataset")
    dataset = load_dataset_for_experiment(config.dataset, unjudged_queries=True)
    check_query_rewrites(config, dataset)
    runs, judgments = _runs_at_level(config, dataset, reporter, retrievers)
    level, evaluation = config.dataset.level, config.evaluation
    documents = dataset.corpus if level == "document" else None
    weights = decisiveness(
        runs, judgments, metric=evaluation.primary_metric, **evaluation.unjudged_options()
    ) if order == "decisive" else None  # fmt: skip
    return pool_unjudged(
        runs, dataset.annotations, dataset.queries, depth=depth, documents=documents, decisiveness=weights,
        order=order,
    )  # fmt: skip


def _check_poolable(config: ExperimentConfig) -> None:
    """Pooling works on one collection's listed judgments: refused across several, and at span level."""
    if config.datasets is not None:
        raise ConfigError(
            "pooling unjudged hits works on one collection, and this config has several (datasets)",
            field="datasets",
            hint="pool each collection on its own: a config with its entry as 'dataset'",
        )
    if config.dataset.level == "span":
        raise DataError(
            "nothing to pool at span level: evidence spans judge every located hit",
            field="dataset.level",
            hint="pool at chunk or document level, where judgments are listed (query, id) pairs",
        )


def _runs_at_level(
    config: ExperimentConfig, dataset: Dataset, reporter: Reporter, retrievers: Mapping[str, Retriever] | None
) -> tuple[dict[str, pd.DataFrame], pd.DataFrame]:
    """Each variant's run as ``abcompare run`` produces it, at the annotation level in evaluation order,
    and the judgments at that level (the control's)."""

    runs: dict[str, pd.DataFrame] = {}
    judgments, level = dataset.annotations, config.dataset.level
    with open_executor(config.execution, reporter) as executor:
        produced = executor.variant_runs(config.variants(), dataset, config.resolved_cache_dir(), retrievers)
        for name in config.variants():
            reporter.stage("control" if name == "control" else f"treatment {name}")
            run = next(produced).run
            leveled, at_level = apply_level(run, dataset.annotations, level, corpus=dataset.corpus)
            judgments = at_level if name == "control" else judgments
            runs[name] = in_evaluation_order(leveled, config.evaluation.convention)
    return runs, judgments
