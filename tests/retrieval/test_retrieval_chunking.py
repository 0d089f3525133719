"""Chunker: ids, offsets (hand-derived), LangChain-compatible recursive splitting, sentence packing."""

from __future__ import annotations

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from abcompare.core.errors import RetrievalError
from abcompare.retrieval.chunking import Chunk, chunk_corpus, chunk_document

TEXT = "Para one is here.\n\nPara two has more words in it. And a second sentence!\nLine three.\n\n\nEnd"


def spans(chunks: list[Chunk]) -> list[tuple[int, int]]:
    return [(c.start, c.end) for c in chunks]


def test_recursive_splits_paragraphs_then_words_with_overlap_like_langchain():
    # Derived by hand from LangChain's algorithm (keep_separator=True, strip_whitespace=True):
    # "\n\n" pieces [0,17) [17,84) [84,90); the 67-char middle piece is re-split on "\n", then on " ";
    # words are packed up to 30 chars and the window slides back while the carried text exceeds 10.
    chunks = chunk_document("d", TEXT, "T", size=30, overlap=10)
    assert [c.text for c in chunks] == [
        "Para one is here.",
        "Para two has more words in",
        "words in it. And a second",
        "a second sentence!",
        "Line three.",
        "End",
    ]
    assert spans(chunks) == [(0, 17), (19, 45), (37, 62), (54, 72), (73, 84), (87, 90)]
    assert [c.id for c in chunks] == [f"d#chunk-{i}" for i in range(6)]
    assert all(c.title == "T" and c.document_id == "d" for c in chunks)
    assert [c.chunk_index for c in chunks] == list(range(6))


def test_recursive_keeps_a_short_document_whole_and_strips_whitespace():
    text = "  Travel policy.\n\nBook economy class.  \n"
    (chunk,) = chunk_document("travel", text)
    assert (chunk.id, chunk.start, chunk.end) == ("travel#chunk-0", 2, 37)
    assert chunk.text == "Travel policy.\n\nBook economy class."


def test_recursive_falls_back_to_characters_for_an_unbroken_string():
    chunks = chunk_document("x", "abcdefghij", size=4, overlap=1)
    # character pieces, packed 4 at a time, carrying back 1 character
    assert [c.text for c in chunks] == ["abcd", "defg", "ghij"]
    assert spans(chunks) == [(0, 4), (3, 7), (6, 10)]


def test_sentence_strategy_packs_whole_sentences():
    chunks = chunk_document("d", TEXT, strategy="sentence", size=30, overlap=10)
    assert [c.text for c in chunks] == [
        "Para one is here.",
        "Para two has more words in it.",
        "And a second sentence!",
        "Line three.\n\n\nEnd",
    ]
    assert spans(chunks) == [(0, 17), (19, 49), (50, 72), (73, 90)]


def test_sentence_strategy_overlaps_in_whole_sentences():
    text = "One a. Two b. Three c. Four d."
    chunks = chunk_document("q", text, strategy="sentence", size=15, overlap=7)
    # sentences [0,6) [7,13) [14,22) [23,30). Chunk 1 = [0,13); "Two b." (6 <= 7) is carried over, so
    # chunk 2 = [7,22) (15 chars); "Three c." (8 > 7) is too long to carry, so chunk 3 starts fresh.
    assert [c.text for c in chunks] == ["One a. Two b.", "Two b. Three c.", "Four d."]
    assert spans(chunks) == [(0, 13), (7, 22), (23, 30)]


def test_none_strategy_gives_one_chunk_zero_per_document():
    (chunk,) = chunk_document("doc-9", TEXT, "Title", strategy="none")
    assert (chunk.id, chunk.chunk_index, chunk.start, chunk.end) == ("doc-9#chunk-0", 0, 0, len(TEXT))


def test_blank_document_yields_one_empty_chunk():
    (chunk,) = chunk_document("empty", "   ", "Only a title")
    assert (chunk.id, chunk.start, chunk.end, chunk.text) == ("empty#chunk-0", 0, 0, "")


@pytest.mark.parametrize(("size", "overlap"), [(10, 10), (10, 20), (0, 0), (10, -1)])
def test_inconsistent_size_and_overlap_is_a_retrieval_error(size, overlap):
    with pytest.raises(RetrievalError, match="overlap"):
        chunk_document("d", TEXT, size=size, overlap=overlap)


def test_unknown_strategy_is_a_retrieval_error():
    with pytest.raises(RetrievalError, match="strategy"):
        chunk_document("d", TEXT, strategy="semantic")


def test_chunk_corpus_chunks_rows_in_order_with_titles():
    corpus = pd.DataFrame({"doc_id": ["b", "a"], "title": ["B", None], "text": ["x y", "z"]})
    chunks = chunk_corpus(corpus, {"strategy": "none"})
    assert [(c.id, c.title, c.text) for c in chunks] == [("b#chunk-0", "B", "x y"), ("a#chunk-0", "", "z")]


texts = st.text(alphabet=st.sampled_from(list("ab .!?\n\t")), max_size=300)


@settings(max_examples=200, deadline=None)
@given(text=texts, size=st.integers(1, 60), data=st.data())
def test_every_chunk_is_an_exact_stripped_slice_no_longer_than_size(text, size, data):
    overlap = data.draw(st.integers(0, size - 1))
    for strategy in ("recursive", "sentence"):
        chunks = chunk_document("d", text, strategy=strategy, size=size, overlap=overlap)
        assert [c.id for c in chunks] == [f"d#chunk-{i}" for i in range(len(chunks))]
        for c in chunks:
            assert c.text == text[c.start : c.end]
            assert c.end - c.start <= size
            assert c.text == c.text.strip()
        covered = set()
        for c in chunks:
            covered.update(range(c.start, c.end))
        assert all(i in covered for i, ch in enumerate(text) if not ch.isspace())
        starts = [c.start for c in chunks]
        assert starts == sorted(starts)
        assert chunks == chunk_document("d", text, strategy=strategy, size=size, overlap=overlap)


def test_chunk_corpus_accepts_chunking_settings_and_matches_chunk_document():
    from abcompare.retrieval.settings import ChunkingSettings

    corpus = pd.DataFrame({"doc_id": ["d"], "title": ["T"], "text": [TEXT]})
    chunks = chunk_corpus(corpus, ChunkingSettings(size=30, overlap=10))
    assert chunks == chunk_document("d", TEXT, "T", size=30, overlap=10)
