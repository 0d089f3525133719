"""The answers file: a variant's answers made elsewhere, one JSON object a line (``query_id``, ``answer``,
``cited_ids``), read with every problem located at its file and line (the lines by the one JSONL rule,
``abcompare.data._jsonl``); and the same format written, so the answers a run generated can be kept and
compared again without generating them."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import pandas as pd

from abcompare.answers.errors import AnswerError
from abcompare.answers.generation import ANSWER_COLUMNS, Answers, answer_problem
from abcompare.answers.hits import Hit
from abcompare.data._jsonl import jsonl_records

_HINT = "each line is a JSON object with query_id, answer and cited_ids"


def read_answers(
    path: str | Path,
    queries: Iterable[str],
    hits: Mapping[str, Sequence[Hit]] | None = None,
) -> Answers:
    """The answers in ``path`` for the query ids ``queries``: an unknown or repeated query id, an empty
    answer, a cited id not among that query's ``hits`` (when given), or a line that is not such an object,
    is one located error. A query of ``queries`` with no answer in the file is an error too (the comparison
    is paired: every query needs an answer from every variant)."""
    path = Path(path)
    known = [str(q) for q in queries]
    known_set = set(known)
    rows: dict[str, tuple[str, str, tuple[str, ...]]] = {}
    for number, record in jsonl_records(path, "answers", _HINT):

        def fail(message: str, hint: str | None = None, at: int = number) -> AnswerError:
            return AnswerError(message, file=path, line=at, hint=hint)

        missing = [c for c in ("query_id", "answer") if c not in record]
        if missing:
            raise fail(f"no {missing[0]!r}", hint=_HINT)
        query_id = record["query_id"]
        if not isinstance(query_id, (str, int)) or isinstance(query_id, bool):
            raise fail(f"query_id is a {type(query_id).__name__}, not a string")
        query_id = str(query_id)
        if query_id not in known_set:
            raise fail(f"query {query_id!r} is not in the query set")
        if query_id in rows:
            raise fail(f"a second answer to query {query_id!r} (the first is on line {rows[query_id][0]})")
        cited = record.get("cited_ids", [])
        context = None if hits is None else [h.id for h in hits.get(query_id, ())]
        problem = answer_problem(record["answer"], cited, context)
        if problem is not None:
            raise fail(f"query {query_id!r}: {problem}")
        rows[query_id] = (str(number), record["answer"].strip(), tuple(cited))
    absent = [q for q in known if q not in rows]
    if absent:
        raise AnswerError(
            f"no answer for {len(absent)} of the {len(known)} queries (first: {absent[0]!r})",
            file=path,
            hint="every variant needs an answer to every query",
        )
    table = pd.DataFrame([(q, rows[q][1], rows[q][2]) for q in known], columns=list(ANSWER_COLUMNS))
    given = {q: list(hits.get(q, ())) for q in known} if hits is not None else {}
    return Answers(table, given, f"file:{path.name}")


def write_answers(answers: Answers, path: str | Path) -> Path:
    """``answers`` as an answers file (one JSON object a line, in the table's order)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as out:
        for query_id, answer, cited in answers.table[list(ANSWER_COLUMNS)].itertuples(index=False):
            record = {"query_id": query_id, "answer": answer, "cited_ids": list(cited)}
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
    return path
