"""The CI gate as a CI job runs it: ``abcompare run CONFIG --fail-on ...`` logs and prints the whole
comparison, then says in one line which treatments fail the gate and exits 4 (0 when none does);
``abcompare report --format markdown`` writes the job summary, whose verdict sentences are the console's.
A bad gate is one located error before any work (exit 2)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from mlflow import MlflowClient
from support.cli import CLI_WAYS, error_lines, invoke_cli
from support.configs import MINIMAL

CONFIG = MINIMAL + "significance:\n  n_resamples: 200\n"  # BM25 vs BM25 with k1 0.9: a small loss
MARGIN = ["--set", "significance.non_inferiority_margin=0.01"]


def config_in(folder: Path) -> Path:
    path = folder / "gate.yaml"
    path.write_text(CONFIG)
    return path


@pytest.fixture(scope="module")
def gated(tmp_path_factory: pytest.TempPathFactory, embedding_cache: Path):
    """``run --fail-on inferior`` at margin 0.01, which the treatment is not shown to meet: its folder and
    the finished command."""
    folder = tmp_path_factory.mktemp("gate")
    done = invoke_cli(
        ["run", str(config_in(folder)), "--fail-on", "inferior", *MARGIN], folder, embedding_cache
    )
    return folder, done


def test_a_failed_gate_exits_4_after_logging_and_printing_everything(gated) -> None:
    folder, done = gated
    assert done.returncode == 4, done.stderr[-3000:]
    assert "Traceback" not in done.stderr and not error_lines(done.stderr)
    assert re.search(r"^Verdict loose: \S+ on ndcg@10, ", done.stdout, re.M), done.stdout
    tested = r"^  Non-inferiority: not shown non-inferior on ndcg@10 at margin 0\.01, p = "
    assert re.search(tested, done.stdout, re.M), done.stdout
    assert "MLflow: experiment abcompare-hr-docs, parent run" in done.stdout  # named after the collection
    assert done.stderr.splitlines()[-1] == (
        "gate --fail-on inferior failed: loose is not shown non-inferior on ndcg@10 at margin 0.01."
    )
    client = MlflowClient(tracking_uri=f"sqlite:///{folder / 'mlflow.db'}")
    (parent,) = client.search_runs(["1"], "tags.`abcompare.role` = 'comparison'")
    assert parent.info.status == "FINISHED"
    assert parent.data.metrics["_vs_control.loose.ndcg_at_10.non_inferiority"] == 0.0


def test_the_markdown_summary_says_what_the_console_says(gated, embedding_cache: Path) -> None:
    folder, done = gated
    summary = invoke_cli(["report", "--format", "markdown"], folder, embedding_cache)
    assert summary.returncode == 0, summary.stderr[-3000:]
    text = summary.stdout
    rendered = re.sub(r"\\(.)", r"\1", text)  # as GitHub shows it: a backslash escape is the character
    (verdict,) = [line for line in done.stdout.splitlines() if line.startswith("Verdict loose:")]
    assert verdict in rendered.split("\n\n")  # its own paragraph, word for word
    (tested,) = [line.strip() for line in done.stdout.splitlines() if "Non-inferiority:" in line]
    assert f"- {tested}" in rendered.splitlines()
    rows = [line for line in text.splitlines() if line.startswith("|")]
    header, rule, first, *rest = (re.split(r"(?<!\\)\|", row)[1:-1] for row in rows)
    assert all(re.fullmatch(r" ?:?-{3,}:? ?", cell) for cell in rule) and len(rule) == len(header)
    assert [cell.strip() for cell in first[:3]] == ["loose", "ndcg@10", "primary"] and len(rest) == 14
    assert first[-1].strip() == re.match(r"Verdict loose: (.+?) on ndcg@10", verdict).group(1)


@pytest.mark.parametrize("way", list(CLI_WAYS))
def test_a_gate_that_passes_exits_0_and_says_so(way: str, tmp_path: Path, embedding_cache: Path) -> None:
    """In this process and as the console script (the two ways of running a command must agree)."""
    wide = ["--set", "significance.non_inferiority_margin=0.05", "--set", "tracking.enabled=false"]
    args = ["run", str(config_in(tmp_path)), "--json", "--fail-on", "inferior", *wide]
    done = CLI_WAYS[way](args, tmp_path, embedding_cache)
    assert done.returncode == 0, done.stderr[-3000:]
    payload = json.loads(done.stdout)  # stdout stays JSON: the gate's line is on stderr
    tested = payload["verdicts"]["loose"]["non_inferiority"]
    assert tested["verdict"] == "non-inferior" and tested["margin"] == 0.05 and tested["p"] <= 0.05
    assert done.stderr.splitlines()[-1] == (
        "gate --fail-on inferior passed: every treatment is non-inferior on ndcg@10 at margin 0.05."
    )


def one_error_before_any_work(folder: Path, done: subprocess.CompletedProcess) -> str:
    assert done.returncode == 2, done.stderr[-3000:]
    assert "Traceback" not in done.stderr and "• control" not in done.stderr
    assert not (folder / "mlflow.db").exists()
    (line,) = error_lines(done.stderr)
    return line


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        (["--fail-on", "worst"], "error: --fail-on: unknown gate 'worst' (use worse, not-better, inferior)"),
        (["--fail-on", "inferior"], ": significance.non_inferiority_margin: --fail-on inferior needs the "
                                    "non-inferiority test, and no margin is configured"),
        (["--set", "significance.non_inferiority_margin=-0.01"],
         ": significance.non_inferiority_margin: Input should be greater than or equal to 0"),
    ],
)  # fmt: skip
def test_a_bad_gate_or_margin_is_one_located_error_before_any_work(
    tmp_path: Path, embedding_cache: Path, extra: list[str], says: str
) -> None:
    config = config_in(tmp_path)
    done = invoke_cli(["run", str(config), *extra], tmp_path, embedding_cache)
    line = one_error_before_any_work(tmp_path, done)
    assert says in line, line
    if not says.startswith("error:"):
        assert line.startswith(f"error: {config}"), line  # located: the config file, then the key


@pytest.mark.parametrize("way", list(CLI_WAYS))
def test_report_refuses_an_unknown_format_in_one_line(way: str, tmp_path: Path, embedding_cache) -> None:
    done = CLI_WAYS[way](["report", "--format", "pdf"], tmp_path, embedding_cache)
    assert (
        one_error_before_any_work(tmp_path, done)
        == "error: --format: unknown format 'pdf' (html or markdown)"
    )


def test_run_help_documents_the_gate_and_its_exit_code(tmp_path: Path, embedding_cache: Path) -> None:
    done = invoke_cli(["run", "--help"], tmp_path, embedding_cache, COLUMNS="200")
    text = " ".join(done.stdout.replace("│", " ").split())
    assert "--fail-on worse|not-better|inferior A CI gate: exit 4 when a treatment's primary verdict" in text
