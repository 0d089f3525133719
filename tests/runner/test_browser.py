"""The comparison where people look, in a real browser: two runs of the main job logged to a real
`mlflow server` on 127.0.0.1, its pages rendered by headless Chromium (Debian's ``chromium``; ``.ci/run``
installs it when missing), and the rendered DOM checked for what the UI must show.

The screenshots are kept as test artifacts in ``test-artifacts/browser/`` at the repository root (or in
``$ABCOMPARE_TEST_ARTIFACTS/browser``): ``runs.png`` (the experiment's runs in the classic view with the
headline columns), ``parent.png`` (the parent run's page: verdict first), ``compare.png`` (control vs
treatment) and ``report.png`` (the parent's ``report.html``).
"""

from __future__ import annotations

import json
import os
import time
import urllib.parse
from pathlib import Path

import pytest
from mlflow import MlflowClient
from support.browser import DevTools, chromium, render
from support.cli import REPO, run_cli
from support.servers import start_mlflow_server

from abcompare.tracking.layout import vs_control_key

pytestmark = [pytest.mark.server, pytest.mark.slow]


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


def test_the_runs_view_opens_classic_with_distinct_names_and_headline_columns(two_runs) -> None:
    url, payloads = two_runs
    client = MlflowClient(tracking_uri=url)
    parents = [client.get_run(p["parent_run_id"]) for p in payloads]
    names = [p.info.run_name for p in parents]
    assert names[0] != names[1] and all(n.startswith("rrf-vs-dbsf 20") for n in names)
    experiment = parents[0].info.experiment_id
    view = f"{url}/#/experiments/{experiment}/runs?workflowType=machine_learning&viewStateShareKey=abcompare"
    dom = render(view, artifacts_dir() / "runs.png", size="2400,900")
    for name in names:
        assert name in dom
    assert "abcompare.verdict" in dom and vs_control_key("ndcg@10", "delta") in dom  # the headline columns
    assert "Evaluation runs" not in dom  # not MLflow's GenAI screen


def test_the_parent_run_page_opens_with_the_verdict_and_its_detectable_effect(two_runs) -> None:
    url, payloads = two_runs
    payload = payloads[-1]
    client = MlflowClient(tracking_uri=url)
    parent = client.get_run(payload["parent_run_id"])
    page = f"{url}/#/experiments/{parent.info.experiment_id}/runs/{parent.info.run_id}"
    page += "?workflowType=machine_learning"
    dom = render(page, artifacts_dir() / "parent.png", size="1600,1400")
    sentence = payload["verdicts"]["dbsf"]["sentence"]
    assert sentence.split(";")[0] in dom  # "Verdict dbsf: no significant difference on ndcg@10, ..."
    assert "this query set detects differences of about" in dom
    description = dom.index("Verdict dbsf")
    assert description < dom.index("| treatment | metric")  # the verdict first, then the table


#: Where the compare view's metrics table is (the grid of metric names, found once: scrolled, its first rows
#: leave the DOM), as the point to turn the mouse wheel over, and how tall its content is.
METRICS_GRID = """(() => {
  if (!window.abcompareMetricsGrid) {  // the names' grid, or the values' beside it when it is the scroller
    const grids = [...document.querySelectorAll('.ReactVirtualized__Grid')];
    const names = grids.find(g => g.innerText.includes('efficiency.'));
    const section = grids.filter(g => g.scrollHeight === names.scrollHeight);
    window.abcompareMetricsGrid = section.find(g => getComputedStyle(g).overflowY !== 'hidden') || names;
  }
  const grid = window.abcompareMetricsGrid;
  grid.scrollIntoView({block: 'center'});
  const box = grid.getBoundingClientRect();
  return [box.x + box.width / 2, box.y + box.height / 2, grid.scrollHeight]; })()"""


