"""The comparison where people look, in a real browser: the main job logged to a real `mlflow server` on
127.0.0.1, its pages rendered by headless Chromium (Debian's ``chromium``; ``.ci/run`` installs it when
missing), and what the screen paints checked for what the UI must show.

Each page is looked at as a person first sees it: a 1600 x 1100 viewport, unscrolled, and the check is what
the screen paints side by side (``DevTools.painted_row``: the browser's own hit test along a line), not
where the DOM places cells. One server (the session's), one browser and one logged comparison serve every
page (a second comparison of the main job is logged too, so the runs view has a newest row to put on top).
The screenshots are kept as test artifacts in ``test-artifacts/browser/`` at the repository root (or in
``$ABCOMPARE_TEST_ARTIFACTS/browser``): ``runs.png`` (the experiment's runs in the classic view with the
headline columns), ``parent.png`` (the parent run's page: verdict first, then the primary comparison's
metrics), ``compare.png`` (control vs treatment, first screen: the changed setting and the primary metric's
two means plotted, the treatment's run named with its primary delta, interval and adjusted p),
``compare-metrics.png`` (its metrics box, scrolled to with the page's wheel: the primary comparison's rows
first), ``compare-layout.json`` (where MLflow lays out the compare
view's sections, unscrolled) and ``report.png`` (the parent's ``report.html``).

MLflow 3.17's compare view cannot show its metrics box on the first screen, whatever a run logs: above it
are the Visualizations section (its plot is at least 450 px high), the five rows of Run details and the
Parameters section (at most 500 px, and with no parameter at all still its switch and a line), so the box's
heading starts at 1,118 px even for two runs with no parameters (measured with this test's browser). What
the first screen paints of a run is its name: a compared treatment's run is named with its primary
comparison, and that is what the compare view's first screen is checked for.
``compare-layout.json`` records the layout of the comparison logged here.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mlflow import MlflowClient
from support.browser import DevTools, artifacts_dir, chromium
from support.cli import run_cli
from support.clock import Deadline, pause
from support.configs import TWO_COLLECTIONS

from abcompare.tracking.layout import (
    compare_url,
    comparison_key,
    metric_key,
    pooled_key,
    run_url,
    view_url,
    vs_control_key,
)

pytestmark = [pytest.mark.server, pytest.mark.slow]

#: The screen a person looks at (CSS pixels).
SCREEN = (1600, 1100)


@pytest.fixture(scope="module")
def two_runs(comparison):
    """The main job logged twice to the session's `mlflow server` (``comparison(..., store="server")``),
    oldest first: the run the tracking-server and determinism tests also read, and one with a small B
    (the UI is under test). Neither runs the latency timing pass (no page is checked for a cost). The
    older comparison is there to be the runs view's second row; every page shows the newest. Chromium is
    looked for first: without it no server starts and no main job runs."""
    chromium()
    runs = [comparison("rrf_vs_dbsf", store="server"),
            comparison("rrf_vs_dbsf", "significance.n_resamples=1000", store="server")]  # fmt: skip
    url = runs[0].tracking_uri
    client = MlflowClient(tracking_uri=url)
    payloads = sorted(
        (run.payload for run in runs), key=lambda p: client.get_run(p["parent_run_id"]).info.start_time
    )
    return url, payloads


#: A comparison across two collections, small enough for the UI test (BM25 with a lower k1).
COLLECTIONS_CONFIG = (
    "name: two-collections\ndescription: BM25 with a lower k1, on two collections\n"
    + TWO_COLLECTIONS
    + "tracking: {{uri: {uri}}}\n"
)


@pytest.fixture(scope="module")
def collections_run(two_runs, datasets_dir: Path, tmp_path_factory: pytest.TempPathFactory, embedding_cache):
    """The comparison across hr-docs and Cranfield, logged to the module's server: its ``--json``."""
    url, _ = two_runs
    folder = tmp_path_factory.mktemp("collections")
    config = folder / "c.yaml"
    config.write_text(COLLECTIONS_CONFIG.format(cranfield=datasets_dir / "cranfield", uri=url))
    result = run_cli(["run", str(config), "--json"], folder, embedding_cache)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout)


@pytest.fixture(scope="module")
def browser():
    """One headless Chromium page on :data:`SCREEN` for the module's pages, as one person's browser."""
    page = DevTools(*SCREEN)
    try:
        yield page
    finally:
        page.close()


def shown(value: float) -> float:
    """A figure as logged (four significant digits, as the README says)."""
    return float(f"{value:.4g}")


