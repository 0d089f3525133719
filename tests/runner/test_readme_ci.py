"""The README's CI section as a CI job runs it: each command of its example, run as printed in a folder
laid out like the checkout, prints the lines the README shows under it (figures included) and exits with
the code the README gives; the GitHub Actions job runs the same commands, with the install line of "Two
commands"."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
import yaml
from support.cli import NO_TIMING, REPO, error_lines, invoke_cli
from support.readme import doc_section, readme_section, shows

SECTION = "In CI: a gate and a job summary"


def readme_steps() -> list[tuple[str, list[str], int]]:
    """The example's commands, each with the lines shown under it and its exit code."""
    block = re.search(r"```bash\n(.*?)```", doc_section("docs/ci.md", SECTION), re.S)
    assert block, "the CI section shows its commands as a bash block"
    steps: list[tuple[str, list[str], int | None]] = []
    for line in block.group(1).splitlines():
        if not line.startswith("#"):
            steps.append((line, [], None))
            continue
        said = line.lstrip("#").strip()
        code = re.fullmatch(r"exit code (\d+)", said)
        if code:
            steps[-1] = (steps[-1][0], steps[-1][1], int(code.group(1)))
        else:
            steps[-1][1].append(said)
    assert all(code is not None for _, _, code in steps), "every command says its exit code"
    return steps  # type: ignore[return-value]


def installed_package_command() -> str:
    """The section's command for an installed package: its second bash block."""
    blocks = re.findall(r"```bash\n(.*?)```", doc_section("docs/ci.md", SECTION), re.S)
    assert len(blocks) == 2, "the CI section shows the example's commands, then the installed package's"
    (command,) = blocks[1].strip().splitlines()
    return command


def readme_job() -> dict:
    block = re.search(r"```yaml\n(.*?)```", doc_section("docs/ci.md", SECTION), re.S)
    assert block, "the CI section shows a GitHub Actions job"
    return yaml.safe_load(block.group(1))


def test_the_github_job_runs_the_example_commands() -> None:
    steps = readme_job()["jobs"]["gate"]["steps"]
    runs = [step["run"] for step in steps if "run" in step]
    install = re.search(r'pip install "torch==[\d.]+" -e \.', readme_section("Two commands")).group(0)
    assert runs[0] == install
    gate, summary = runs[1:]
    first, _, code = readme_steps()[0]
    assert gate == first and code == 4  # the job fails on the command the example shows failing
    assert summary == 'abcompare report --format markdown >> "$GITHUB_STEP_SUMMARY"'
    assert next(step for step in steps if step.get("run") == summary)["if"] == "always()"


@pytest.mark.slow
def test_the_readme_ci_example_prints_what_the_readme_says(tmp_path: Path, embedding_cache: Path) -> None:
    """Each command in this process (:func:`invoke_cli`: its exit code is the one ``main`` returns; the
    console script returns what ``main`` returns: tests/runner/test_cli_gate.py runs a gate both ways), each
    ``run`` without the latency timing pass (the section shows no cost and the pass changes no number)."""
    (tmp_path / "configs").symlink_to(REPO / "configs")
    steps = readme_steps()
    assert [command.split()[:2] for command, _, _ in steps] == [["abcompare", "run"]] * 2 + [
        ["abcompare", "report"]
    ]
    for command, shown, code in steps:
        args = shlex.split(command)[1:]
        done = invoke_cli(args + (NO_TIMING if args[0] == "run" else []), tmp_path, embedding_cache)
        assert done.returncode == code, (command, done.returncode, done.stderr[-3000:])
        output = done.stdout + "\n" + done.stderr
        missing = [line for line in shown if not shows(line, output)]
        assert not missing, (command, missing, output[-3000:])
    summary = (tmp_path / "summary.md").read_text()
    assert "Non-inferiority: non-inferior on ndcg@10 at margin 0.02" in summary  # the latest comparison


def test_from_an_installed_package_the_section_runs_the_same_gate_by_example() -> None:
    """The CI section's gate, for an installed package: the clone's first command with the shipped
    config's path replaced by its ``--example`` name, nothing else changed."""
    first, _, _ = readme_steps()[0]
    assert "configs/rrf_vs_dbsf.yaml" in first
    assert installed_package_command() == first.replace("configs/rrf_vs_dbsf.yaml", "--example rrf_vs_dbsf")


def test_the_clone_command_in_an_empty_folder_names_the_example_that_exists(
    tmp_path: Path, embedding_cache: Path
) -> None:
    """The clone's command where no ``configs/`` is (a wheel in an empty folder): "config file not found",
    exit 2, one error line that names ``--example rrf_vs_dbsf``, an example ``abcompare examples`` lists.
    A missing config named like no shipped one gets no such hint."""
    first, _, _ = readme_steps()[0]
    done = invoke_cli(shlex.split(first)[1:], tmp_path, embedding_cache)
    assert done.returncode == 2, done.stderr[-3000:]
    (line,) = error_lines(done.stderr)
    assert line.startswith("error: configs/rrf_vs_dbsf.yaml: config file not found"), line
    assert "`abcompare run --example rrf_vs_dbsf`" in line, line
    listed = invoke_cli(["examples"], tmp_path, embedding_cache)
    assert "rrf_vs_dbsf" in [row.split()[0] for row in listed.stdout.splitlines() if row.strip()]
    other = invoke_cli(["run", "configs/my_own.yaml"], tmp_path, embedding_cache)
    (line,) = error_lines(other.stderr)
    assert other.returncode == 2 and line == "error: configs/my_own.yaml: config file not found"
    assert not (tmp_path / "mlflow.db").exists()
