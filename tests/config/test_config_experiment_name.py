"""Which MLflow experiment a comparison logs into (docs/mlflow.md, issue 41): the one the config names in
``tracking.experiment``, else one named after the collection, ``abcompare-<collection>``, the dataset's
name as the data gives it (a BEIR folder's name). A config pointed at another collection with
``--set dataset.path=...`` follows that collection, unless it names its experiment for itself: the
shipped configs keep their names on their own data."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.cli import REPO
from support.configs import MINIMAL, bm25_control

from abcompare.config import load_config

SHIPPED = REPO / "configs"


def beir_folder(parent: Path, name: str) -> Path:
    """A BEIR folder named ``name`` with one judged query over two documents."""
    folder = parent / name
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text('{"_id": "d1", "text": "a"}\n{"_id": "d2", "text": "b"}\n')
    (folder / "queries.jsonl").write_text('{"_id": "q1", "text": "a"}\n{"_id": "q2", "text": "b"}\n')
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t1\n")
    return folder


def written(folder: Path, text: str) -> Path:
    path = folder / "config.yaml"
    path.write_text(text)
    return path


def test_a_config_naming_no_experiment_logs_into_its_collections(tmp_path: Path) -> None:
    """No ``tracking.experiment``: the shipped example hr-docs is ``abcompare-hr-docs``."""
    assert load_config(written(tmp_path, MINIMAL)).tracking.experiment == "abcompare-hr-docs"


def test_a_beir_folder_names_the_experiment_after_the_folder(tmp_path: Path) -> None:
    folder = beir_folder(tmp_path, "my-collection")
    treatment = "treatments:\n  b:\n    retrievers:\n      bm25: {k1: 0.9}\n"
    config = written(tmp_path, bm25_control(f"path: {folder}") + treatment)
    assert load_config(config).tracking.experiment == "abcompare-my-collection"


def test_a_shipped_config_pointed_at_another_collection_follows_it(tmp_path: Path) -> None:
    """The issue's case: ``configs/rrf_vs_dbsf.yaml`` (``experiment: abcompare-hr-docs``, the hr-docs
    collection's own name) with ``--set dataset.path=<scifact>`` logs into ``abcompare-scifact``."""
    folder = beir_folder(tmp_path, "scifact")
    config = SHIPPED / "rrf_vs_dbsf.yaml"
    assert load_config(config).tracking.experiment == "abcompare-hr-docs"  # unchanged on its own data
    moved = load_config(config, [f"dataset.path={folder}"])
    assert moved.tracking.experiment == "abcompare-scifact"
    assert moved.dataset.collection_name == "scifact"
    named = load_config(config, [f"dataset.path={folder}", "tracking.experiment=mine"])
    assert named.tracking.experiment == "mine"  # named with --set: kept


@pytest.mark.parametrize(
    ("name", "experiment"),
    [("fusion_sweep", "abcompare-hr-docs-sweeps"), ("scifact_bm25_vs_hybrid", "abcompare-scifact")],
)
def test_an_experiment_the_config_names_for_itself_stays(name: str, experiment: str, tmp_path: Path) -> None:
    """A name that is not the replaced collection's own (the sweep's) stays wherever the config points;
    a config that read its data from a folder keeps its name too."""
    folder = beir_folder(tmp_path, "elsewhere")
    config = SHIPPED / f"{name}.yaml"
    assert load_config(config, [f"dataset.path={folder}"]).tracking.experiment == experiment


def test_a_written_experiment_stays_on_any_collection(tmp_path: Path) -> None:
    folder = beir_folder(tmp_path, "other")
    text = MINIMAL + "tracking:\n  experiment: team-search\n"
    config = written(tmp_path, text)
    assert load_config(config).tracking.experiment == "team-search"
    assert load_config(config, [f"dataset.path={folder}"]).tracking.experiment == "team-search"


def test_a_description_on_the_replaced_example_says_the_collection(tmp_path: Path) -> None:
    """The issue's case: a shipped description ending "on hr-docs." says the collection from the data once
    ``--set dataset.path`` points it at another; unchanged on its own data and when described with --set."""
    folder = beir_folder(tmp_path, "scifact")
    config = SHIPPED / "bm25_vs_hybrid.yaml"
    own = load_config(config).description
    assert own.endswith(" on hr-docs.")
    moved = load_config(config, [f"dataset.path={folder}"]).description
    assert moved == own.removesuffix(" on hr-docs.") + " on scifact."
    given = load_config(config, [f"dataset.path={folder}", "description=mine on hr-docs"])
    assert given.description == "mine on hr-docs"