def painted_number(text: str) -> float:
    """A number as MLflow paints it (``-6.633e-4``, ``0.944``)."""
    return float(text.replace("−", "-"))


def first_screen(
    browser: DevTools, page: str, until: str, names: list[str], screenshot: Path
) -> dict[str, dict | None]:
    """``page`` opened afresh and unscrolled on :data:`SCREEN` once ``until`` is in its text: what is painted
    on the lines of ``names`` once they stand still (``DevTools.painted_rows``), and its screenshot then."""
    browser.open("about:blank", until="")  # nothing of the previous page stays (MLflow's routes are hashes)
    browser.open(page, until=until)
    rows = browser.painted_rows(names)
    browser.screenshot(screenshot)
    return rows


def test_the_runs_view_opens_classic_with_the_primary_delta_on_the_first_screen(two_runs, browser) -> None:
    url, payloads = two_runs
    client = MlflowClient(tracking_uri=url)
    parents = [client.get_run(p["parent_run_id"]) for p in payloads]
    names = [p.info.run_name for p in parents]
    assert names[0] != names[1] and all(n.startswith("rrf-vs-dbsf 20") for n in names)
    experiment = parents[0].info.experiment_id
    page = view_url(url, experiment)
    assert page.endswith("?viewStateShareKey=abcompare&workflowType=machine_learning")
    key = comparison_key("dbsf", "ndcg@10", "delta")
    rows = first_screen(browser, page, key, [key, *names], artifacts_dir("browser") / "runs.png")
    assert "Evaluation runs" not in browser.html()  # not MLflow's GenAI screen
    header, older, newest = rows[key], rows[names[0]], rows[names[1]]
    assert header is not None and header["texts"][0] == key  # the column's whole name, on screen
    assert newest is not None, "the newest comparison's row is not on the first screen"
    assert older is not None and older["y"] > newest["y"], (older, newest)  # the newest comparison on top
    delta = next(r["delta"] for r in payloads[-1]["comparison"] if r["role"] == "primary")
    figures = [t for t in newest["texts"] if t.lstrip("-").replace(".", "").replace("e", "").isdigit()]
    assert figures and painted_number(figures[0]) == pytest.approx(shown(delta), rel=1e-3), newest


def test_the_parent_run_page_opens_with_the_whole_verdict_and_the_primary_delta(two_runs, browser) -> None:
    url, payloads = two_runs
    payload = payloads[-1]
    parent = MlflowClient(tracking_uri=url).get_run(payload["parent_run_id"])
    page = run_url(url, parent.info.experiment_id, parent.info.run_id)
    assert page.endswith("?workflowType=machine_learning")
    key = comparison_key("dbsf", "ndcg@10", "delta")
    row = first_screen(browser, page, key, [key], artifacts_dir("browser") / "parent.png")[key]
    verdict = browser.evaluate(VERDICT_LINES)
    tables = browser.evaluate("[...document.querySelectorAll('table')].map(t => t.innerText)")
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


