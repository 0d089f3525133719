"""The README's CI section as a CI job runs it: each command of its example, run as printed in a folder
laid out like the checkout, prints the lines the README shows under it (figures included) and exits with
the code the README gives; the GitHub Actions job runs the same commands, with the install line of "Two
commands"."""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path

import pytest
import yaml
from support.cli import REPO, cli_command, cli_env
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
    (tmp_path / "configs").symlink_to(REPO / "configs")
    steps = readme_steps()
    assert [command.split()[:2] for command, _, _ in steps] == [["abcompare", "run"]] * 2 + [
        ["abcompare", "report"]
    ]
    for command, shown, code in steps:
        argv = cli_command() + shlex.split(command)[1:]
        done = subprocess.run(argv, cwd=tmp_path, env=cli_env(embedding_cache), capture_output=True,
                              text=True, timeout=900)  # fmt: skip
        assert done.returncode == code, (command, done.returncode, done.stderr[-3000:])
        output = done.stdout + "\n" + done.stderr
        missing = [line for line in shown if not shows(line, output)]
        assert not missing, (command, missing, output[-3000:])
    summary = (tmp_path / "summary.md").read_text()
    assert "Non-inferiority: non-inferior on ndcg@10 at margin 0.02" in summary  # the latest comparison
