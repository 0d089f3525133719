"""BEIR folders as Datasets: the shared collections load with their documented counts; reconciliation."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from abcompare.core.errors import AbcompareWarning, DataError
from abcompare.data import load_beir
from abcompare.data.subset import common_query_ids, restrict_to_queries

FIXTURES = Path(__file__).parent / "fixtures"


def test_scifact_test_split_counts(datasets_dir):
    ds = load_beir(datasets_dir / "scifact")  # README: 5,183 docs, 300 test queries, 339 qrels rows
    assert len(ds.corpus) == 5183
    assert len(ds.queries) == 300
    assert len(ds.annotations) == 339
    assert ds.excluded_queries == 1109 - 300
    assert ds.unknown_annotation_queries == 0


def test_scifact_train_split(datasets_dir):
    ds = load_beir(datasets_dir / "scifact", split="train", corpus=False)
    assert (len(ds.queries), len(ds.annotations), ds.corpus) == (809, 919, None)


def test_cranfield_graded_qrels(datasets_dir):
    ds = load_beir(datasets_dir / "cranfield")  # README: 1,400 docs, 225 judged queries, grades 1-4
    assert len(ds.corpus) == 1400
    assert len(ds.queries) == 225
    assert ds.annotations["query_id"].nunique() == 225
    assert ds.annotations["grade"].value_counts().to_dict() == {2: 734, 3: 387, 1: 363, 4: 128}


def test_cisi_judged_queries(datasets_dir):
    ds = load_beir(datasets_dir / "cisi")  # README: 1,460 docs, 112 queries, 76 judged
    assert (len(ds.corpus), len(ds.queries), ds.excluded_queries) == (1460, 76, 36)
    assert len(ds.annotations) == 3114


def test_strict_makes_unannotated_queries_an_error(datasets_dir):
    with pytest.raises(DataError, match="809 queries have no annotations"):
        load_beir(datasets_dir / "scifact", strict=True, corpus=False)


def test_tiny_folder_warns_about_unknown_annotated_queries_and_excludes_unjudged():
    with pytest.warns(AbcompareWarning, match="1 annotated queries are not in the query set"):
        ds = load_beir(FIXTURES / "beir_tiny")
    assert ds.queries["query_id"].tolist() == ["q1", "q2"]
    assert ds.annotations.values.tolist() == [["q1", "d1", 1], ["q2", "d2", 2]]
    assert (ds.excluded_queries, ds.unknown_annotation_queries) == (1, 1)


def test_missing_split_lists_the_available_ones(tmp_path):
    with pytest.raises(DataError, match="no qrels for split 'dev'") as err:
        load_beir(FIXTURES / "beir_tiny", split="dev")
    assert "available splits: test" in str(err.value)
    with pytest.raises(DataError, match="BEIR dataset folder not found"):
        load_beir(tmp_path / "nowhere")


@pytest.mark.filterwarnings("ignore::abcompare.core.errors.AbcompareWarning")
def test_fingerprint_is_stable_and_content_sensitive(tmp_path):
    a = load_beir(FIXTURES / "beir_tiny")
    assert a.fingerprint() == load_beir(FIXTURES / "beir_tiny").fingerprint()
    copy = tmp_path / "beir_tiny"
    shutil.copytree(FIXTURES / "beir_tiny", copy)
    (copy / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t2\nq2\td2\t2\n")
    assert load_beir(copy).fingerprint() != a.fingerprint()
    assert a.restrict(["q1"]).queries["query_id"].tolist() == ["q1"]


def test_restrict_and_common_query_ids_keep_order():
    import pandas as pd

    run = pd.DataFrame({"query_id": ["b", "a", "b", "c"], "key": list("wxyz")})
    ann = pd.DataFrame({"query_id": ["c", "b"], "key": ["z", "w"]})
    assert common_query_ids(run, ann) == ["b", "c"]
    assert restrict_to_queries(run, ["c", "b"])["key"].tolist() == ["w", "y", "z"]
