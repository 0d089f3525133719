"""The comparison where people look, in a real browser: two runs of the main job logged to a real
`mlflow server` on 127.0.0.1, its pages rendered by headless Chromium (Debian's ``chromium``; ``.ci/run``
installs it when missing), and the rendered DOM checked for what the UI must show.

Each page is looked at as a person first sees it: a 1600 x 1100 viewport, unscrolled, and the check is what
the screen paints side by side (``DevTools.painted_row``: the browser's own hit test along a line), not
where the DOM places cells. The screenshots are kept as test artifacts in ``test-artifacts/browser/`` at
the repository root (or in ``$ABCOMPARE_TEST_ARTIFACTS/browser``): ``runs.png`` (the experiment's runs in
the classic view with the headline columns), ``parent.png`` (the parent run's page: verdict first, then
the primary comparison's metrics), ``compare.png`` (control vs treatment, first screen: the primary
metric plotted), ``compare-metrics.png`` (its metrics box, scrolled to with the page's wheel: the primary
comparison's rows first) and ``report.png`` (the parent's ``report.html``).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from mlflow import MlflowClient
from support.browser import DevTools, chromium, render
from support.cli import REPO, run_cli
from support.servers import start_mlflow_server

from abcompare.tracking.layout import compare_url, comparison_key, run_url, view_url, vs_control_key

pytestmark = [pytest.mark.server, pytest.mark.slow]

#: The screen a person looks at (CSS pixels).
SCREEN = (1600, 1100)


def artifacts_dir() -> Path:
    root = Path(os.environ.get("ABCOMPARE_TEST_ARTIFACTS") or REPO / "test-artifacts")
    folder = root / "browser"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory: pytest.TempPathFactory, embedding_cache: Path):
    """One `mlflow server` for the module; the main job logged to it twice (small B: the UI is under test).
    Chromium is looked for first: without it no server starts and no main job runs."""
    chromium()
    folder = tmp_path_factory.mktemp("browser")
    server = start_mlflow_server(folder / "server")
    payloads = []
    try:
        for _ in range(2):
            args = [
                "run", str(REPO / "configs" / "rrf_vs_dbsf.yaml"), "--json",
                "--set", f"tracking.uri={server.url}", "--set", "significance.n_resamples=1000",
            ]  # fmt: skip
            result = run_cli(args, folder, embedding_cache)
            assert result.returncode == 0, result.stderr[-3000:]
            payloads.append(json.loads(result.stdout))
        yield server.url, payloads
    finally:
        server.stop()


def shown(value: float) -> float:
    """A figure as logged (four significant digits, as the README says)."""
    return float(f"{value:.4g}")


def painted_number(text: str) -> float:
    """A number as MLflow paints it (``-6.633e-4``, ``0.944``)."""
    return float(text.replace("−", "-"))


def first_screen(page: str, until: str, screenshot: Path) -> DevTools:
    """A browser showing ``page`` unscrolled on :data:`SCREEN`, once ``until`` is in its text."""
    browser = DevTools(*SCREEN)
    try:
        browser.open(page, until=until)
        time.sleep(2)  # let the page finish laying out what it rendered (the checks read what is painted)
        browser.screenshot(screenshot)
    except BaseException:
        browser.close()  # a page that never shows ``until`` leaves no browser behind
        raise
    return browser


def test_the_runs_view_opens_classic_with_the_primary_delta_on_the_first_screen(two_runs) -> None:
    url, payloads = two_runs
    client = MlflowClient(tracking_uri=url)
    parents = [client.get_run(p["parent_run_id"]) for p in payloads]
    names = [p.info.run_name for p in parents]
    assert names[0] != names[1] and all(n.startswith("rrf-vs-dbsf 20") for n in names)
    experiment = parents[0].info.experiment_id
    page = view_url(url, experiment)
    assert page.endswith("?viewStateShareKey=abcompare&workflowType=machine_learning")
    key = comparison_key("dbsf", "ndcg@10", "delta")
    browser = first_screen(page, key, artifacts_dir() / "runs.png")
    try:
        header, newest = browser.painted_row(key), browser.painted_row(names[-1])
        dom = browser.html()
    finally:
        browser.close()
    assert "Evaluation runs" not in dom  # not MLflow's GenAI screen
    assert header is not None and header["texts"][0] == key  # the column's whole name, on screen
    assert newest is not None, "the newest comparison's row is not on the first screen"
    delta = next(r["delta"] for r in payloads[-1]["comparison"] if r["role"] == "primary")
    figures = [t for t in newest["texts"] if t.lstrip("-").replace(".", "").replace("e", "").isdigit()]
    assert figures and painted_number(figures[0]) == pytest.approx(shown(delta), rel=1e-3), newest


def test_the_parent_run_page_opens_with_the_whole_verdict_and_the_primary_delta(two_runs) -> None:
    url, payloads = two_runs
    payload = payloads[-1]
    parent = MlflowClient(tracking_uri=url).get_run(payload["parent_run_id"])
    page = run_url(url, parent.info.experiment_id, parent.info.run_id)
    assert page.endswith("?workflowType=machine_learning")
    key = comparison_key("dbsf", "ndcg@10", "delta")
    browser = first_screen(page, key, artifacts_dir() / "parent.png")
    try:
        verdict = browser.evaluate(VERDICT_LINES)
        row = browser.painted_row(key)
        tables = browser.evaluate("[...document.querySelectorAll('table')].map(t => t.innerText)")
    finally:
        browser.close()
    sentence = payload["verdicts"]["dbsf"]["sentence"]
    assert verdict is not None and verdict["text"] == sentence.split(";")[0]  # the verdict itself, bold
    assert verdict["clipped"] == [], verdict  # every line of it painted up to its end, above the fade
    assert " ".join(sentence.split()) in " ".join(verdict["paragraph"].split())  # and the rest after it
    assert any(t.startswith("treatment\tmetric\trole") for t in tables)  # the compact table is a table
    delta = next(r["delta"] for r in payload["comparison"] if r["role"] == "primary")
    assert row is not None and row["texts"][0] == key, row  # the metrics list starts on the first screen
    assert painted_number(row["texts"][1]) == pytest.approx(shown(delta), rel=1e-3), row  # beside its name


#: The description's bold verdict: its text, and the lines whose last character is not what the screen
#: paints there (hidden behind something, or cut off at the edge of the viewport).
VERDICT_LINES = """(() => {
  const bold = [...document.querySelectorAll('strong, b')].find(e => e.innerText.startsWith('Verdict'));
  if (!bold) return null;
  const clipped = [...bold.getClientRects()].filter(r => {
    const hit = document.elementFromPoint(r.right - 3, r.top + r.height / 2);
    return r.right > window.innerWidth || !(hit === bold || bold.contains(hit));
  }).map(r => [r.left, r.right, r.top]);
  return {text: bold.innerText.trim(), clipped: clipped, paragraph: bold.parentElement.innerText}; })()"""


def test_the_compare_view_plots_the_primary_metric_and_lists_its_comparison_first(two_runs) -> None:
    """The compare view as a person reaches it (both variant runs selected): its first screen plots the
    primary metric; turning the page's wheel brings the metrics box into view, and without scrolling the
    box itself its first rows are the primary comparison, each name painted beside its own values."""
    url, payloads = two_runs
    payload = payloads[-1]
    runs = [payload["variant_run_ids"]["control"], payload["variant_run_ids"]["dbsf"]]
    experiment = MlflowClient(tracking_uri=url).get_run(runs[0]).info.experiment_id
    page = compare_url(url, experiment, runs)
    assert page.endswith("&workflowType=machine_learning")
    browser = first_screen(page, vs_control_key("ndcg@10", "ci_high"), artifacts_dir() / "compare.png")
    try:
        axis = browser.painted_row("ndcg_at_10")  # the parallel-coordinates plot's metric axis
        key, turns = vs_control_key("ndcg@10", "delta"), 0
        while (browser.painted_row(key) or {"y": SCREEN[1]})["y"] > SCREEN[1] - 200 and turns < 40:
            browser.call("Input.dispatchMouseEvent", type="mouseWheel", x=700, y=300, deltaX=0, deltaY=300)
            time.sleep(0.3)
            turns += 1
        time.sleep(1)
        browser.screenshot(artifacts_dir() / "compare-metrics.png")
        fields = ("ci_high", "ci_low", "delta", "p_adjusted", "p_raw", "verdict")  # MLflow's order: sorted
        rows = {field: browser.painted_row(vs_control_key("ndcg@10", field)) for field in fields}
        heading = browser.painted_row("Metrics")
        assert heading is not None and rows["ci_high"] is not None, (heading, rows)
        first = browser.evaluate(f"({FIRST_METRIC})({rows['ci_high']['x'] + 5}, {heading['y'] + 10})")
    finally:
        browser.close()
    assert axis is not None, "the first screen does not plot the primary metric"
    # the box opens on the primary's rows (the parts of its delta, ``.attr.*``, sort before ``.ci_high``)
    assert first is not None and first.startswith(vs_control_key("ndcg@10", "")), first
    assert [rows[f]["y"] for f in fields] == sorted(rows[f]["y"] for f in fields)  # one below the other
    primary = next(r for r in payload["comparison"] if r["role"] == "primary")
    logged = {"ci_high": primary["ci_high"], "ci_low": primary["ci_low"], "delta": primary["delta"],
              "p_adjusted": primary["p_adjusted"]}  # fmt: skip
    for field, value in logged.items():
        row = rows[field]
        assert row is not None and row["texts"][:2] == [vs_control_key("ndcg@10", field), "NaN"], row
        # the UI paints three decimals, or e-notation with four digits: the logged figure, rounded so
        tolerance = {"rel": 1e-3} if abs(shown(value)) < 1e-3 else {"abs": 5e-4}
        assert painted_number(row["texts"][2]) == pytest.approx(shown(value), **tolerance), (field, row)


#: The first metric name painted below the compare view's "Metrics" heading, down the names' column at
#: ``x`` (the browser's hit test, every 4 px from ``top``).
FIRST_METRIC = """((x, top) => {
  for (let y = top; y < window.innerHeight; y += 4) {
    const hit = document.elementFromPoint(x, y);
    const text = hit ? (hit.innerText || '').trim() : '';
    if (/^[a-z_][a-z0-9_.]*$/.test(text) && text.includes('_')) return text;
  }
  return null; })"""


def test_report_html_renders_self_contained(two_runs, tmp_path: Path) -> None:
    url, payloads = two_runs
    client = MlflowClient(tracking_uri=url)
    local = Path(client.download_artifacts(payloads[-1]["parent_run_id"], "report.html", str(tmp_path)))
    html = local.read_text()
    assert "<script" not in html and "http://" not in html.replace("http://www.w3.org/2000/svg", "")
    dom = render(local.as_uri(), artifacts_dir() / "report.png", size="1300,2600")
    assert payloads[-1]["verdicts"]["dbsf"]["sentence"] in dom
    assert "Largest wins" in dom and "✓" in dom
