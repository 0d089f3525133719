"""The shipped hr-docs example: sizes, evidence spans, document and chunk qrels, freshness, example_path.

Expected values are re-derived here from the markdown/YAML sources and the chunker, never read back
from the builder's own intermediate results.
"""

from __future__ import annotations

import csv
import json
import re
from collections import defaultdict
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

import abcompare
from abcompare.core.errors import DataError
from abcompare.examples import EXAMPLES, example_path
from abcompare.examples.build_hr_docs import GENERATED_FILES, Span, build, chunk_qrels, document_qrels
from abcompare.retrieval.chunking import Chunk, chunk_document

EXAMPLE = example_path("hr-docs")
SOURCE = EXAMPLE / "source"


# --------------------------------------------------------------------------- independent readers


def _source_docs() -> dict[str, tuple[str, str]]:
    """doc-id -> (title, text) straight from the markdown files."""
    docs = {}
    for path in sorted((SOURCE / "docs").glob("*.md")):
        lines = path.read_text(encoding="utf-8").split("\n")
        assert lines[0].startswith("# "), path
        docs[path.stem] = (lines[0][2:].strip(), "\n".join(lines[1:]).strip())
    return docs


def _source_queries() -> list[dict]:
    queries = []
    for path in sorted(SOURCE.glob("queries_*.yaml")):
        queries.extend(yaml.safe_load(path.read_text(encoding="utf-8")))
    return queries


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _tsv(path: Path) -> tuple[list[str], dict[tuple[str, str], int]]:
    with path.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.reader(handle, delimiter="\t"))
    return rows[0], {(q, c): int(s) for q, c, s in rows[1:]}


@pytest.fixture(scope="module")
def docs() -> dict[str, tuple[str, str]]:
    return _source_docs()


@pytest.fixture(scope="module")
def queries() -> list[dict]:
    return _source_queries()


@pytest.fixture(scope="module")
def chunks(docs: dict[str, tuple[str, str]]) -> dict[str, list[Chunk]]:
    return {doc_id: chunk_document(doc_id, text, title) for doc_id, (title, text) in docs.items()}


# --------------------------------------------------------------------------- example_path


def test_example_path_finds_the_shipped_hr_docs_folder():
    assert example_path("hr-docs") == Path(abcompare.__file__).parent / "examples" / "hr_docs"
    assert EXAMPLES["hr-docs"] == example_path("hr-docs")
    for name in (
        "corpus.jsonl",
        "queries.jsonl",
        "qrels/test.tsv",
        "qrels/test.chunks.tsv",
        "spans/test.jsonl",
    ):
        assert (EXAMPLE / name).is_file(), name


def test_example_path_accepts_underscores_and_capitals():
    assert example_path("HR_docs") == example_path("hr-docs")


def test_example_path_rejects_an_unknown_name_and_lists_the_known_ones():
    with pytest.raises(DataError, match="unknown example 'nope'") as info:
        example_path("nope")
    assert "hr-docs" in str(info.value)
    assert info.value.field == "dataset.name"


# --------------------------------------------------------------------------- sizes and shape


def test_the_example_has_the_sizes_the_readme_states(docs, queries, chunks):
    assert len(docs) == 35
    assert len(queries) == 124
    assert sum(len(c) for c in chunks.values()) == 231  # at the default chunking


def test_every_document_has_four_to_eight_sections_and_a_substantial_body(docs):
    for doc_id, (title, text) in docs.items():
        sections = re.findall(r"(?m)^## \S", text)
        assert 4 <= len(sections) <= 8, (doc_id, len(sections))
        assert len(text) >= 3500, (doc_id, len(text))
        assert title, doc_id
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", doc_id), doc_id


