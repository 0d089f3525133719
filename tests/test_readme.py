"""The README's two commands are the ones CI and users run, verbatim."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from support.readme import as_printed, readme_match

REPO = Path(__file__).resolve().parents[1]


def readme_commands() -> list[str]:
    text = (REPO / "README.md").read_text()
    block = re.search(r"## Two commands.*?```bash\n(.*?)```", text, re.S)
    assert block, "README has a 'Two commands' section with a bash block"
    return [line for line in block.group(1).splitlines() if line.strip() and not line.startswith("#")]


def test_readme_has_exactly_two_commands_install_and_run_then_install_and_test() -> None:
    run_command, test_command = readme_commands()
    assert "pip install" in run_command and "abcompare run configs/rrf_vs_dbsf.yaml" in run_command
    assert "pip install" in test_command and "pytest" in test_command
    assert '"torch==2.13.0"' in run_command and '"torch==2.13.0"' in test_command


def test_ci_runs_the_readme_test_command_verbatim() -> None:
    _, test_command = readme_commands()
    ci_lines = (REPO / ".ci" / "run").read_text().splitlines()
    assert test_command in ci_lines


def test_the_layout_section_is_what_the_packages_say_of_themselves():
    """docs/architecture.md's "Layout" is ``scripts/readme_layout.py``'s output: one line per room, from its
    docstring."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("readme_layout", REPO / "scripts" / "readme_layout.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    text = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    marker = "<!-- the output of: python scripts/readme_layout.py -->\n```\n"
    block = text.split(marker, 1)[1].split("```", 1)[0]
    assert block.splitlines() == module.layout_lines(), (
        "run `python scripts/readme_layout.py` into docs/architecture.md"
    )


def test_figures_are_compared_with_the_digits_and_sign_the_readme_prints() -> None:
    """The helper every README-figure test uses: a value written as the README writes its figure."""
    assert as_printed(0.08561, "+0.0856") == "+0.0856"
    assert as_printed(-0.01803, "-0.0180") == "-0.0180"
    assert as_printed(0.01803, "-0.0180") == "0.0180"  # a wrong sign does not pass
    assert as_printed(0.2960704, "0.30") == "0.30" and as_printed(0.2960704, "0.3") == "0.3"
    assert as_printed(34.6, "35") == "35"
    assert as_printed(2 / 3, "2/3") == "2/3" and as_printed(0.67, "2/3") != "2/3"


def test_a_readme_pattern_must_match_exactly_once() -> None:
    assert readme_match(r"k = (\d+) give P", "hits a, b, c, d, k = 4 give P 0.5").group(1) == "4"
    with pytest.raises(AssertionError, match="found 0"):
        readme_match(r"k = 5 give", "k = 4 give")
    with pytest.raises(AssertionError, match="found 2"):
        readme_match(r"k = 4", "k = 4 and k = 4")


def test_the_readme_stays_a_page_read_in_five_minutes() -> None:
    """Issue 41: at most about 300 lines (what it is, the two commands, what you see, the scenarios, where to
    go next); the rest lives in docs/ and the site built from it."""
    lines = (REPO / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 300, len(lines)
    headings = [line[3:] for line in lines if line.startswith("## ")]
    assert headings[:2] == ["Two commands", "What you see"] and "Where to go next" in headings


def test_the_benchmarks_pages_latest_end_to_end_table_is_the_benchmarks_own_output() -> None:
    """docs/benchmarks.md's latest end-to-end table is ``benchmarks/end_to_end_latest.md``'s, as
    ``python -m benchmarks --only end-to-end`` wrote it, and the section states that run's load, commit,
    time and targets as the file gives them (issue 41: no figure on a page that no script produced)."""
    record = (REPO / "benchmarks" / "end_to_end_latest.md").read_text(encoding="utf-8")
    page = (REPO / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    heading = re.search(
        r"^## End to end after the timing pass on cached vectors \(.*, commit (\w+)\)$", page, re.M
    )
    assert heading, "docs/benchmarks.md has the section of the latest end-to-end run"
    section = page[heading.end() :].split("\n## ", 1)[0]
    table = next(block for block in record.split("\n\n") if block.startswith("| config |"))
    marker = "<!-- the table of benchmarks/end_to_end_latest.md, as the benchmark wrote it -->\n"
    assert marker + table + "\n" in section
    assert f"abcompare at commit {heading[1]}" in record
    section = " ".join(section.split())  # the prose's line breaks are spaces
    load = re.search(r"load average at start ([\d.]+)", record)[1]
    wall = re.search(r"Suite wall time: (\d+) s\.", record)[1]
    assert f"load average {load} at the start" in section and f"The whole run took {wall} s." in section
    main = next(line for line in table.splitlines() if line.startswith("| the main job "))
    cells = [cell.strip() for cell in main.strip("|").split("|")]
    assert cells[3] == "317 MB" and "peaks at 317 MB" in section
    timing, share = re.fullmatch(r"(\S+ s) \((\d+%)\)", cells[6]).groups()
    assert f"the timing pass is now {share} of the wall time ({timing} of {cells[2]})" in section
    for target in re.findall(r"^- .*?: (\d+%|[\d.]+x) \(", record, re.M):
        assert target in section, target
