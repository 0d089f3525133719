"""Where the change comes from, in the main job (the session's run of ``configs/rrf_vs_dbsf.yaml``): the
``--json`` attribution adds up to every delta the comparison reports, the console prints the primary
metric's under the verdict, and the README's figures for RRF vs DBSF are the run's, to the digits it prints.
"""

from __future__ import annotations

import json

import pytest
from support.readme import as_printed, doc_match

from abcompare.tracking.reader import load_comparison

README_FIGURES = (
    r"Here dbsf's nDCG@10 change of (?P<delta>-?[0-9.]+) is \+(?P<new>[0-9.]+) from (?P<new_count>\d+) "
    r"relevant hits new to the top 10, −(?P<lost>[0-9.]+) from (?P<lost_count>\d+) lost relevant hits? and "
    r"−(?P<reorder>[0-9.]+) from reordering \((?P<reorder_count>\d+) relevant hits that both lists hold "
    r"at other ranks\).*?(?P<unjudged>\d+) unjudged newcomers"
)


@pytest.fixture(scope="module")
def payload(example_run) -> dict:
    _, result = example_run
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout)


def test_the_parts_add_up_to_every_delta_the_comparison_reports(payload) -> None:
    rows = {(row["treatment"], row["metric"]): row for row in payload["comparison"]}
    attributed = payload["attribution"]["dbsf"]
    assert set(attributed) == {metric for treatment, metric in rows if treatment == "dbsf"}
    for metric, figures in attributed.items():
        assert figures["delta"] == pytest.approx(rows[("dbsf", metric)]["delta"], abs=1e-12), metric
        assert sum(figures["parts"].values()) == pytest.approx(figures["delta"], abs=1e-12), metric
        assert figures["unit"] == ("queries" if metric.startswith(("mrr", "f1")) else "hits")
        assert figures["n_queries"] == payload["n_queries"]
        assert figures["parts"]["ideal"] == 0 or metric.startswith(("ndcg", "precision", "f1"))


def test_the_readme_states_the_examples_attribution(payload) -> None:
    readme = doc_match(README_FIGURES, page="docs/getting-started.md").groupdict()
    figures = payload["attribution"]["dbsf"]["ndcg@10"]
    parts, counts = figures["parts"], figures["counts"]
    assert as_printed(figures["delta"], readme["delta"]) == readme["delta"]
    assert as_printed(parts["new"], readme["new"]) == readme["new"]
    assert as_printed(-parts["lost"], readme["lost"]) == readme["lost"]
    assert as_printed(-parts["reorder"], readme["reorder"]) == readme["reorder"]
    assert parts["ideal"] == 0  # every list of the example is 20 hits long: the ideal DCG is the same
    assert (counts["new"], counts["lost"], counts["reorder"]) == (
        int(readme["new_count"]), int(readme["lost_count"]), int(readme["reorder_count"])
    )  # fmt: skip
    assert figures["unjudged_newcomers"] == int(readme["unjudged"])


def test_the_notebook_reads_the_parts_back_from_mlflow(example_run, payload) -> None:
    workdir, _ = example_run
    logged = load_comparison(payload["parent_run_id"], tracking_uri=f"sqlite:///{workdir / 'mlflow.db'}")
    parts = logged.attribution("dbsf", "ndcg@10")
    figures = payload["attribution"]["dbsf"]["ndcg@10"]
    assert parts["delta"].to_dict() == pytest.approx(figures["parts"], abs=1e-15)
    assert parts.attrs["sentence"] == figures["sentence"]
    by_query = logged.attribution_by_query("dbsf", "ndcg@10")
    assert len(by_query) == payload["n_queries"] and "text" in by_query
    assert by_query[["new", "lost", "reorder", "ideal"]].sum(axis=1).to_numpy() == pytest.approx(
        logged.deltas("dbsf", "ndcg@10").reindex(by_query.index).to_numpy(), abs=1e-12
    )
