"""The local executor: every variant produced in turn in this process (the default; no Ray)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from abcompare.core.progress import Reporter
from abcompare.data.runs import run_frame_from_hits
from abcompare.evaluation.per_query import per_query_metrics
from abcompare.execution.base import Retriever, VariantRun, given_run, require_corpus, time_driver_side
from abcompare.retrieval.pipeline import RetrievalCache, run_variant_with_cost
from abcompare.retrieval.settings import VariantSettings

if TYPE_CHECKING:
    import pandas as pd

    from abcompare.data.dataset import Dataset
    from abcompare.retrieval.latency import TimingPass, TimingPlan
    from abcompare.retrieval.pipeline import RetrievalCache


def produce_variant_run(
    name: str,
    variant: VariantSettings,
    dataset: Dataset,
    cache: RetrievalCache,
    cache_dir: Path,
    reporter: Reporter,
    retrievers: Mapping[str, Retriever] | None = None,
    given: Mapping[str, pd.DataFrame] | None = None,
) -> VariantRun:
    """A variant's run table and its cost: read from its run file, from a Python retriever handed over,
    or retrieved here (``cache`` memoises chunks, indexes, embeddings and each retriever's hits across the
    variants of one comparison)."""
    if variant.run is not None:
        return given_run(name, variant, dataset, retrievers, given)
    require_corpus(name, dataset)

    with reporter.progress(f"{name}: retrieving", total=len(dataset.queries)) as advance:
        hits, cost = run_variant_with_cost(
            variant, dataset.corpus, dataset.queries, cache_dir=cache_dir, progress=advance, cache=cache
        )
    return VariantRun(name, run_frame_from_hits(hits), cost.as_metrics())


class LocalExecutor:
    """Today's in-process loop: one variant after the other, lazily, sharing one retrieval cache."""

    name = "local"

    def __init__(self, reporter: Reporter | None = None) -> None:
        self.reporter = reporter or Reporter()
        self.cache = RetrievalCache()

    def variant_runs(
        self,
        variants: Mapping[str, VariantSettings],
        dataset: Dataset,
        cache_dir: Path,
        retrievers: Mapping[str, Retriever] | None = None,
        *,
        given: Mapping[str, pd.DataFrame] | None = None,
    ) -> Iterator[VariantRun]:
        for name, variant in variants.items():
            yield produce_variant_run(
                name, variant, dataset, self.cache, cache_dir, self.reporter, retrievers, given
            )

    def per_query_metrics(
        self, run: pd.DataFrame, annotations: pd.DataFrame, query_ids: Sequence[str], **options: object
    ) -> pd.DataFrame:
        """The evaluation stage in this process."""
        return per_query_metrics(run, annotations, query_ids, **options)  # type: ignore[arg-type]

    def time_queries(
        self, variants: Mapping[str, VariantSettings], dataset: Dataset, cache_dir: Path, plan: TimingPlan
    ) -> TimingPass:
        """The timing pass, reusing the indexes and vectors the variants built (nothing is rebuilt)."""
        return time_driver_side(variants, dataset, cache_dir, plan, self.cache, self.reporter)
