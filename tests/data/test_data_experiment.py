"""The experiment's data stage: dataset settings (folder, builtin name, file overrides) become a Dataset."""

from __future__ import annotations

from pathlib import Path

import pytest

from abcompare.config import DatasetSettings
from abcompare.data.experiment import load_dataset_for_experiment
from abcompare.errors import DataError

FIXTURES = Path(__file__).parent / "fixtures"
pytestmark = pytest.mark.filterwarnings("ignore::abcompare.errors.AbcompareWarning")


def test_folder_settings_load_the_split_and_corpus():
    ds = load_dataset_for_experiment(DatasetSettings(path=FIXTURES / "beir_tiny"))
    assert ds.name == "beir_tiny"
    assert ds.query_ids == ["q1", "q2"]
    assert len(ds.corpus) == 3
    assert ds.spans is None


def test_file_overrides_win_and_spans_are_read(tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q3 0 d3 1\n")
    settings = DatasetSettings(path=FIXTURES / "beir_tiny", annotations=qrels, spans=FIXTURES / "spans.jsonl")
    ds = load_dataset_for_experiment(settings)
    # judged: q3 by the qrels override, q1 and q2 by the spans
    assert ds.query_ids == ["q1", "q2", "q3"]
    assert ds.annotations.values.tolist() == [["q3", "d3", 1]]
    assert len(ds.spans) == 2


def test_max_queries_keeps_the_first_annotated_queries():
    ds = load_dataset_for_experiment(
        DatasetSettings(path=FIXTURES / "beir_tiny", max_queries=2, strict=False)
    )
    assert ds.query_ids == ["q1", "q2"]


def test_missing_folder_is_a_data_error(tmp_path):
    with pytest.raises(DataError, match="dataset folder not found"):
        load_dataset_for_experiment(DatasetSettings(path=tmp_path / "nope"))


def test_builtin_example_loads_with_spans():
    ds = load_dataset_for_experiment(DatasetSettings(name="hr-docs"))
    assert len(ds.queries) > 0 and ds.corpus is not None
    assert ds.spans is not None and set(ds.spans["query_id"]) <= set(ds.query_ids)
