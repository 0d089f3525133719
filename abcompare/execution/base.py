"""What every executor shares: the produced run of one variant, the executor's one verb, and the two
stage steps that need no backend (a precomputed run file is read in the driver, where the file is)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import pandas as pd

from abcompare.core.errors import ConfigError, DataError
from abcompare.core.vocabulary import CONTROL
from abcompare.data.runs import read_run, returned_run
from abcompare.retrieval.latency import TimingPass, timing_pass
from abcompare.retrieval.pipeline import RetrievalCost
from abcompare.retrieval.settings import VariantSettings

if TYPE_CHECKING:
    from abcompare.core.progress import Reporter
    from abcompare.data.dataset import Dataset
    from abcompare.retrieval.latency import TimingPlan
    from abcompare.retrieval.pipeline import RetrievalCache


@dataclass
class VariantRun:
    """One variant's hits as a run table, and what producing them cost (``efficiency.*``; empty for a
    precomputed run file)."""

    name: str
    run: pd.DataFrame
    efficiency: dict[str, float] = field(default_factory=dict)


class Executor(Protocol):
    """Produces the run of each variant; the runner judges, tests and logs them in the driver."""

    name: str

    def variant_runs(
        self,
        variants: Mapping[str, VariantSettings],
        dataset: Dataset,
        cache_dir: Path,
        retrievers: Mapping[str, Retriever] | None = None,
        *,
        given: Mapping[str, pd.DataFrame] | None = None,
    ) -> Iterator[VariantRun]:
        """One :class:`VariantRun` per variant, in the order of ``variants``, as each becomes ready; a run
        given as a file or a Python retriever (from ``retrievers``) is produced in the driver
        (:func:`given_run`; ``given``: run files already read, by name, not read again)."""
        ...

    def per_query_metrics(
        self, run: pd.DataFrame, annotations: pd.DataFrame, query_ids: Sequence[str], **options: object
    ) -> pd.DataFrame:
        """The evaluation stage of one variant: :func:`abcompare.evaluation.per_query.per_query_metrics`
        (``options``: its keywords), in the driver or sharded by queries; the same table either way."""
        ...

    def time_queries(
        self, variants: Mapping[str, VariantSettings], dataset: Dataset, cache_dir: Path, plan: TimingPlan
    ) -> TimingPass:
        """After every variant has run: each retrieval variant's query latency, timed in this process
        (the driver) in interleaved rounds (:func:`time_driver_side`)."""
        ...


def time_driver_side(
    variants: Mapping[str, VariantSettings],
    dataset: Dataset,
    cache_dir: Path,
    plan: TimingPlan,
    cache: RetrievalCache,
    reporter: Reporter,
) -> TimingPass:
    """The timing pass of every backend, in the driver: one process times every variant, so their
    latencies are comparable whichever worker produced their runs (``cache``: the memo to reuse)."""
    if plan.repeats == 0 or dataset.corpus is None or all(v.run is not None for v in variants.values()):
        return TimingPass({})
    reporter.stage(
        f"timing the query stage: {plan.repeats} interleaved rounds within {plan.budget_seconds:g} s "
        "(efficiency.repeats, efficiency.budget_seconds)"
    )
    with reporter.progress("timing queries") as advance:
        timed = timing_pass(
            variants, dataset.corpus, dataset.queries, cache_dir=cache_dir, cache=cache, plan=plan,
            progress=advance,
        )  # fmt: skip
    for name, seconds in timed.loaded:  # the run read its vectors from the cache (or Ray's workers did)
        reporter.stage(
            f"timing the query stage: loaded {name} to encode queries live ({seconds:.1f} s, before the "
            "budget: the run itself had not loaded it)"
        )
    if timed.untimed:  # a shared dense stage's model the run never loaded: not loaded to time it
        reporter.stage(
            f"timing the query stage: query encoding by {', '.join(timed.untimed)} not timed (every variant "
            "shares it and the run read its vectors from the cache): the search is timed"
        )
    if timed.note:  # the budget cut rounds (a busy machine, mostly): said, not warned; the cost line states
        reporter.stage(f"timing the query stage: {timed.note}: a larger budget times them all")  # the sample
    # the rounds always timed running past the budget (timed.overrun) is not said: nothing to act on, and
    # the cost line states the sample it timed
    return timed


#: A retriever handed over in Python: the queries table (``query_id``, ``text``, any extra fields) in,
#: each query's ranked hits out (``{query_id: [RagHit or dict, ...]}``, best first, or a run DataFrame).
Retriever = Callable[[pd.DataFrame], Any]


def precomputed_run(variant: VariantSettings, dataset: Dataset) -> pd.DataFrame:
    """A variant given as a run file: its rows for the dataset's queries."""
    assert variant.run is not None and variant.run.path is not None
    return _for_queries(read_run(variant.run.path, fmt=variant.run.format), dataset)


def _for_queries(run: pd.DataFrame, dataset: Dataset) -> pd.DataFrame:
    return run[run["query_id"].isin(set(dataset.queries["query_id"]))].reset_index(drop=True)


def given_run(
    name: str,
    variant: VariantSettings,
    dataset: Dataset,
    retrievers: Mapping[str, Retriever] | None,
    given: Mapping[str, pd.DataFrame] | None = None,
) -> VariantRun:
    """A variant whose run is given, not retrieved, produced in the driver (where the file is, and where
    the caller's callable lives: it is never pickled): a run file as it reads, or the hits of the Python
    retriever ``run.python`` names, called once with the dataset's queries and checked by the run-file
    rules (``data.runs.returned_run``); a run file already read (``given[name]``, by the inputs' check) is
    not read again. The callable's wall time over the queries is its cost
    (``efficiency.seconds_per_query``); it builds no index the comparison could see."""
    assert variant.run is not None
    if variant.run.python is None:
        if given is not None and name in given:
            return VariantRun(name, given[name])
        return VariantRun(name, precomputed_run(variant, dataset))

    python = variant.run.python
    field = (CONTROL if name == CONTROL else f"treatments.{name}") + ".run.python"
    retriever = (retrievers or {}).get(python)
    if retriever is None:  # run_comparison checks this before any run opens; a direct caller gets it here
        raise ConfigError(f"names the Python retriever {python!r}, which nobody handed over", field=field)
    queries = dataset.queries.reset_index(drop=True)
    start = time.perf_counter()
    returned = retriever(queries.copy())
    seconds = time.perf_counter() - start
    try:
        run = returned_run(returned)
    except DataError as error:
        where = error.location()
        raise DataError(
            f"the Python retriever {python!r} {where + ': ' if where else ''}{error.message}",
            field=field,
            hint=error.hint,
        ) from None
    cost = RetrievalCost(queries=len(queries), query_seconds=seconds)
    efficiency = {**cost.as_metrics(), "efficiency.seconds_per_query": cost.seconds_per_query}  # one call
    return VariantRun(name, _for_queries(run, dataset), efficiency)


def require_corpus(name: str, dataset: Dataset) -> None:
    """A variant that retrieves needs the dataset's corpus."""
    if dataset.corpus is None:
        raise DataError(
            f"variant {name!r} retrieves from a corpus, but the dataset has none",
            field="dataset",
            hint="use a dataset with a corpus.jsonl, or give the variant a precomputed run file (run.path)",
        )
