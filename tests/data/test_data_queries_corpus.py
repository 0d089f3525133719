"""Query sets and corpora: formats, extra fields kept, and every bad input located."""

from __future__ import annotations

from pathlib import Path

import pytest

from abcompare.core.errors import DataError
from abcompare.data import read_corpus, read_queries

FIXTURES = Path(__file__).parent / "fixtures"


def _write(tmp_path: Path, text: str, name: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_beir_queries_keep_extra_fields():
    queries = read_queries(FIXTURES / "beir_tiny" / "queries.jsonl")
    assert queries["query_id"].tolist() == ["q1", "q2", "q3"]
    assert queries["text"].iloc[1] == "When are receipts due?"
    assert queries["group"].iloc[1] == "finance"


def test_tsv_queries_with_and_without_header(tmp_path):
    plain = read_queries(_write(tmp_path, "1\tfirst query\n2\tsecond one\n", "q.tsv"))
    assert plain.values.tolist() == [["1", "first query"], ["2", "second one"]]
    headed = read_queries(_write(tmp_path, "qid\ttext\tgroup\n1\tfirst\tA\n", "h.tsv"))
    assert headed.values.tolist() == [["1", "first", "A"]]
    assert list(headed.columns) == ["query_id", "text", "group"]


def test_duplicate_query_id_is_located(tmp_path):
    path = _write(
        tmp_path,
        '{"_id": "1", "text": "a"}\n{"_id": "2", "text": "b"}\n{"_id": "1", "text": "c"}\n',
        "q.jsonl",
    )
    with pytest.raises(DataError, match=r"duplicate query id '1' \(first at line 1\)") as err:
        read_queries(path)
    assert err.value.line == 3


def test_empty_query_text_is_located(tmp_path):
    path = _write(tmp_path, "1\tfine\n2\t   \n", "q.tsv")
    with pytest.raises(DataError, match="empty query text for query '2'") as err:
        read_queries(path)
    assert err.value.line == 2


def test_tsv_query_line_without_tab_is_wrong_column_count(tmp_path):
    with pytest.raises(DataError, match="expected 2 tab-separated fields, found 1") as err:
        read_queries(_write(tmp_path, "1\tok\n2 no tab here\n", "q.tsv"))
    assert err.value.line == 2


def test_query_jsonl_malformed_and_missing_fields(tmp_path):
    with pytest.raises(DataError, match="malformed line: not JSON") as err:
        read_queries(_write(tmp_path, '{"_id": "1", "text": "a"}\n{"_id": "2", "text": }\n', "q.jsonl"))
    assert err.value.line == 2
    with pytest.raises(DataError, match="missing field 'text'"):
        read_queries(_write(tmp_path, '{"_id": "1"}\n', "q.jsonl"))
    with pytest.raises(DataError, match="missing field '_id'"):
        read_queries(_write(tmp_path, '{"text": "x"}\n', "q.jsonl"))


def test_missing_query_file(tmp_path):
    with pytest.raises(DataError, match="query file not found"):
        read_queries(tmp_path / "queries.jsonl")


def test_corpus_reads_title_and_text_and_allows_empty_text(tmp_path):
    corpus = read_corpus(FIXTURES / "beir_tiny" / "corpus.jsonl")
    assert corpus["doc_id"].tolist() == ["d1", "d2", "d3"]
    assert corpus["title"].iloc[2] == ""
    empty = read_corpus(_write(tmp_path, '{"_id": "x", "text": ""}\n', "c.jsonl"))
    assert empty.values.tolist() == [["x", "", ""]]


def test_corpus_duplicate_id_and_bad_text_are_located(tmp_path):
    with pytest.raises(DataError, match=r"duplicate document id 'a' \(first at line 1\)") as err:
        read_corpus(_write(tmp_path, '{"_id": "a", "text": "x"}\n{"_id": "a", "text": "y"}\n', "c.jsonl"))
    assert err.value.line == 2
    with pytest.raises(DataError, match="text must be a string") as err:
        read_corpus(_write(tmp_path, '{"_id": "a", "text": 5}\n', "c.jsonl"))
    assert err.value.line == 1
