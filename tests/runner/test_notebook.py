"""The analysis notebook executes top to bottom against a fresh run, so it cannot rot."""

from __future__ import annotations

import os

import nbformat
from e2e_support import REPO
from nbclient import NotebookClient

from abcompare.analysis import load_comparison


def test_load_comparison_reads_the_latest_run_back(example_run) -> None:
    workdir, result = example_run
    assert result.returncode == 0, result.stderr[-2000:]
    loaded = load_comparison(tracking_uri=f"sqlite:///{workdir / 'mlflow.db'}")
    assert loaded.treatments == ["dbsf"]
    assert set(loaded.per_query) == {"control", "dbsf"}
    assert len(loaded.per_query["control"]) == len(loaded.queries)
    deltas = loaded.deltas("dbsf", "ndcg@10")
    row = loaded.summary.set_index(["treatment", "metric"]).loc[("dbsf", "ndcg@10")]
    assert abs(deltas.mean() - row["delta"]) < 1e-12
    wtl = loaded.win_tie_loss("dbsf").loc["ndcg@10"]
    assert (wtl["wins"], wtl["ties"], wtl["losses"]) == (row["wins"], row["ties"], row["losses"])
    wins, losses = loaded.largest_changes("dbsf", "ndcg@10", n=3)
    assert (wins["delta"] > 0).all() and (losses["delta"] < 0).all()
    assert "text" in wins.columns
    first_query = loaded.queries.index[0]
    assert len(loaded.top_hits("control", first_query, n=3)) == 3
    groups = loaded.by_group("dbsf", "ndcg@10", "group")
    assert groups["n_queries"].sum() == len(loaded.queries)


def test_analysis_notebook_executes(example_run) -> None:
    workdir, result = example_run
    assert result.returncode == 0, result.stderr[-2000:]
    notebook = nbformat.read(REPO / "notebooks" / "analysis.ipynb", as_version=4)
    os.environ.pop("MLFLOW_TRACKING_URI", None)
    client = NotebookClient(
        notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(workdir)}}
    )
    client.execute()
    outputs = "\n".join(
        str(output.get("text", ""))
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.outputs
    )
    assert "looking at 'dbsf' on ndcg@10" in outputs
    assert "largest wins" in outputs
