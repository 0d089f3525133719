"""The README's two commands are the ones CI and users run, verbatim."""

from __future__ import annotations

import re
from pathlib import Path

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
    """README "Layout" is ``scripts/readme_layout.py``'s output: one line per room, from its docstring."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("readme_layout", REPO / "scripts" / "readme_layout.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    text = (REPO / "README.md").read_text(encoding="utf-8")
    marker = "<!-- the output of: python scripts/readme_layout.py -->\n```\n"
    block = text.split(marker, 1)[1].split("```", 1)[0]
    assert block.splitlines() == module.layout_lines(), "run `python scripts/readme_layout.py` into README"
