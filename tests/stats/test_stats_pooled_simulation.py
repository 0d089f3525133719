"""docs/statistics.md's level-and-power table is what scripts/pooled_simulation.py prints, and its prose
quotes that table.

The documented run has 2,000 replicates per row (about a minute); this test runs the first 150 of them
(replicate r of a row draws from the same seed in both) and checks the table's labels exactly and each
documented rate against the shorter run within its binomial 99.9% range, the A/A level against 5%, and
the prose's figures against the table's cells.
"""

from __future__ import annotations

import importlib.util
import re
import sys

import pytest
from scipy import stats
from support.cli import REPO

DOC = REPO / "docs" / "statistics.md"
SHORT = 150
SHORT_COVERAGE = 60


def script():
    spec = importlib.util.spec_from_file_location(
        "pooled_simulation", REPO / "scripts" / "pooled_simulation.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks its module up there
    spec.loader.exec_module(module)
    return module


def cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def rate(cell: str) -> float:
    assert cell.endswith("%"), cell
    return float(cell[:-1]) / 100


def output_block() -> list[str]:
    """The lines of the script's output block in the docs: the rejection table, an empty line, coverage."""
    block = re.search(
        r"<!-- the output of: python scripts/pooled_simulation.py -->\n(.*?)<!-- end of output -->",
        DOC.read_text(encoding="utf-8"),
        re.S,
    )
    assert block, "docs/statistics.md has the simulation's output block"
    lines = block.group(1).splitlines()
    assert lines.count("") == 1, "the block has the rejection table, an empty line, the coverage table"
    return lines


@pytest.fixture(scope="module")
def documented() -> list[str]:
    lines = output_block()
    return lines[: lines.index("")]


@pytest.fixture(scope="module")
def documented_coverage() -> list[str]:
    lines = output_block()
    return lines[lines.index("") + 1 :]


@pytest.fixture(scope="module")
def short_run():
    module = script()
    return module, module.table_lines(replicates=SHORT)


def consistent(documented: list[str], short: list[str], replicates: int) -> None:
    """Each row's label is the script's, and each documented rate is within the binomial 99.9% range of
    the rate the first ``replicates`` replicates give."""
    assert len(documented) == len(short)
    for doc_line, line in zip(documented[2:], short[2:], strict=True):
        doc_cells, short_cells = cells(doc_line), cells(line)
        assert doc_cells[0] == short_cells[0]  # the same design and scenario
        for doc_cell, short_cell in zip(doc_cells[1:], short_cells[1:], strict=True):
            low, high = stats.binom.interval(0.999, replicates, rate(doc_cell))
            hits = round(rate(short_cell) * replicates)
            assert low <= hits <= high, (
                f"{doc_cells[0]}: documented {doc_cell}, the first {replicates}: {short_cell}"
            )


def test_the_documented_table_is_the_scripts_output(documented, short_run):
    module, lines = short_run
    assert documented[:2] == module.header_lines(module.REPLICATES)
    consistent(documented, lines, SHORT)


def test_the_documented_coverage_is_the_scripts_output(documented_coverage):
    module = script()
    assert documented_coverage[:2] == module.coverage_header_lines(module.COVERAGE_REPLICATES)
    consistent(documented_coverage, module.coverage_lines(SHORT_COVERAGE), SHORT_COVERAGE)


def test_the_pooled_test_holds_its_level(documented, short_run):
    _, lines = short_run
    low, high = stats.binom.interval(0.999, SHORT, 0.05)
    for line in lines[2:]:
        if "A/A" in line:
            assert all(low <= round(rate(c) * SHORT) <= high for c in cells(line)[1:]), line
    for line in documented[2:]:
        if "A/A" in line:
            assert all(0.03 <= rate(c) <= 0.07 for c in cells(line)[1:]), line  # 5% ± 2 points


def test_the_prose_quotes_the_table(documented, documented_coverage):
    rows = {cells(line)[0]: [rate(c) for c in cells(line)[1:]] for line in documented[2:]}
    pct = lambda value: f"{value:.1%}"  # noqa: E731
    levels = [r for label, values in rows.items() if "A/A" in label for r in values]
    different = rows["40, 112, 225, 300 queries, shared effect +0.02: power"]
    alike = rows["150, 150, 150, 150 queries, shared effect +0.02: power"]
    prose = " ".join(DOC.read_text(encoding="utf-8").split())
    assert f"every test rejects {100 * min(levels):.1f}-{max(levels):.1%} of 2,000 replicates" in prose
    assert f"at +0.02: {pct(alike[0])} against {pct(alike[2])}" in prose
    assert f"({pct(different[1])} against {pct(different[2])} with the different sizes)" in prose
    assert f"the pooled test ({pct(different[0])}) falls behind Holm ({pct(different[2])})" in prose
    held = {cells(line)[0]: [c for c in cells(line)[1:]] for line in documented_coverage[2:]}
    (bca, pct), (bca_q, pct_q) = (
        held["pooled, equal weight per collection"],
        held["pooled, equal weight per query"],
    )
    assert (
        f"held the shared effect in {bca} (BCa, the `boot_ci_*` columns) and {pct} (percentile) of "
        f"500 replicates with equal weight per collection, {bca_q} and {pct_q} per query" in prose
    )
    # what the prose concludes from them
    assert alike[0] > alike[2] and different[1] > different[2] and different[0] < different[2]