def test_corpus_jsonl_holds_each_source_document_verbatim(docs):
    rows = _jsonl(EXAMPLE / "corpus.jsonl")
    assert [r["_id"] for r in rows] == sorted(docs)
    for row in rows:
        title, text = docs[row["_id"]]
        assert (row["title"], row["text"]) == (title, text)
        assert row["metadata"] == {"source": f"source/docs/{row['_id']}.md"}
        assert (EXAMPLE / row["metadata"]["source"]).is_file()


def test_queries_have_unique_prefixed_ids_and_both_groups(queries):
    ids = [q["id"] for q in queries]
    assert len(ids) == len(set(ids))
    assert all(re.fullmatch(r"q[ab]-\d{3}", i) for i in ids)
    groups = [q["group"] for q in queries]
    assert set(groups) == {"keyword", "semantic"}
    assert (groups.count("keyword"), groups.count("semantic")) == (60, 64)
    rows = _jsonl(EXAMPLE / "queries.jsonl")
    assert [r["_id"] for r in rows] == ids
    assert [(r["text"], r["group"], r["topic"]) for r in rows] == [
        (q["text"], q["group"], q["topic"]) for q in queries
    ]


def test_every_query_has_a_main_answer_and_some_have_a_second_document(queries):
    assert all(any(e["grade"] == 2 for e in q["evidence"]) for q in queries)
    two_docs = [q["id"] for q in queries if len({e["doc"] for e in q["evidence"]}) >= 2]
    assert len(two_docs) == 30


# --------------------------------------------------------------------------- evidence and spans


def test_every_quote_occurs_exactly_once_and_has_a_sensible_length(docs, queries):
    for q in queries:
        for ev in q["evidence"]:
            assert ev["doc"] in docs, (q["id"], ev["doc"])
            assert 40 <= len(ev["quote"]) <= 300, q["id"]
            assert docs[ev["doc"]][1].count(ev["quote"]) == 1, (q["id"], ev["quote"][:50])


def test_spans_point_at_the_quotes_in_the_document_text(docs, queries):
    spans = _jsonl(EXAMPLE / "spans" / "test.jsonl")
    expected = sorted((q["id"], ev["doc"], ev["quote"], ev["grade"]) for q in queries for ev in q["evidence"])
    found = sorted(
        (s["query_id"], s["document_id"], docs[s["document_id"]][1][s["start"] : s["end"]], s["grade"])
        for s in spans
    )
    assert found == expected


def test_document_qrels_are_the_max_grade_per_query_and_document(queries):
    header, qrels = _tsv(EXAMPLE / "qrels" / "test.tsv")
    assert header == ["query-id", "corpus-id", "score"]
    expected: dict[tuple[str, str], int] = defaultdict(int)
    for q in queries:
        for ev in q["evidence"]:
            expected[(q["id"], ev["doc"])] = max(expected[(q["id"], ev["doc"])], ev["grade"])
    assert qrels == dict(expected)
    # a hand-checked case: qa-017 has a main answer in travel-booking and support in travel insurance
    assert qrels[("qa-017", "travel-booking")] == 2
    assert qrels[("qa-017", "travel-safety-insurance")] == 1


def test_chunk_qrels_mark_exactly_the_chunks_that_share_characters_with_the_evidence(docs, chunks):
    header, qrels = _tsv(EXAMPLE / "qrels" / "test.chunks.tsv")
    assert header == ["query-id", "corpus-id", "score"]
    expected: dict[tuple[str, str], int] = {}
    for span in _jsonl(EXAMPLE / "spans" / "test.jsonl"):
        evidence = set(range(span["start"], span["end"]))
        for chunk in chunks[span["document_id"]]:
            assert chunk.text == docs[span["document_id"]][1][chunk.start : chunk.end]
            if evidence & set(range(chunk.start, chunk.end)):
                key = (span["query_id"], chunk.id)
                expected[key] = max(expected.get(key, 0), span["grade"])
    assert qrels == expected
    all_chunk_ids = {c.id for cs in chunks.values() for c in cs}
    assert {cid for _, cid in qrels} <= all_chunk_ids


