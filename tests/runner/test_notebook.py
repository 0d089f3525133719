"""The analysis notebook executes top to bottom against a fresh run, so it cannot rot."""

from __future__ import annotations

import pytest
from e2e_support import execute_notebook

from abcompare.tracking.reader import load_comparison


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


def test_analysis_notebook_executes_from_its_own_folder_and_finds_the_store_above(
    example_run, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Jupyter starts a notebook in its own folder: it looks upward for the store the README's command wrote,
    says where it found it, creates none, and its outputs carry no progress-bar noise."""
    workdir, result = example_run
    assert result.returncode == 0, result.stderr[-2000:]
    folder = workdir / "notebooks"
    folder.mkdir(exist_ok=True)
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    stdout, stderr, tables = execute_notebook(folder)
    assert f"store: sqlite:///{workdir / 'mlflow.db'} (looked in {folder / 'mlflow.db'}, " in stdout
    assert not (folder / "mlflow.db").exists(), "the notebook created a store of its own"
    assert "looking at 'dbsf' on ndcg@10" in stdout
    assert "largest wins" in stdout
    assert stderr == "", stderr[:2000]  # no tqdm bars, no artifact-download noise
    assert "relevant" in tables and "✓" in tables  # the side-by-side hits mark the annotated-relevant ones


def test_without_a_store_the_notebook_helper_says_where_it_looked_and_creates_none(tmp_path, monkeypatch):
    from abcompare.core.errors import TrackingError
    from abcompare.tracking.reader import find_store

    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    nested = tmp_path / "a" / "b"
    nested.mkdir(parents=True)
    with pytest.raises(
        TrackingError, match=f"no MLflow store found: .* no mlflow.db in {nested / 'mlflow.db'}, "
    ):
        find_store(nested)
    with pytest.raises(TrackingError, match="no MLflow store at"):
        load_comparison(tracking_uri=f"sqlite:///{nested / 'mlflow.db'}")
    assert not any(tmp_path.rglob("mlflow.db"))
