"""JSONL run files: one line per query, ``{"query_id", "hits": [RagHit, ...]}``."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from abcompare.core.errors import DataError
from abcompare.core.hits import KEY_RULE, RagHit
from abcompare.core.limits import MAX_INDEX
from abcompare.data._jsonl import jsonl_records
from abcompare.data.hit_lists import (
    clean_id,
    run_frame_from_hits,
)
from abcompare.data.run_rules import finite_scores, rank_problem

#: The RagHit fields a hit's score is read from (``data.hit_lists``: the first one set).
SCORE_FIELDS = ("score", "rerank_score", "fusion_score", "retrieval_score")


def read_jsonl_run(path: str | Path) -> pd.DataFrame:
    hits_by_query: dict[str, list[RagHit]] = {}
    line_of: dict[str, int] = {}
    hint = 'each line is {"query_id": "...", "hits": [{RagHit fields}, ...]}'
    for number, record in jsonl_records(path, "run", hint):
        if "query_id" not in record or "hits" not in record:
            raise DataError("malformed line: needs 'query_id' and 'hits'", file=path, line=number, hint=hint)
        qid = clean_id(record["query_id"])
        if qid is None:
            raise DataError("empty query_id", file=path, line=number, field="query_id", hint=hint)
        if qid in hits_by_query:
            raise DataError(
                f"duplicate query id {qid!r} (first at line {line_of[qid]})",
                file=path,
                line=number,
                hint="put all hits of a query on one line",
            )
        if not isinstance(record["hits"], list):
            raise DataError("'hits' must be a list", file=path, line=number, field="hits", hint=hint)
        hits_by_query[qid] = checked_hit_list(record["hits"], qid, path=path, line=number)
        line_of[qid] = number
    return finite_scores(run_frame_from_hits(hits_by_query), path)


def jsonl_hit_location(path: str | Path, query_id: str, rank: int, name: str) -> dict[str, Any]:
    """Where a JSONL run file holds the field ``name`` of the hit at ``rank`` of ``query_id`` (its list
    position, as the run table numbers it): ``{"line": n, "field": "hits[i].name"}``, or ``{}`` when the
    query is not found."""
    for number, record in jsonl_records(path, "run", ""):
        if isinstance(record, dict) and clean_id(record.get("query_id")) == query_id:
            return {"line": number, "field": f"hits[{rank - 1}].{name}"}
    return {}


def hit_lists_run(hits_by_query: Mapping[Any, Any]) -> pd.DataFrame:
    """The run table of ranked hit lists handed over in Python (``{query_id: [RagHit or dict, ...]}``),
    checked by the rules of a JSONL run file: a query id each, hits that are RagHit fields, ranks 1..n
    when the hits carry ranks, finite scores. A problem is a ``DataError`` naming the query and the hit."""
    checked: dict[str, list[RagHit]] = {}
    for raw_qid, hits in hits_by_query.items():
        qid = clean_id(raw_qid)
        if qid is None:
            raise DataError(f"empty query id {raw_qid!r}", hint="every hit list needs its query's id")
        if isinstance(hits, str | bytes | Mapping) or not isinstance(hits, Sequence):
            raise DataError(
                f"the hits of query {qid!r} are a {type(hits).__name__}, not a list",
                hint="give each query a list of RagHit (or dicts of RagHit fields), best first",
            )
        checked[qid] = checked_hit_list(list(hits), qid, path=None, line=None, prefix=f"query {qid!r}: ")
    return finite_scores(run_frame_from_hits(checked), None)


def checked_hit_list(
    raw_hits: list[Any], qid: str, *, path: str | Path | None, line: int | None, prefix: str = ""
) -> list[RagHit]:
    """One query's hits, each validated as a RagHit, and their ranks (when given) 1..n."""
    hits = [
        _validate_hit(raw, path=path, line=line, index=i, prefix=prefix) for i, raw in enumerate(raw_hits)
    ]
    _check_hit_ranks(hits, qid, path=path, line=line, prefix=prefix)
    return hits


def _validate_hit(
    raw: Any, *, path: str | Path | None, line: int | None, index: int, prefix: str = ""
) -> RagHit:
    from pydantic import ValidationError

    if isinstance(raw, RagHit):
        raw = raw.model_dump(exclude_none=True)  # checked as a dict of its fields: one rule for both
    if not isinstance(raw, dict):
        raise DataError(
            f"hit {index} is not an object",
            file=path,
            line=line,
            field=f"{prefix}hits[{index}]",
            hint="each hit is a JSON object (a dict, or a RagHit) of RagHit fields",
        )
    try:
        hit = RagHit.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        raise DataError(
            f"invalid hit: {err['msg']}",
            file=path,
            line=line,
            field=f"{prefix}hits[{index}].{where}",
            hint="fix the value's type (numbers for scores and ranks)",
        ) from None
    _check_hit_values(hit, raw, path=path, line=line, field=f"{prefix}hits[{index}]")
    return hit


def _check_hit_values(
    hit: RagHit, raw: dict[str, Any], *, path: str | Path | None, line: int | None, field: str
) -> None:
    """A parsed hit's values: finite scores, a non-empty id when one is given, whole ranks and offsets."""
    for name in SCORE_FIELDS:  # a score that is not a number: at its line and hit, not later at a row
        value = getattr(hit, name)
        if value is not None and not math.isfinite(value):
            raise DataError(
                f"invalid hit: {name} is {value} (scores must be finite numbers)",
                file=path,
                line=line,
                field=f"{field}.{name}",
                hint="give each hit a finite score, or leave the score out of every hit of the query "
                "(then their order is the ranking)",
            )
    if raw.get("id") is not None and _nameless(hit):
        raise DataError(
            f"invalid hit: id {raw['id']!r} is empty",
            file=path,
            line=line,
            field=f"{field}.id",
            hint="give every hit its id (or the hit fields a key is computed from: document_id, "
            "source_path, ...); a hit without any would be matched by its position alone",
        )
    whole = [(name, getattr(hit, name)) for name in ("rank", "chunk_index", "page_number")]
    whole += [(f"metadata.{name}", (hit.metadata or {}).get(name)) for name in ("start", "end")]
    for name, value in whole:
        if value is None:
            continue
        whole_number = isinstance(value, int) or (isinstance(value, float) and value.is_integer())
        if isinstance(value, bool) or not whole_number or abs(value) > MAX_INDEX:
            raise DataError(
                f"invalid hit: {name} {value!r} is not a whole number between -2**53 and 2**53",
                file=path,
                line=line,
                field=f"{field}.{name}",
                hint="ranks, chunk indexes, page numbers and character offsets are integers",
            )


def _nameless(hit: RagHit) -> bool:
    """Whether no field of ``hit`` gives it a key (``core.hits.KEY_RULE``): only its position would."""
    return not any(all(clean_id(getattr(hit, name)) is not None for name in fields) for fields, _ in KEY_RULE)


def _check_hit_ranks(
    hits: Sequence[RagHit], qid: str, *, path: str | Path | None, line: int | None, prefix: str = ""
) -> None:
    ranks = [h.rank for h in hits]
    if not hits or any(r is None for r in ranks):
        return
    expected = list(range(1, len(hits) + 1))
    if sorted(ranks) != expected:
        raise DataError(
            rank_problem(sorted(ranks)) + f" for query {qid!r}",
            file=path,
            line=line,
            field=f"{prefix}rank" if prefix else "rank",
            hint="ranks of one query must be 1, 2, ..., n",
        )
