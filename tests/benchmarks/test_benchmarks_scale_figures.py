"""The scale figures docs/speed.md (the README's Speed section) quotes come from the file the scale benchmark
wrote (``benchmarks/scale_latest.json``, ``python -m benchmarks.bench_scale ... --record``): each recorded
size's sentence of ratios, as :func:`benchmarks.bench_scale.speed_sentences` words it, is in the page, and
docs/benchmarks.md gives the command that wrote it and the load it ran at. No timing is asserted here: the
figures are one run's, and this checks only that the docs say what that run measured."""

from __future__ import annotations

import json
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from benchmarks.bench_scale import speed_sentences  # noqa: E402

RECORDS = [REPO_ROOT / "benchmarks" / "scale_latest.json", REPO_ROOT / "benchmarks" / "scale_ray_latest.json"]


def _read(path: Path) -> str:
    return " ".join(path.read_text(encoding="utf-8").split())  # line breaks of the page are spaces


def test_speed_page_quotes_the_recorded_scale_ratios() -> None:
    speed = _read(REPO_ROOT / "docs" / "speed.md")
    for path in RECORDS:
        record = json.loads(path.read_text(encoding="utf-8"))
        assert record["sizes"], f"{path.name} records no size"
        for sentence in speed_sentences(record):
            assert sentence in speed, f"docs/speed.md does not quote {path.name}: {sentence}"


def test_benchmarks_page_gives_each_record_s_command_and_load() -> None:
    page = _read(REPO_ROOT / "docs" / "benchmarks.md")
    for path in RECORDS:
        record = json.loads(path.read_text(encoding="utf-8"))
        assert record["command"] in page, f"docs/benchmarks.md lacks the command of {path.name}"
        load = record["load_average"]
        assert f"load average {load['start']:.2f} at the start, {load['end']:.2f} at the end" in page
