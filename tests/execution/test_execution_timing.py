"""What the driver-side timing pass tells the person running it: a budget too small for its rounds is a
warning that says by how much the three rounds always timed ran past it, and a sample that fits is timed
without one."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from abcompare.core.progress import Reporter
from abcompare.data.dataset import Dataset
from abcompare.execution.base import time_driver_side
from abcompare.retrieval.latency import TimingPlan
from abcompare.retrieval.pipeline import RetrievalCache
from abcompare.retrieval.settings import VariantSettings


class Recorded(Reporter):
    """The base reporter, keeping what it was told."""

    def __init__(self) -> None:
        self.stages: list[str] = []
        self.warnings: list[str] = []

    def stage(self, message: str) -> None:
        self.stages.append(message)

    def warn(self, message: str) -> None:
        self.warnings.append(message)


def dataset() -> Dataset:
    corpus = pd.DataFrame(
        {"doc_id": [f"d{i}" for i in range(6)], "title": "", "text": [f"word{i} common" for i in range(6)]}
    )
    queries = pd.DataFrame({"query_id": [f"q{i}" for i in range(6)], "text": [f"word{i}" for i in range(6)]})
    return Dataset("tiny", corpus, queries, pd.DataFrame(columns=["query_id", "doc_id", "relevance"]))


def test_a_budget_too_small_times_three_rounds_unsaid_and_one_that_fits_times_all(tmp_path: Path) -> None:
    """The rounds always timed running past the budget is neither warned nor said (issue 41: on a busy
    machine a user has nothing to act on; the cost line states the sample, three rounds)."""
    variants = {"control": VariantSettings(chunking={"strategy": "none"}, retrievers={"bm25": {}}, top_k=3)}
    said = Recorded()
    samples = time_driver_side(
        variants, dataset(), tmp_path, TimingPlan(5, 6, 1e-6), RetrievalCache(), said
    ).samples
    assert samples["control"].shape == (3, 5)  # the three rounds always timed, over five queries
    assert said.stages == [
        "timing the query stage: 5 interleaved rounds within 1e-06 s "
        "(efficiency.repeats, efficiency.budget_seconds)"
    ]
    assert said.warnings == []
    said = Recorded()
    samples = time_driver_side(
        variants, dataset(), tmp_path, TimingPlan(3, 6, 30), RetrievalCache(), said
    ).samples
    assert samples["control"].shape == (3, 6) and said.warnings == []