def test_every_query_has_a_relevant_chunk_whose_text_contains_part_of_the_main_quote(queries, chunks):
    _, qrels = _tsv(EXAMPLE / "qrels" / "test.chunks.tsv")
    by_id = {c.id: c for cs in chunks.values() for c in cs}
    for q in queries:
        main = next(e for e in q["evidence"] if e["grade"] == 2)
        relevant = [by_id[cid] for (qid, cid), g in qrels.items() if qid == q["id"] and g == 2]
        assert any(main["quote"][:30] in c.text or main["quote"][-30:] in c.text for c in relevant), q["id"]


# --------------------------------------------------------------------------- freshness


def test_generated_files_are_up_to_date_with_the_sources(tmp_path):
    """Every data file shipped beside the sources (found on disk, not taken from the builder's list) is
    exactly what the builder makes of them."""
    shipped = sorted(
        str(path.relative_to(EXAMPLE)) for path in EXAMPLE.rglob("*") if path.suffix in {".jsonl", ".tsv"}
    )
    assert sorted(GENERATED_FILES) == shipped
    build(SOURCE, tmp_path)
    for rel in shipped:
        assert (tmp_path / rel).read_bytes() == (EXAMPLE / rel).read_bytes(), (
            f"{rel} is stale: run python -m abcompare.examples.build_hr_docs"
        )


def test_the_example_loads_through_the_data_layer():
    from abcompare.data.beir import load_beir

    dataset = load_beir(EXAMPLE)
    assert len(dataset.queries) == len(_source_queries())
    assert len(dataset.corpus) == len(_source_docs())


# --------------------------------------------------------------------------- builder validation


def _write_source(root: Path, queries_yaml: str, docs: dict[str, str] | None = None) -> Path:
    source = root / "source"
    (source / "docs").mkdir(parents=True)
    body = (
        "## One\n\nThe meal cap for client dinners is EUR 75 per person including drinks.\n\n## Two\n\nMore."
    )
    for doc_id, text in (docs or {"meals": f"# Meals\n\n{body}\n"}).items():
        (source / "docs" / f"{doc_id}.md").write_text(text, encoding="utf-8")
    (source / "queries_a.yaml").write_text(queries_yaml, encoding="utf-8")
    return source


_GOOD_QUOTE = "The meal cap for client dinners is EUR 75 per person"


def _query(qid: str = "qa-001", doc: str = "meals", quote: str = _GOOD_QUOTE, group: str = "keyword") -> str:
    return (
        f"- id: {qid}\n  text: meal cap\n  group: {group}\n  topic: meals\n"
        f'  evidence:\n    - doc: {doc}\n      quote: "{quote}"\n      grade: 2\n'
    )


def test_builder_writes_offsets_a_reader_can_slice_back(tmp_path):
    source = _write_source(tmp_path, _query())
    summary = build(source, allow_small=True)
    assert (summary.documents, summary.queries, summary.spans) == (1, 1, 1)
    span = _jsonl(tmp_path / "spans" / "test.jsonl")[0]
    # the body starts with "## One\n\n" (8 characters), then the quote
    assert (span["start"], span["end"]) == (8, 8 + len(_GOOD_QUOTE))
    assert (
        tmp_path / "qrels" / "test.chunks.tsv"
    ).read_text() == "query-id\tcorpus-id\tscore\nqa-001\tmeals#chunk-0\t2\n"


def test_builder_reports_a_missing_quote_with_file_line_and_field(tmp_path):
    source = _write_source(
        tmp_path, _query() + _query("qa-002", quote="EUR 80 per person is the cap for client dinners")
    )
    with pytest.raises(DataError, match="quote not found in meals") as info:
        build(source, allow_small=True)
    assert info.value.file.endswith("queries_a.yaml")
    assert info.value.line == 9  # each query above is 8 lines long
    assert info.value.field == "qa-002.evidence[0]"


