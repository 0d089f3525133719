"""``abcompare run --fail-on`` on the answer verdict: with ``answers.gate`` the gated verdict is the answers'
(its primary metric an answer metric, here citation precision: no judge, so no model loads), by the same
rules and exit codes as the retrieval gate; without it, the retrieval verdict as before; across several
collections it is refused before any work (no answer verdict is pooled).

The shipped ``configs/answers.yaml`` with both variants answered by the extractive baseline from the same
BM25 hits: the answers are identical, every delta is 0, so the answer verdict is not ``better`` (the
``not-better`` gate fails, exit 4) and not ``worse`` (the ``worse`` gate passes, exit 0)."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.cli import invoke_cli

pytestmark = pytest.mark.slow

CONFIG = Path(__file__).resolve().parents[2] / "configs" / "answers.yaml"
GATE_FAILED_EXIT = 4  # abcompare.cli_options: ran, logged and printed, and a treatment failed the gate


def _run(tmp_path: Path, cache: Path, gate: str, *overrides: str):
    sets = [f"tracking.uri=sqlite:///{tmp_path / 'mlflow.db'}", "efficiency.repeats=0", "answers.judge=null",
            "answers.variants.smollm2.generator=extractive", "answers.max_queries=4", *overrides]  # fmt: skip
    args = ["run", str(CONFIG), "--quiet", "--fail-on", gate]
    for value in sets:
        args += ["--set", value]
    return invoke_cli(args, tmp_path, cache)


def _gate_line(stderr: str) -> str:
    (line,) = [line for line in stderr.splitlines() if line.startswith("gate --fail-on")]
    return line


def test_the_answer_verdict_is_gated_on_its_primary_answer_metric(
    tmp_path: Path, embedding_cache: Path
) -> None:
    failed = _run(tmp_path, embedding_cache, "not-better", "answers.gate=true")
    assert failed.returncode == GATE_FAILED_EXIT, failed.stderr[-2000:]
    line = _gate_line(failed.stderr)
    assert line.startswith("gate --fail-on not-better failed: smollm2 (")
    assert line.endswith(" on the answers' citation_precision.")
    passed = _run(tmp_path, embedding_cache, "worse", "answers.gate=true")
    assert passed.returncode == 0, passed.stderr[-2000:]
    assert _gate_line(passed.stderr).endswith(" on the answers' citation_precision.")


def test_without_answers_gate_the_retrieval_verdict_is_gated(tmp_path: Path, embedding_cache: Path) -> None:
    failed = _run(tmp_path, embedding_cache, "not-better")
    assert failed.returncode == GATE_FAILED_EXIT, failed.stderr[-2000:]
    assert _gate_line(failed.stderr).endswith(" on ndcg@10.")


def test_gating_answers_across_collections_is_refused_before_any_work(
    tmp_path: Path, embedding_cache: Path, datasets_dir: Path
) -> None:
    config = tmp_path / "two.yaml"
    config.write_text(
        CONFIG.read_text().replace(
            "dataset:\n  name: hr-docs\n  split: test\n  level: chunk\n",
            "datasets:\n  - {name: hr-docs, split: test, level: chunk}\n"
            f"  - {{name: cranfield, path: {datasets_dir / 'cranfield'}, level: chunk}}\n",
        )
    )
    args = ["run", str(config), "--fail-on", "worse", "--set", "answers.gate=true",
            "--set", f"tracking.uri=sqlite:///{tmp_path / 'mlflow.db'}"]  # fmt: skip
    result = invoke_cli(args, tmp_path, embedding_cache)
    assert result.returncode == 2, result.stderr[-2000:]
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert errors == [line for line in errors if f"{config}: answers.gate: --fail-on cannot gate" in line]
    assert len(errors) == 1 and not (tmp_path / "mlflow.db").exists()
