"""What every executor shares: the produced run of one variant, the executor's one verb, and the two
stage steps that need no backend (a precomputed run file is read in the driver, where the file is)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import pandas as pd

from abcompare.core.errors import DataError
from abcompare.retrieval.settings import VariantSettings

if TYPE_CHECKING:
    import numpy as np

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
        self, variants: Mapping[str, VariantSettings], dataset: Dataset, cache_dir: Path
    ) -> Iterator[VariantRun]:
        """One :class:`VariantRun` per variant, in the order of ``variants``, as each becomes ready."""
        ...

    def time_queries(
        self, variants: Mapping[str, VariantSettings], dataset: Dataset, cache_dir: Path, plan: TimingPlan
    ) -> dict[str, np.ndarray]:
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
) -> dict[str, np.ndarray]:
    """The timing pass of every backend, in the driver: one process times every variant, so their
    latencies are comparable whichever worker produced their runs (``cache``: the memo to reuse)."""
    from abcompare.retrieval.latency import time_query_stages

    if plan.repeats == 0 or dataset.corpus is None or all(v.run is not None for v in variants.values()):
        return {}
    reporter.stage(f"timing the query stage: {plan.repeats} interleaved rounds (efficiency.repeats)")
    with reporter.progress("timing queries") as advance:
        return time_query_stages(
            variants, dataset.corpus, dataset.queries, cache_dir=cache_dir, cache=cache, plan=plan,
            progress=advance,
        )  # fmt: skip


def precomputed_run(variant: VariantSettings, dataset: Dataset) -> pd.DataFrame:
    """A variant given as a run file: its rows for the dataset's queries."""
    from abcompare.data.runs import read_run

    assert variant.run is not None
    run = read_run(variant.run.path, fmt=variant.run.format)
    return run[run["query_id"].isin(set(dataset.queries["query_id"]))].reset_index(drop=True)


def require_corpus(name: str, dataset: Dataset) -> None:
    """A variant that retrieves needs the dataset's corpus."""
    if dataset.corpus is None:
        raise DataError(
            f"variant {name!r} retrieves from a corpus, but the dataset has none",
            field="dataset",
            hint="use a dataset with a corpus.jsonl, or give the variant a precomputed run file (run.path)",
        )
