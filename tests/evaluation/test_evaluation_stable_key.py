"""stable_key: the fallback chain of the reference library (ai4j), blanks, stripping and None hits."""

from __future__ import annotations

import pytest

from abcompare.core.hits import RagHit, stable_key


def test_id_wins_over_every_other_field():
    hit = RagHit(id="c1", document_id="d", source_path="p", content="text", chunk_index=3)
    assert stable_key(hit, 7) == "c1"


def test_id_is_stripped():
    assert stable_key(RagHit(id="  c1\t"), 0) == "c1"


@pytest.mark.parametrize("blank", [None, "", "   ", "\n\t"])
def test_blank_id_falls_through_to_document_id_with_chunk_index(blank):
    assert stable_key(RagHit(id=blank, document_id=" doc-9 ", chunk_index=2), 0) == "doc-9#2"


def test_missing_chunk_index_is_a_dash():
    assert stable_key(RagHit(document_id="doc"), 0) == "doc#-"


def test_chunk_index_zero_is_not_blank():
    assert stable_key(RagHit(document_id="doc", chunk_index=0), 5) == "doc#0"


def test_source_path_then_source_uri():
    assert stable_key(RagHit(source_path=" /a/b.md ", source_uri="http://x", chunk_index=1), 0) == "/a/b.md#1"
    assert stable_key(RagHit(source_path="  ", source_uri=" http://x ", chunk_index=1), 0) == "http://x#1"


def test_source_name_and_section_title_need_both():
    both = RagHit(source_name=" Handbook ", section_title=" Travel ", chunk_index=4)
    assert stable_key(both, 0) == "Handbook#Travel#4"
    assert stable_key(RagHit(source_name="Handbook", section_title="Travel"), 0) == "Handbook#Travel#-"
    only_name = RagHit(source_name="Handbook", section_title=" ", content=" body ")
    assert stable_key(only_name, 0) == "body"


def test_content_is_the_last_field_and_is_stripped():
    assert stable_key(RagHit(content="  some chunk text  "), 3) == "some chunk text"


def test_nothing_usable_gives_the_index():
    assert stable_key(RagHit(content="  ", document_id="", source_name="only"), 3) == "3"
    assert stable_key(RagHit(), 0) == "0"


def test_none_hit_gives_the_index():
    assert stable_key(None, 11) == "11"


def test_mapping_hits_follow_the_same_rules():
    assert stable_key({"id": " ", "document_id": "d", "chunk_index": 1}, 0) == "d#1"
    assert stable_key({"source_uri": "u"}, 0) == "u#-"
    assert stable_key({}, 2) == "2"