def test_the_compare_view_names_the_primary_comparison_on_its_first_screen(two_runs, browser) -> None:
    """The compare view as a person reaches it (both variant runs selected). Its first screen names the two
    runs, the treatment's name painted whole with its primary delta, interval and adjusted p beside the
    metric's name, and plots the setting the treatment changes against the primary metric, both means
    painted at the ends of that metric's axis. Its metrics box is below MLflow's fixed sections
    (``compare-layout.json``), at most one screen further down; turning the page's wheel brings it into
    view, and without scrolling the box itself its first rows are the primary comparison, each name
    painted beside its own values."""
    url, payloads = two_runs
    payload = payloads[-1]
    runs = [payload["variant_run_ids"]["control"], payload["variant_run_ids"]["dbsf"]]
    experiment = MlflowClient(tracking_uri=url).get_run(runs[0]).info.experiment_id
    page = compare_url(url, experiment, runs)
    assert page.endswith("&workflowType=machine_learning")
    primary, delta_key = metric_key("ndcg@10"), vs_control_key("ndcg@10", "delta")
    browser.open("about:blank", until="")
    browser.open(page, until=delta_key)
    plot = settled_plot(browser, primary)
    runs_named = browser.painted_rows(["Run Name:"])["Run Name:"]
    treatment_name = MlflowClient(tracking_uri=url).get_run(runs[1]).info.run_name
    cut_off = browser.cut_off(treatment_name)
    browser.screenshot(artifacts_dir("browser") / "compare.png")
    sections = ("Visualizations", "Run details", "Parameters", "Metrics", delta_key)
    layout = {name: browser.box(name) for name in sections}
    key, turns = delta_key, 0
    while (browser.painted_row(key) or {"y": SCREEN[1]})["y"] > SCREEN[1] - 200 and turns < 40:
        browser.call("Input.dispatchMouseEvent", type="mouseWheel", x=700, y=300, deltaX=0, deltaY=300)
        pause(0.3)
        turns += 1
    record = {"screen": SCREEN, "unscrolled": layout, "wheel_turns_of_300px_to_the_delta": turns}
    (artifacts_dir("browser") / "compare-layout.json").write_text(json.dumps(record, indent=2))
    fields = ("ci_high", "ci_low", "delta", "p_adjusted", "p_raw", "verdict")  # MLflow's order: sorted
    rows = browser.painted_rows([vs_control_key("ndcg@10", field) for field in fields] + ["Metrics"])
    browser.screenshot(artifacts_dir("browser") / "compare-metrics.png")
    rows = {field: rows[vs_control_key("ndcg@10", field)] for field in fields} | {"heading": rows["Metrics"]}
    assert rows["heading"] is not None and rows["ci_high"] is not None, rows
    first = browser.evaluate(f"({FIRST_METRIC})({rows['ci_high']['x'] + 5}, {rows['heading']['y'] + 10})")

    # the treatment's name is its primary comparison: delta, interval and adjusted p beside the metric's
    # name, painted whole (MLflow's cell cuts a long name with an ellipsis) on the first screen
    primary_row = next(r for r in payload["comparison"] if r["role"] == "primary")
    said = (
        f"ndcg@10 {primary_row['delta']:+.3f} [{primary_row['ci_low']:.3f}, {primary_row['ci_high']:.3f}], "
        f"p = {primary_row['p_adjusted']:.3f}"
    )  # three decimals, as the console says it (the example's adjusted p is above 0.001)
    assert runs_named is not None and runs_named["texts"][:2] == ["Run Name:", "control"], runs_named
    assert len(runs_named["texts"]) == 3, runs_named
    assert runs_named["texts"][2].startswith(f"dbsf · {said} · "), runs_named
    assert runs_named["y"] < SCREEN[1] and cut_off is None, (runs_named, cut_off)
    means = {name: payload["means"][name]["ndcg@10"] for name in ("control", "dbsf")}
    painted = {t["text"]: t for t in plot if t["painted"]}
    assert {"fusion.method", "rrf", "dbsf", primary} <= set(painted), plot  # the changed setting, the metric
    ends = [painted.get(f"{means[name]:.5f}") for name in ("control", "dbsf")]  # MLflow's axis: 5 decimals
    assert None not in ends, (means, plot)  # both means painted on the first screen
    assert all(abs(end["x"] - painted[primary]["x"]) < 60 for end in ends), (ends, painted[primary])
    higher, lower = sorted(ends, key=lambda end: -float(end["text"]))
    assert higher["y"] < lower["y"]  # the larger mean at the top of the axis
    # where MLflow lays the box out, below its fixed sections: never more than one screen below the fold
    assert layout["Metrics"] is not None and layout[delta_key] is not None, layout
    assert layout[delta_key]["top"] < 2 * SCREEN[1], layout
    # the box opens on the primary's rows (the parts of its delta, ``.attr.*``, sort before ``.ci_high``)
    assert first is not None and first.startswith(vs_control_key("ndcg@10", "")), first
    assert [rows[f]["y"] for f in fields] == sorted(rows[f]["y"] for f in fields)  # one below the other
    logged = {field: primary_row[field] for field in ("ci_high", "ci_low", "delta", "p_adjusted")}
    for field, value in logged.items():
        row = rows[field]
        assert row is not None and row["texts"][:2] == [vs_control_key("ndcg@10", field), "NaN"], row
        # the UI paints three decimals, or e-notation with four digits: the logged figure, rounded so
        tolerance = {"rel": 1e-3} if abs(shown(value)) < 1e-3 else {"abs": 5e-4}
        assert painted_number(row["texts"][2]) == pytest.approx(shown(value), **tolerance), (field, row)


def settled_plot(browser: DevTools, title: str, timeout: float = 30) -> list[dict]:
    """The parallel-coordinates plot's texts once it has drawn the axis ``title`` and stands still (the
    same texts at the same places on two reads 0.4 s apart), or the last read after ``timeout``."""
    deadline, last = Deadline(timeout), None  # a hang guard, not a speed check
    while True:
        texts = browser.plot_texts(".pcp-plot") or []
        drawn = any(t["text"] == title for t in texts)
        if (drawn and texts == last) or deadline.passed():
            return texts
        last = texts
        pause(0.4)


