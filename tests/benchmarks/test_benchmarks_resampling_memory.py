"""The resampling's memory at a million queries, as docs/statistics.md quotes it, comes from the record the
benchmark wrote (``benchmarks/resampling_memory_latest.json``, ``python -m benchmarks.bench_resampling_memory
... --record``): the page has the record's sentence and its command. No memory or time is asserted of this
machine: the figures are one run's; this checks the docs say what that run measured, and that the record
shows what the docs claim of it (the peak does not grow with B)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from benchmarks.bench_resampling_memory import memory_sentence  # noqa: E402

RECORD = REPO_ROOT / "benchmarks" / "resampling_memory_latest.json"


def _read(path: Path) -> str:
    return " ".join(path.read_text(encoding="utf-8").split())  # line breaks of the page are spaces


def test_the_statistics_page_quotes_the_recorded_memory_and_its_command() -> None:
    record = json.loads(RECORD.read_text(encoding="utf-8"))
    page = _read(REPO_ROOT / "docs" / "statistics.md")
    assert memory_sentence(record) in page
    assert record["command"] + " --record benchmarks/resampling_memory_latest.json" in page


def test_the_record_measured_a_million_queries_at_two_numbers_of_resamples_with_one_peak_each() -> None:
    rows = json.loads(RECORD.read_text(encoding="utf-8"))["records"]
    largest = [r for r in rows if r["n_queries"] == 1_000_000]
    assert {r["part"] for r in largest} == {"sign flips", "bootstrap", "paired_comparison"}
    assert len({r["n_resamples"] for r in largest}) >= 2
    for part in ("sign flips", "bootstrap", "paired_comparison"):  # what the page says: independent of B
        assert len({r["peak_above_input_mib"] for r in largest if r["part"] == part}) == 1, part
