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


@pytest.fixture(scope="module")
def documented() -> list[str]:
    block = re.search(
        r"<!-- the output of: python scripts/pooled_simulation.py -->\n(.*?)<!-- end of output -->",
        DOC.read_text(encoding="utf-8"),
        re.S,
    )
    assert block, "docs/statistics.md has the simulation's output block"
    return block.group(1).splitlines()


@pytest.fixture(scope="module")
def short_run():
    module = script()
    return module, module.table_lines(replicates=SHORT)


def test_the_documented_table_is_the_scripts_output(documented, short_run):
    module, lines = short_run
    assert documented[:2] == module.header_lines(module.REPLICATES)
    assert len(documented) == len(lines)
    for doc_line, line in zip(documented[2:], lines[2:], strict=True):
        doc_cells, short_cells = cells(doc_line), cells(line)
        assert doc_cells[0] == short_cells[0]  # the same design and scenario
        for doc_cell, short_cell in zip(doc_cells[1:], short_cells[1:], strict=True):
            low, high = stats.binom.interval(0.999, SHORT, rate(doc_cell))
            hits = round(rate(short_cell) * SHORT)
            assert low <= hits <= high, (
                f"{doc_cells[0]}: documented {doc_cell}, the first {SHORT} give {short_cell}"
            )


def test_the_pooled_test_holds_its_level(documented, short_run):
    _, lines = short_run
    low, high = stats.binom.interval(0.999, SHORT, 0.05)
    for line in lines[2:]:
        if "A/A" in line:
            assert all(low <= round(rate(c) * SHORT) <= high for c in cells(line)[1:]), line
    for line in documented[2:]:
        if "A/A" in line:
            assert all(0.03 <= rate(c) <= 0.07 for c in cells(line)[1:]), line  # 5% ± 2 points


def test_the_prose_quotes_the_table(documented):
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
    # what the prose concludes from them
    assert alike[0] > alike[2] and different[1] > different[2] and different[0] < different[2]
