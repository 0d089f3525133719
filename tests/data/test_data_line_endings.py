"""Every reader reads ``\\n``, ``\\r\\n`` and a bare ``\\r`` (old Mac) line endings the same, mixed freely in
one file, and reports a problem at the same line number whatever the convention."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from abcompare.core.errors import DataError
from abcompare.data import read_annotations, read_corpus, read_queries, read_run, read_spans

ENDINGS = st.sampled_from(["\n", "\r\n", "\r"])
WORD = st.text(alphabet="abcdefghij0123456789-", min_size=1, max_size=6)


def join(lines: list[str], endings: list[str], final: str | None) -> str:
    """Lines joined by the given endings, with ``final`` (or nothing) after the last one."""
    text = "".join(line + ending for line, ending in zip(lines[:-1], endings, strict=False))
    return text + lines[-1] + (final or "")


@st.composite
def trec_run_lines(draw) -> list[str]:
    queries = draw(st.lists(WORD, min_size=1, max_size=4, unique=True))
    lines = []
    for q in queries:
        docs = draw(st.lists(WORD, min_size=1, max_size=5, unique=True))
        lines += [f"q{q} Q0 d{d} {i + 1} {len(docs) - i}.5 tag" for i, d in enumerate(docs)]
    return lines


@st.composite
def qrels_lines(draw) -> list[str]:
    pairs = draw(st.lists(st.tuples(WORD, WORD), min_size=1, max_size=8, unique=True))
    grades = draw(st.lists(st.integers(0, 3), min_size=len(pairs), max_size=len(pairs)))
    return [f"q{q} 0 d{d} {g}" for (q, d), g in zip(pairs, grades, strict=True)]


def qrels(lines: list[str]) -> list[str]:
    return [f"{p[0]} 0 {p[2]} {int(p[3]) % 3}" for p in (line.split() for line in lines)]


def beir(lines: list[str]) -> list[str]:
    return ["query-id\tcorpus-id\tscore"] + [
        "\t".join(line.split()[i] for i in (0, 2, 3)) for line in qrels(lines)
    ]


def qrels_jsonl(lines: list[str]) -> list[str]:
    return [json.dumps({"query_id": line.split()[0], "relevant": {line.split()[2]: 1}}) for line in lines]


def run_jsonl(lines: list[str]) -> list[str]:
    by_query: dict[str, list[str]] = {}
    for line in lines:
        by_query.setdefault(line.split()[0], []).append(line.split()[2])
    return [json.dumps({"query_id": q, "hits": [{"id": d} for d in docs]}) for q, docs in by_query.items()]


def run_csv(lines: list[str]) -> list[str]:
    return ["query_id,id,rank"] + [f"{p[0]},{p[2]},{p[3]}" for p in (line.split() for line in lines)]


def queries_of(lines: list[str]) -> list[str]:
    return sorted({line.split()[0] for line in lines})


READERS: dict[str, tuple[str, Callable[[list[str]], list[str]], Callable[[Path], pd.DataFrame]]] = {
    "run trec": ("run.trec", lambda lines: lines, lambda p: read_run(p, "trec")),
    "run auto": ("run.txt", lambda lines: lines, lambda p: read_run(p)),
    "run jsonl": ("run.jsonl", run_jsonl, lambda p: read_run(p)),
    "run csv": ("run.csv", run_csv, lambda p: read_run(p)),
    "qrels trec": ("qrels.txt", qrels, read_annotations),
    "qrels beir": ("qrels.tsv", beir, read_annotations),
    "qrels jsonl": ("qrels.jsonl", qrels_jsonl, read_annotations),
    "queries tsv": (
        "queries.tsv",
        lambda lines: [f"{q}\tabout {q}" for q in queries_of(lines)],
        read_queries,
    ),
    "queries jsonl": (
        "queries.jsonl",
        lambda lines: [json.dumps({"_id": q, "text": f"about {q}", "group": 1}) for q in queries_of(lines)],
        read_queries,
    ),
    "spans": (
        "spans.jsonl",
        lambda lines: [
            json.dumps({"query_id": p[0], "document_id": p[2], "start": i, "end": i + 3})
            for i, p in enumerate(line.split() for line in lines)
        ],
        read_spans,
    ),
    "corpus": (
        "corpus.jsonl",
        lambda lines: [
            json.dumps({"_id": d, "title": "", "text": f"text of {d}"})
            for d in sorted({ln.split()[2] for ln in lines})
        ],
        read_corpus,
    ),
}


@pytest.mark.parametrize("reader", sorted(READERS))
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=trec_run_lines(), data=st.data())
def test_every_line_ending_reads_like_a_newline(tmp_path: Path, reader: str, lines: list[str], data) -> None:
    name, render, read = READERS[reader]
    content = render(lines)
    endings = data.draw(st.lists(ENDINGS, min_size=len(content), max_size=len(content)))
    final = data.draw(st.one_of(st.none(), ENDINGS))
    unix = tmp_path / f"unix-{name}"
    unix.write_bytes(join(content, ["\n"] * len(content), "\n").encode())
    mixed = tmp_path / f"mixed-{name}"
    mixed.write_bytes(join(content, endings, final).encode())
    pd.testing.assert_frame_equal(read(mixed), read(unix))


@pytest.mark.parametrize("ending", ["\n", "\r\n", "\r"])
@pytest.mark.parametrize(
    ("name", "read", "good", "bad", "message"),
    [
        ("run.trec", read_run, "q1 Q0 d1 1 2.0 t", "q1 Q0 d2 2", "expected 6 fields"),
        ("qrels.txt", read_annotations, "q1 0 d1 1", "q1 0 d2 high", "non-numeric grade"),
        ("queries.tsv", read_queries, "q1\tabout q1", "q2", "wrong column count"),
        ("corpus.jsonl", read_corpus, '{"_id": "d1", "text": "x"}', '{"_id": "d2"', "not JSON"),
    ],
)
def test_a_problem_is_reported_at_the_same_line_whatever_the_line_ending(
    tmp_path: Path, ending: str, name: str, read, good: str, bad: str, message: str
) -> None:
    path = tmp_path / name
    path.write_bytes(ending.join([good, "", good.replace("1", "3"), bad, good.replace("1", "4")]).encode())
    with pytest.raises(DataError, match=message) as info:
        read(path)
    assert info.value.line == 4


def test_an_old_mac_run_file_is_not_read_as_one_line(tmp_path: Path) -> None:
    lines = [f"q{q} Q0 d{d} {d + 1} {100 - d} sys" for q in range(3) for d in range(50)]
    path = tmp_path / "run.trec"
    path.write_bytes("\r".join(lines).encode())
    run = read_run(path)
    assert len(run) == 150
    assert run["query_id"].nunique() == 3