#: The first metric name painted below the compare view's "Metrics" heading, down the names' column at
#: ``x`` (the browser's hit test, every 4 px from ``top``).
FIRST_METRIC = """((x, top) => {
  for (let y = top; y < window.innerHeight; y += 4) {
    const hit = document.elementFromPoint(x, y);
    const text = hit ? (hit.innerText || '').trim() : '';
    if (/^[a-z_][a-z0-9_.-]*$/.test(text) && text.includes('_')) return text;
  }
  return null; })"""


def test_report_html_renders_self_contained(two_runs, browser, tmp_path: Path) -> None:
    url, payloads = two_runs
    client = MlflowClient(tracking_uri=url)
    local = Path(client.download_artifacts(payloads[-1]["parent_run_id"], "report.html", str(tmp_path)))
    html = local.read_text()
    assert "<script" not in html and "http://" not in html.replace("http://www.w3.org/2000/svg", "")
    browser.resize(1300, 2600)  # the report's first two screens in one picture
    try:
        browser.open(local.as_uri(), until="Largest wins")
        browser.screenshot(artifacts_dir("browser") / "report.png")
        text = browser.evaluate("document.body.innerText")
    finally:
        browser.resize(*SCREEN)
    assert " ".join(payloads[-1]["verdicts"]["dbsf"]["sentence"].split()) in " ".join(text.split())
    assert "Largest wins" in text and "✓" in text


def test_the_top_run_of_a_comparison_across_collections_opens_with_the_pooled_verdict(
    two_runs, collections_run, browser, tmp_path: Path
) -> None:
    """The top run's page: the pooled verdict in bold, whole, opening its description, and the pooled delta
    first in its metrics, painted beside its own name (MLflow lays this page out in one column at 1600 px,
    where a comparison's parent run gets two, so the metrics may need the wheel); its report.html (the
    forest of the collections) in the same browser."""
    url, _ = two_runs
    client = MlflowClient(tracking_uri=url)
    top = client.get_run(collections_run["parent_run_id"])
    page = run_url(url, top.info.experiment_id, top.info.run_id)
    key = pooled_key("bm25-k1", "ndcg@10", "delta")
    first_screen(browser, page, "Description", ["Description"], artifacts_dir("browser") / "collections.png")
    verdict = browser.evaluate(VERDICT_LINES)
    pooled = collections_run["pooled"][0]
    assert verdict is not None and verdict["text"] == pooled["sentence"].split(";")[0], verdict
    assert verdict["clipped"] == [], verdict  # the description opens with it, above "Show more"'s fade
    turns = 0  # MLflow stacks this page's sections at 1600 px (About first), so its metrics may be below
    while (browser.painted_row(key) or {"y": SCREEN[1]})["y"] > SCREEN[1] - 200 and turns < 20:
        browser.call("Input.dispatchMouseEvent", type="mouseWheel", x=500, y=500, deltaX=0, deltaY=300)
        pause(0.3)
        turns += 1
    rows = browser.painted_rows([key, "Metric"])  # the row and the metrics table's column header
    browser.screenshot(artifacts_dir("browser") / "collections-metrics.png")
    row, header = rows[key], rows["Metric"]
    assert row is not None and header is not None, rows
    first = browser.evaluate(f"({FIRST_METRIC})({row['x'] + 5}, {header['y'] + 10})")
    assert row is not None and row["texts"][0] == key and first == key, (row, first)  # first of the list
    assert painted_number(row["texts"][1]) == pytest.approx(shown(pooled["delta"]), rel=1e-3), row

    local = Path(client.download_artifacts(top.info.run_id, "report.html", str(tmp_path)))
    browser.resize(1300, 2600)
    try:
        browser.open(local.as_uri(), until="Per collection")
        browser.screenshot(artifacts_dir("browser") / "collections-report.png")
        text = browser.evaluate("document.body.innerText")
        forest = browser.plot_texts("svg") or []
    finally:
        browser.resize(*SCREEN)
    assert " ".join(pooled["sentence"].split()) in " ".join(text.split())
    for run_id in collections_run["collection_run_ids"].values():  # each collection's page leads back
        page_of = Path(client.download_artifacts(run_id, "report.html", str(tmp_path / run_id))).read_text()
        assert f'{page}">{top.info.run_name}</a>' in page_of
    painted = {t["text"].removeprefix("★ ") for t in forest if t["painted"]}  # ★: significant
    assert {"hr-docs", "cranfield"} <= painted, forest  # each collection's row of the forest, painted