def test_builder_rejects_a_quote_that_occurs_twice(tmp_path):
    body = "## A\n\nRepeat me: the same forty-plus character sentence here.\n\n## B\n\n"
    text = f"# Twice\n\n{body}Repeat me: the same forty-plus character sentence here.\n"
    source = _write_source(
        tmp_path,
        _query(doc="twice", quote="Repeat me: the same forty-plus character sentence here."),
        {"twice": text},
    )
    with pytest.raises(DataError, match="found 2 times"):
        build(source, allow_small=True)


@pytest.mark.parametrize(
    ("queries_yaml", "message"),
    [
        (_query() + _query(), "duplicate query id 'qa-001'"),
        (_query(doc="nowhere"), "unknown document 'nowhere'"),
        (_query(group="fuzzy"), "query #1"),
        (_query(qid="qb-001"), "does not start with 'qa-'"),
        (_query(quote="too short"), "at least 40 characters"),
        ("- id: qa-001\n  text: [unclosed\n", "invalid YAML"),
    ],
)
def test_builder_rejects_bad_queries_with_a_located_error(tmp_path, queries_yaml, message):
    source = _write_source(tmp_path, queries_yaml)
    with pytest.raises(DataError, match=re.escape(message)) as info:
        build(source, allow_small=True, write=False)
    assert info.value.file is not None and info.value.file.endswith("queries_a.yaml")
    assert info.value.hint


def test_builder_rejects_a_document_without_a_title_line(tmp_path):
    source = _write_source(tmp_path, _query(), {"meals": "No title here\n\n## A\n\nx\n\n## B\n\ny\n"})
    with pytest.raises(DataError, match="first line must be '# Title'") as info:
        build(source, allow_small=True, write=False)
    assert info.value.line == 1


def test_builder_enforces_the_minimum_sizes_unless_drafting(tmp_path):
    source = _write_source(tmp_path, _query())
    with pytest.raises(DataError, match="only 1 documents, the example needs at least 30"):
        build(source, write=False)
    assert build(source, write=False, allow_small=True).documents == 1


# --------------------------------------------------------------------------- properties of the pure helpers


@st.composite
def _tiling_and_spans(draw):
    """Chunks as overlapping windows over a text of length n, and spans inside it."""
    n = draw(st.integers(10, 300))
    starts = sorted(set(draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=8))))
    chunks = [
        Chunk(f"d#chunk-{i}", "d", i, s, min(n, s + draw(st.integers(1, 80))), "", "")
        for i, s in enumerate(starts)
    ]
    spans = []
    for _ in range(draw(st.integers(1, 5))):
        a = draw(st.integers(0, n - 1))
        b = draw(st.integers(a + 1, n))
        spans.append(Span(draw(st.sampled_from(["q1", "q2"])), "d", a, b, draw(st.sampled_from([1, 2]))))
    return chunks, spans


@given(_tiling_and_spans())
def test_chunk_qrels_match_a_character_by_character_oracle(case):
    chunks, spans = case
    expected: dict[tuple[str, str], int] = {}
    for span in spans:
        for chunk in chunks:
            if set(range(span.start, span.end)) & set(range(chunk.start, chunk.end)):
                key = (span.query_id, chunk.id)
                expected[key] = max(expected.get(key, 0), span.grade)
    assert chunk_qrels(spans, {"d": chunks}) == expected


@given(
    st.lists(st.tuples(st.sampled_from("ab"), st.sampled_from("xyz"), st.sampled_from([1, 2])), min_size=1)
)
def test_document_qrels_keep_the_highest_grade(rows):
    spans = [Span(q, d, 0, 1, g) for q, d, g in rows]
    result = document_qrels(spans)
    for (q, d), grade in result.items():
        assert grade == max(g for qq, dd, g in rows if (qq, dd) == (q, d))
    assert set(result) == {(q, d) for q, d, _ in rows}
