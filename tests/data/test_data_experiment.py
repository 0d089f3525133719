"""The experiment's data stage: dataset settings (folder, builtin name, file overrides) become a Dataset."""

from __future__ import annotations

from pathlib import Path

import pytest

from abcompare.config import DatasetSettings
from abcompare.core.errors import DataError
from abcompare.data.experiment import load_dataset_for_experiment

FIXTURES = Path(__file__).parent / "fixtures"
pytestmark = pytest.mark.filterwarnings("ignore::abcompare.core.errors.AbcompareWarning")


def test_folder_settings_load_the_split_and_corpus():
    ds = load_dataset_for_experiment(DatasetSettings(path=FIXTURES / "beir_tiny"))
    assert ds.name == "beir_tiny"
    assert ds.query_ids == ["q1", "q2"]
    assert len(ds.corpus) == 3
    assert ds.spans is None


def test_file_overrides_win_and_the_level_decides_which_judgments_count(tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q3 0 d3 1\n")
    settings = DatasetSettings(path=FIXTURES / "beir_tiny", annotations=qrels, spans=FIXTURES / "spans.jsonl")
    ds = load_dataset_for_experiment(settings)
    # chunk level: the qrels override judges q3; the spans do not count (nor are they read)
    assert ds.query_ids == ["q3"]
    assert ds.annotations.values.tolist() == [["q3", "d3", 1]]
    assert ds.spans is None
    spans = load_dataset_for_experiment(settings.model_copy(update={"level": "span"}))
    assert spans.query_ids == ["q1", "q2"]  # span level: the evidence spans judge q1 and q2
    assert len(spans.spans) == 2


def test_a_list_of_annotation_files_is_merged_and_conflicts_name_both_files(tmp_path):
    first, second, clash = tmp_path / "a.txt", tmp_path / "b.csv", tmp_path / "c.txt"
    first.write_text("q1 0 d1 1\nq2 0 d2 0\n")
    second.write_text("query_id,key,grade,text\nq2,d9,2,some text\nq1,d1,1,same judgment again\nq2,d3,,\n")
    clash.write_text("q1 0 d1 2\n")
    ds = load_dataset_for_experiment(
        DatasetSettings(path=FIXTURES / "beir_tiny", annotations=[first, second])
    )
    assert sorted(map(tuple, ds.annotations.values.tolist())) == [
        ("q1", "d1", 1),
        ("q2", "d2", 0),
        ("q2", "d9", 2),
    ]
    assert [Path(p).name for p, _ in ds.annotation_files] == ["a.txt", "b.csv"]
    one = load_dataset_for_experiment(DatasetSettings(path=FIXTURES / "beir_tiny", annotations=first))
    assert one.fingerprint() != ds.fingerprint()
    with pytest.raises(DataError, match=r"grades for query 'q1', id 'd1': 1 in .*a\.txt, 2 in .*c\.txt"):
        load_dataset_for_experiment(DatasetSettings(path=FIXTURES / "beir_tiny", annotations=[first, clash]))


def test_max_queries_keeps_the_first_annotated_queries():
    full = load_dataset_for_experiment(DatasetSettings(name="hr-docs", level="document"))
    ds = load_dataset_for_experiment(DatasetSettings(name="hr-docs", level="document", max_queries=5))
    assert len(full.query_ids) == 124
    assert ds.query_ids == full.query_ids[:5]
    assert set(ds.annotations["query_id"]) == set(full.query_ids[:5])
    assert ds.annotations.equals(full.annotations[full.annotations["query_id"].isin(ds.query_ids)])


def test_missing_folder_is_a_data_error(tmp_path):
    with pytest.raises(DataError, match="dataset folder not found"):
        load_dataset_for_experiment(DatasetSettings(path=tmp_path / "nope"))


def test_builtin_example_loads_with_spans_at_span_level():
    ds = load_dataset_for_experiment(DatasetSettings(name="hr-docs", level="span"))
    assert len(ds.queries) == 124 and ds.corpus is not None
    assert ds.spans is not None and set(ds.spans["query_id"]) == set(ds.query_ids)
