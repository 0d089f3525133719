"""The answers' traces where people look: the answers comparison logged to the session's real `mlflow server`
on 127.0.0.1 (SQLite), read back through its REST API, and one query's trace opened in MLflow 3's traces
view by headless Chromium (Debian's ``chromium``; under ``CI=true`` a missing browser fails).

Cheap on purpose: the shipped ``configs/answers.yaml`` on its first 8 queries, the extractive baseline
(control) against a handed-over generator that copies the top hit (from BM25 with a lower k1, so some
queries' top-k hits change), judged by a handed-over word-overlap
judge (no model loads). The trace view's URL is MLflow 3.17's trace detail route
(``#/experiments/<id>/traces/<trace_id>``); the page is opened with the MLflow Assistant's side panel and
the "Detect Issues" tour dismissed (their own ``localStorage`` switches: both cover the trace otherwise),
the generation span selected and its assessments pane opened, so the screenshot shows the answer, its
context and the judge's scores with their reasons. It is kept as ``test-artifacts/answers/trace.png`` at
the repository root (or under ``$ABCOMPARE_TEST_ARTIFACTS``)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from mlflow import MlflowClient
from support.browser import DevTools, artifacts_dir, chromium
from support.cli import REPO
from support.clock import Deadline, pause

from abcompare.answers import Hit, Query
from abcompare.config.loading import load_config
from abcompare.runner import run_comparison

pytestmark = [pytest.mark.server, pytest.mark.slow]

CONFIG = REPO / "configs" / "answers.yaml"
#: The query whose trace is opened (the shipped example's first).
QUERY = "qa-001"
#: MLflow UI switches kept in the browser's localStorage: the assistant's panel closed, the tour seen.
QUIET_UI = {"mlflow.assistant.panelOpen_v1": "false", "mlflow.detectIssues.guidanceShown_v1": "true",
            "mlflow.assistant.fab.autoOpenedOnFirstLoad_v1": "true"}  # fmt: skip


#: The trace view's assessments pane, and the button that unfolds one assessment's reason.
PANE = "[data-testid=assessments-pane]"
EXPAND = '[data-component-id="shared.model-trace-explorer.toggle-assessment-expanded"]'


def first_hit(query: Query, hits: list[Hit]) -> tuple[str, list[str]]:
    """The top hit's first 80 characters, citing it."""
    return hits[0].text[:80] + ".", [hits[0].id]


def _terms(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]{3,}", text.lower()))


def overlap(first: str, second: str) -> int:
    """A stand-in judge: the grade is the number of shared words of three letters or more, at most 3."""
    return min(3, len(_terms(first) & _terms(second)))


@pytest.fixture(scope="module")
def traced(tracking_server: str, embedding_cache: Path):
    """The answers comparison logged to the session's server: (server URL, the result). Chromium is looked
    for first: without it nothing runs."""
    chromium()
    config = load_config(
        CONFIG,
        [f"tracking.uri={tracking_server}", "tracking.experiment=abcompare-answers-ui",
         "efficiency.repeats=0", f"cache_dir={embedding_cache}",
         "answers.judge={provider: python, name: overlap}",
         "answers.variants.smollm2.generator=python:first_hit", "treatments.smollm2.retrievers.bm25.k1=0.6",
         "answers.max_queries=8"],
    )  # fmt: skip
    result = run_comparison(config, generators={"first_hit": first_hit}, judges={"overlap": overlap})
    return tracking_server, result


def _trace_of(client: MlflowClient, result, variant: str, query_id: str):
    run = client.get_run(result.parent_run_id)
    found = client.search_traces(locations=[run.info.experiment_id], run_id=result.parent_run_id)
    assert len(found) == 16  # 8 queries x 2 variants, every one under the comparison's run
    (trace,) = [t for t in found if t.info.tags["abcompare.variant"] == variant
                and t.info.tags["abcompare.query_id"] == query_id]  # fmt: skip
    return run.info.experiment_id, client.get_trace(trace.info.trace_id)


def test_the_server_holds_the_trace_with_its_spans_and_assessments(traced) -> None:
    url, result = traced
    _, trace = _trace_of(MlflowClient(url), result, "smollm2", QUERY)
    spans = {s.name: s for s in trace.data.spans}
    assert set(spans) == {"answer · smollm2", "retrieval", "generation"}
    hits = result.answers.answers["smollm2"].hits[QUERY]
    assert [d["id"] for d in spans["retrieval"].outputs] == [h.id for h in hits]
    copied = hits[0].text[:80].strip() + "."
    assert spans["generation"].outputs == {"answer": copied, "cited_ids": [hits[0].id]}
    feedback = {a.name: a for a in trace.info.assessments}
    assert set(feedback) == {"faithfulness", "answer_relevance", "citation_precision", "citation_recall"}
    # the answer is one statement copied from the top hit: every word is in the context, so the overlap
    # judge grades it 3 (supported) and faithfulness is 1 of 1
    assert feedback["faithfulness"].value == 1.0
    assert feedback["faithfulness"].span_id == spans["generation"].span_id
    assert feedback["faithfulness"].source.source_id == "python:overlap"
    question = result.answers.question[QUERY]
    assert feedback["answer_relevance"].value == overlap(question, spans["generation"].outputs["answer"])
    relevant = result.answers.relevant[QUERY]
    assert feedback["citation_precision"].value == (1.0 if hits[0].id in relevant else 0.0)