#: The texts in the row of the metrics table whose name cell reads ``name``: the name's grid and the values'
#: grid beside it place a row's cells at the same ``top``.
ROW_OF = """((name) => {
  const grid = window.abcompareMetricsGrid;
  const grids = [...document.querySelectorAll('.ReactVirtualized__Grid')]
    .filter(g => g.scrollHeight === grid.scrollHeight);
  const cell = grids.flatMap(g => [...g.querySelectorAll('[style*="top"]')])
    .find(c => c.innerText.trim() === name);
  if (!cell) return null;
  const top = cell.style.top;
  return grids.flatMap(g => [...g.querySelectorAll('[style*="top"]')])
    .filter(c => c.style.top === top && c.parentElement.closest('.ReactVirtualized__Grid') !== null)
    .map(c => c.innerText.trim()); })"""


def test_the_compare_view_shows_delta_and_adjusted_p_beside_the_means(two_runs) -> None:
    url, payloads = two_runs
    payload = payloads[-1]
    runs = [payload["variant_run_ids"]["control"], payload["variant_run_ids"]["dbsf"]]
    experiment = MlflowClient(tracking_uri=url).get_run(runs[0]).info.experiment_id
    query = urllib.parse.quote(json.dumps(runs), safe="")
    page = (
        f"{url}/#/compare-runs?runs={query}&experiments={urllib.parse.quote(json.dumps([experiment]))}"
        "&workflowType=machine_learning"
    )
    browser = DevTools(1600, 2400)
    try:
        browser.open(page, until="efficiency.seconds_per_query")
        browser.wait_for("metric_distribution.svg")  # the per-variant figure, listed to compare side by side
        # MLflow renders only the rows of its metrics table in view: scroll it to the comparison's rows
        fields = ("delta", "p_adjusted", "ci_low", "ci_high", "verdict", "primary")
        wanted = {vs_control_key("ndcg@10", field) for field in fields}
        x, y, height = browser.evaluate(METRICS_GRID)
        top, seen, rows = 0, set(), {}
        while not wanted <= seen and top < height:
            # the mouse wheel, as a person scrolls: MLflow then scrolls the names and the values together
            top += 150
            browser.call("Input.dispatchMouseEvent", type="mouseWheel", x=x, y=y, deltaX=0, deltaY=150)
            time.sleep(0.2)  # let React render the rows now in view (the loop ends on what is seen)
            html = browser.html()
            for key in wanted - seen:
                if key in html:
                    seen.add(key)
                    rows[key] = browser.evaluate(f"{ROW_OF}({json.dumps(key)})")
            if vs_control_key("ndcg@10", "delta") in html:
                browser.screenshot(artifacts_dir() / "compare.png")
    finally:
        browser.close()
    assert seen == wanted
    # each name sits in one row with its values: control has none (NaN), the treatment its comparison
    comparison = next(r for r in payload["comparison"] if r["metric"] == "ndcg@10")
    for field in ("delta", "p_adjusted", "ci_low", "ci_high"):
        row = rows[vs_control_key("ndcg@10", field)]
        assert row is not None and row[1] == "NaN", row
        shown = float(f"{comparison[field]:.4g}")  # as logged; the UI shows three decimals (or e-notation)
        tolerance = {"rel": 1e-3} if abs(shown) < 1e-3 else {"abs": 5e-4}
        assert float(row[2]) == pytest.approx(shown, **tolerance), (field, row)


def test_report_html_renders_self_contained(two_runs, tmp_path: Path) -> None:
    url, payloads = two_runs
    client = MlflowClient(tracking_uri=url)
    local = Path(client.download_artifacts(payloads[-1]["parent_run_id"], "report.html", str(tmp_path)))
    html = local.read_text()
    assert "<script" not in html and "http://" not in html.replace("http://www.w3.org/2000/svg", "")
    dom = render(local.as_uri(), artifacts_dir() / "report.png", size="1300,2600")
    assert payloads[-1]["verdicts"]["dbsf"]["sentence"] in dom
    assert "Largest wins" in dom and "✓" in dom
