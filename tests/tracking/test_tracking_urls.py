"""Every link abcompare prints or writes opens MLflow's classic "Machine learning" view: each carries
``?workflowType=machine_learning`` (without it MLflow 3 opens its GenAI screens), and one function builds
them all (``layout.ui_url``). And what the console says about where a comparison was recorded: every
variant's run id for a few variants, one summary line for a sweep's many."""

from __future__ import annotations

import json
import re
import urllib.parse

import pytest

from abcompare.tracking.layout import compare_url, run_url, ui_url, view_url
from abcompare.tracking.logger import PARENT, recorded_lines
from abcompare.tracking.store import ui_command
from abcompare.tracking.writer import RecordedRuns

BASE = "http://127.0.0.1:5000"
WORKFLOW = "workflowType=machine_learning"


def query_of(url: str) -> dict[str, list[str]]:
    """The query parameters of an MLflow UI link (they follow the ``#/route?``)."""
    fragment = urllib.parse.urlsplit(url).fragment
    return urllib.parse.parse_qs(fragment.split("?", 1)[1])


@pytest.mark.parametrize(
    ("url", "route"),
    [
        (view_url(BASE + "/", "7"), "/experiments/7/runs"),
        (run_url(BASE, "7", "a" * 32), f"/experiments/7/runs/{'a' * 32}"),
        (compare_url(BASE, "7", ["b" * 32, "c" * 32]), "/compare-runs"),
        (ui_url(BASE, "experiments/7"), "/experiments/7"),
    ],
)
def test_every_ui_link_carries_the_machine_learning_workflow(url: str, route: str) -> None:
    assert url.startswith(f"{BASE}/#{route}?") and url.endswith(WORKFLOW)  # last: see compare_url's test
    assert query_of(url)["workflowType"] == ["machine_learning"]


def test_the_view_and_compare_links_keep_their_own_parameters() -> None:
    assert query_of(view_url(BASE, "7"))["viewStateShareKey"] == ["abcompare"]
    url = compare_url(BASE, "7", ["b" * 32, "c" * 32])
    compare = query_of(url)
    assert json.loads(compare["runs"][0]) == ["b" * 32, "c" * 32]  # as MLflow's runs view opens it
    assert json.loads(compare["experiments"][0]) == ["7"]
    # MLflow 3.17's compare page reads its parameters only where its runs view puts them (first): with
    # workflowType before them it says 'Error while parsing URL: "undefined" is not valid JSON'
    assert url.startswith(f"{BASE}/#/compare-runs?runs=")


def links(lines: list[str]) -> list[str]:
    return [found for line in lines for found in re.findall(r"https?://\S+", line)]


def test_the_console_links_the_parent_the_compare_view_and_the_runs_view() -> None:
    ids = {PARENT: "p" * 32, "variant:control": "c" * 32, "variant:dbsf": "d" * 32}
    lines = recorded_lines(RecordedRuns(BASE, "3", ids), "abcompare-hr-docs", {PARENT: "rrf-vs-dbsf"})
    assert lines[1:3] == [f"  control: {'c' * 32}", f"  dbsf: {'d' * 32}"]
    found = links(lines)
    assert len(found) == 3 and all(query_of(url)["workflowType"] == ["machine_learning"] for url in found)
    assert f"/#/experiments/3/runs/{'p' * 32}?" in found[0]  # the comparison
    assert json.loads(query_of(found[1])["runs"][0]) == ["c" * 32, "d" * 32]  # control and treatment
    assert lines[-1] == f"View: {BASE}/#/experiments/3/runs?viewStateShareKey=abcompare&{WORKFLOW}"


def test_a_sweeps_many_run_ids_are_one_line() -> None:
    ids = {PARENT: "p" * 32, "variant:control": "c" * 32}
    ids |= {f"variant:k={k}": f"{k:032d}" for k in range(20)}
    lines = recorded_lines(RecordedRuns(BASE, "3", ids), "sweeps", {PARENT: "sweep"})
    assert lines[1] == (
        f"  control: {'c' * 32}; 20 treatment runs: the parent's child runs, each tagged "
        "abcompare.variant=<name> (--json lists every id)"
    )
    assert len(lines) == 4  # the experiment and parent, the ids, the parent's link, the runs view
    assert all(query_of(url)["workflowType"] == ["machine_learning"] for url in links(lines))


def test_the_local_ui_link_follows_the_port_mlflow_ui_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    from mlflow.utils.cli_args import PORT  # the decorator that gives `mlflow ui` its --port option

    (port,) = PORT(lambda: None).__click_params__
    assert port.envvar == "MLFLOW_PORT" and port.default == 5000
    monkeypatch.delenv("MLFLOW_PORT", raising=False)
    assert ui_command("sqlite:////elsewhere/mlflow.db")[1] == "http://127.0.0.1:5000"
    monkeypatch.setenv("MLFLOW_PORT", "5123")
    assert ui_command("sqlite:////elsewhere/mlflow.db") == (
        "mlflow ui --backend-store-uri sqlite:////elsewhere/mlflow.db",
        "http://127.0.0.1:5123",
    )
    assert ui_command("http://127.0.0.1:7000") == (None, "http://127.0.0.1:7000")  # a server: its own URL