def _quiet(page: DevTools, url: str) -> None:
    """Open the UI once and set its switches, so the next page opens without the panels that cover it."""
    page.open(f"{url}/", until="mlflow")
    page.evaluate(f"Object.entries({json.dumps(QUIET_UI)}).forEach(([k, v]) => localStorage.setItem(k, v))")


def _click(page: DevTools, text: str, selector: str = "*") -> bool:
    """Click the innermost element matching ``selector`` whose own text starts with ``text``."""
    script = f"""(() => {{
      const own = (e) => [...e.childNodes].filter(n => n.nodeType === 3).map(n => n.textContent).join('')
        .trim();
      const e = [...document.querySelectorAll({json.dumps(selector)})]
        .find(e => own(e).startsWith({json.dumps(text)}));
      if (!e) return false;
      (e.closest('button,[role=button],[role=treeitem]') || e).click();
      return true; }})()"""
    return bool(page.evaluate(script))


def _shows(page: DevTools, text: str) -> bool:
    return bool(page.evaluate(f"document.body.innerText.includes({json.dumps(text)})"))


def _settled(page: DevTools, texts: list[str], timeout: float = 60) -> None:
    """Wait until the page's visible text holds every one of ``texts``."""
    deadline = Deadline(timeout)  # a hang guard, not a speed check
    while not all(_shows(page, t) for t in texts):
        if deadline.passed():
            raise AssertionError(f"never shown: {[t for t in texts if not _shows(page, t)]}")
        pause(0.5)


def test_the_traces_view_shows_one_querys_answer_context_and_assessments(traced) -> None:
    url, result = traced
    experiment_id, trace = _trace_of(MlflowClient(url), result, "smollm2", QUERY)
    answer = result.answers.answers["smollm2"].answer(QUERY)[0]
    shown = max(answer.splitlines(), key=len)[:30]  # a line of it as the page renders it (Markdown)
    page = DevTools(1600, 1100)
    try:
        _quiet(page, url)
        trace_view = f"{url}/#/experiments/{experiment_id}/traces/{trace.info.trace_id}"
        page.open(trace_view, until="answer · smollm2")
        _settled(page, ["retrieval", "generation", shown])
        assert _click(page, "generation"), "the generation span is not in the span tree"
        _settled(page, ["context", "cited_ids"])
        if not page.evaluate(f"!!document.querySelector({json.dumps(PANE)})"):
            assert _click(page, "Assess"), "no Assess button"  # the assessments pane, closed: open it
        _settled(page, ["Feedback (2)", "faithfulness", "answer_relevance"])
        page.evaluate(f"document.querySelectorAll({json.dumps(PANE + ' ' + EXPAND)}).forEach(b => b.click())")
        _settled(page, ["supported (grade 3)", "python:overlap"])  # the reasons, and who judged
        pause(1)  # let the pane's animation end before the picture
        page.screenshot(artifacts_dir("answers") / "trace.png")
        text = page.evaluate("document.body.innerText")
    except AssertionError:
        page.screenshot(artifacts_dir("answers") / "trace-failed.png")  # what the page showed instead
        raise
    finally:
        page.close()
    assert "MLflow Assistant" not in text  # the side panel is closed, not covering the trace
    question = result.answers.question[QUERY]
    assert question in text and shown in text


def test_report_html_and_the_notebook_show_the_largest_answer_changes(
    traced, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The parent run's ``report.html`` (kept as ``test-artifacts/answers/report.png``) and the analysis
    notebook, run against the server, both show the answer wins and losses the result holds."""
    from runner.e2e_support import execute_notebook  # tests/runner: the notebook run as Jupyter runs it

    url, result = traced
    changes = result.answers.changes()
    assert changes, "no answer changed: the test needs a win or a loss"
    first = changes[0]
    local = Path(MlflowClient(url).download_artifacts(result.parent_run_id, "report.html", str(tmp_path)))
    page = DevTools(1300, 2400)
    try:
        page.open(local.as_uri(), until="Answers: the largest wins and losses")
        page.evaluate("document.querySelector('h2:nth-of-type(1)') && [...document.querySelectorAll('h2')]"
                      ".find(h => h.textContent.startsWith('Answers')).scrollIntoView()")  # fmt: skip
        page.screenshot(artifacts_dir("answers") / "report.png")
        text = " ".join(page.evaluate("document.body.innerText").split())
    finally:
        page.close()
    section = text.split("Answers: the largest wins and losses", 1)[1]
    for said in (first["question"], first["control_answer"], first["treatment_answer"]):
        assert " ".join(said.split())[:60] in section
    monkeypatch.setenv("MLFLOW_TRACKING_URI", url)
    monkeypatch.setenv("ABCOMPARE_RUN_ID", result.parent_run_id)
    stdout, _, tables = execute_notebook(tmp_path)
    assert "largest answer wins" in stdout and "largest answer losses" in stdout
    attribution = [line for line in result.answers.lines() if " by retrieval: " in line]
    assert attribution and attribution[0] in stdout
    assert first["query_id"] in tables
