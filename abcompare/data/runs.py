"""Run files (precomputed hit lists): read TREC / JSONL / Parquet / CSV into the run table, and write them.

The run table is the contract of docs/architecture.md: one row per (query, hit) with ``query_id, rank, key,
score`` plus hit fields, sorted by query (first appearance) then rank. TREC files follow trec_eval: the
rank column is ignored and hits are ordered by score (descending), ties by docno (descending).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from abcompare.core.errors import DataError
from abcompare.core.limits import MAX_HITS_PER_QUERY
from abcompare.data._lines import (
    InputFile,
    as_input,
    peek_bytes,
    unix_newlines,
)
from abcompare.data.hit_lists import (
    RUN_COLUMNS,
    hits_from_run_frame,
    run_frame_from_hits,
    stable_keys,
)
from abcompare.data.run_jsonl import hit_lists_run, jsonl_hit_location, read_jsonl_run
from abcompare.data.run_tabular import read_csv_run, read_parquet_run, table_run, tabular_hit_location
from abcompare.data.run_trec import read_trec_run, run_tag, write_trec_run

__all__ = [
    "RUN_COLUMNS",
    "check_scored_in_full",
    "hits_from_run_frame",
    "read_run",
    "returned_run",
    "run_frame_from_hits",
    "stable_keys",
    "write_run",
]

FORMATS = ("trec", "jsonl", "parquet", "csv")


# ----------------------------------------------------------------------------------------------- reading
def read_run(path: str | Path, fmt: str = "auto") -> pd.DataFrame:
    """Read a run file (a system's hit lists for the query set) into the run table.

    Parameters
    ----------
    path : str or Path
        TREC (``qid Q0 docno rank score tag``), JSONL of ``RagHit`` lists, Parquet or CSV; ``.gz`` too. The
        file is read once when it cannot be read twice (a named pipe such as ``<(zcat run.gz)``).
    fmt : {"auto", "trec", "jsonl", "parquet", "csv"}
        The format; ``auto`` goes by the name, then the first bytes.

    Returns
    -------
    pandas.DataFrame
        ``query_id, rank, key, score`` plus hit fields, by query (first appearance) then rank. A TREC run
        is ordered as trec_eval orders it (score descending, docno descending), its rank column ignored.
        A problem is a ``DataError`` naming the file and line.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "run.trec"
    >>> _ = path.write_text("q1 Q0 d2 1 1.5 sys\\nq1 Q0 d1 2 2.5 sys\\n")
    >>> read_run(path)[["query_id", "rank", "key", "score"]].values.tolist()
    [['q1', 1, 'd1', 2.5], ['q1', 2, 'd2', 1.5]]
    """
    path = as_input(path, "run")
    fmt = _detect_format(path) if fmt == "auto" else fmt
    readers = {
        "trec": read_trec_run,
        "jsonl": read_jsonl_run,
        "parquet": read_parquet_run,
        "csv": read_csv_run,
    }
    if fmt not in readers:
        raise DataError(
            f"unknown run format {fmt!r}", file=path, hint=f"use one of auto, {', '.join(FORMATS)}"
        )
    return bounded_hit_lists(readers[fmt](path), path)


def bounded_hit_lists(run: pd.DataFrame, path: Any = None) -> pd.DataFrame:
    """``run``, unless a query has more than ``MAX_HITS_PER_QUERY`` hits: every hit is judged and every
    resample reads them, so a list that deep is refused, naming the query, before any evaluation."""
    if run.empty:
        return run
    sizes = run.groupby("query_id", sort=False).size()
    if int(sizes.max()) > MAX_HITS_PER_QUERY:
        query = sizes.idxmax()
        raise DataError(
            f"query {query!r} has {int(sizes.max()):,} hits: at most {MAX_HITS_PER_QUERY:,} a query",
            file=path,
            field="query_id",
            hint="cut each query's list to its top hits (metrics read at most the largest cutoff)",
        )
    return run


def returned_run(returned: Any) -> pd.DataFrame:
    """What a retriever callable returned, as the run table, checked as a run file is: a run DataFrame by
    the CSV/Parquet rules, a mapping ``query_id -> [RagHit or dict, ...]`` (best first) by the JSONL
    rules. Anything else, or not one hit for any query, is a ``DataError`` (as an empty run file is).

    Examples
    --------
    >>> run = returned_run({"q1": [{"id": "d2"}, {"id": "d1", "score": 0.5}]})
    >>> run[["query_id", "rank", "key"]].values.tolist()
    [['q1', 1, 'd2'], ['q1', 2, 'd1']]
    """
    if isinstance(returned, pd.DataFrame):
        run = table_run(returned.copy())
    elif isinstance(returned, Mapping):
        run = hit_lists_run(returned)
    else:
        raise DataError(
            f"returned a {type(returned).__name__}, not the queries' hits",
            hint="return {query_id: [RagHit or dict, ...]} (best first) or a run DataFrame "
            "(query_id, rank or score, key or hit fields)",
        )
    if run.empty:
        raise DataError("returned no hit for any query", hint="return each query's ranked hits, best first")
    return bounded_hit_lists(run)


def check_scored_in_full(
    run: pd.DataFrame, convention: str, *, path: str | Path | None = None, fmt: str = "auto"
) -> None:
    """In the trec convention hits are ordered by score, so a query whose hits are scored only in part has
    no order: a ``DataError`` naming the query and the hit, located at its line when the run was read
    from the file ``path`` (the file is read again to find it: only the error's path pays for that).

    Examples
    --------
    >>> import pandas as pd
    >>> run = pd.DataFrame({"query_id": ["q", "q"], "rank": [1, 2], "key": ["a", "b"], "score": [1.0, None]})
    >>> check_scored_in_full(run, "ai4j")  # ranks order the hits: nothing to refuse
    >>> check_scored_in_full(run, "trec")
    Traceback (most recent call last):
    ...
    abcompare.core.errors.DataError: score: query 'q': the hit at rank 2 ('b') has no score while others \
of its query have one (the trec convention orders hits by score: give every hit of a query a finite score, \
or none (then their order is the ranking))
    """
    if convention != "trec" or run.empty:
        return
    missing = run["score"].isna()
    if not missing.any():
        return
    share = missing.groupby(run["query_id"], sort=False).transform("mean")
    partial = share.between(0, 1, inclusive="neither")
    if not partial.any():
        return
    first = run[partial & missing].iloc[0]
    query_id, key = str(first["query_id"]), str(first["key"])
    where = _hit_location(path, fmt, query_id, key, int(first["rank"])) if path is not None else {}
    raise DataError(
        f"query {query_id!r}: the hit at rank {first['rank']} ({key!r}) has no score while others of its "
        "query have one",
        file=path,
        line=where.get("line"),
        field=where.get("field", "score"),
        hint="the trec convention orders hits by score: give every hit of a query a finite score, or "
        "none (then their order is the ranking)",
    )


def _hit_location(path: str | Path, fmt: str, query_id: str, key: str, rank: int) -> dict[str, Any]:
    """Where the run file ``path`` holds the score of a hit of its run table (``line`` and ``field``), or
    ``{}`` when the file cannot be read again (a pipe) or the hit is not found."""
    source = as_input(path, "run")
    if not source.rereadable:
        return {}
    fmt = _detect_format(source) if fmt == "auto" else fmt
    if fmt == "jsonl":
        return jsonl_hit_location(source, query_id, rank, "score")
    if fmt in ("csv", "parquet"):
        return tabular_hit_location(source, fmt, query_id, key, "score")
    return {}  # a TREC run has a finite score on every line


def _detect_format(path: InputFile) -> str:
    name = path.path.name.lower().removesuffix(".gz")
    if name.endswith((".parquet", ".pq")):
        return "parquet"
    if name.endswith(".csv"):
        return "csv"
    if name.endswith((".jsonl", ".json", ".ndjson")):
        return "jsonl"
    head = peek_bytes(path, "run").lstrip()
    if head.startswith(b"PAR1"):
        return "parquet"
    if head.startswith(b"{"):
        return "jsonl"
    header = unix_newlines(head).split(b"\n", 1)[0]
    if b"," in header and b"query_id" in {field.strip(b' "') for field in header.split(b",")}:
        return "csv"  # a CSV header names the query_id column; a TREC line has no commas in its fields
    return "trec"


# ----------------------------------------------------------------------------------------------- writing
def write_run(
    run_df: pd.DataFrame,
    path: str | Path,
    fmt: str = "trec",
    *,
    run_name: str = "abcompare",
    scores: str = "auto",
) -> Path:
    """Write a run table as trec, jsonl, parquet or csv.

    Parameters
    ----------
    run_df : pandas.DataFrame
        A run table (``query_id, rank, key, score`` and hit fields).
    path : str or Path
        Where to write (folders are created).
    fmt : {"trec", "jsonl", "parquet", "csv"}
        The format.
    run_name : str
        The TREC tag (whitespace becomes ``_``).
    scores : {"auto", "keep"}
        trec_eval re-orders hits by score (ties by docno), so with ``auto`` a query whose scores do not
        reproduce its ranks (ties, inversions, NaN) gets rank-derived scores (n - rank + 1) and an
        ``AbcompareWarning``; ``keep`` writes them untouched.

    Returns
    -------
    Path
        The file written; reading it back with :func:`read_run` gives the same ranking.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> import pandas as pd
    >>> run = pd.DataFrame({"query_id": ["q", "q"], "rank": [1, 2], "key": ["a", "b"], "score": [1.0, 1.0]})
    >>> path = write_run(run, pathlib.Path(tempfile.mkdtemp()) / "run.trec")  # the tie: rank-derived scores
    >>> read_run(path)["key"].tolist()
    ['a', 'b']
    """
    path = Path(path)
    for column in RUN_COLUMNS:
        if column not in run_df:
            raise DataError(
                f"run table has no {column!r} column",
                field=column,
                hint="build runs with read_run or run_frame_from_hits",
            )
    path.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "trec":
        write_trec_run(run_df, path, tag=run_tag(run_name), scores=scores)
    elif fmt == "jsonl":
        with path.open("w", encoding="utf-8") as out:
            for query_id, hits in hits_from_run_frame(run_df).items():
                payload = [h.model_dump(exclude_none=True) for h in hits]
                out.write(json.dumps({"query_id": query_id, "hits": payload}, ensure_ascii=False) + "\n")
    elif fmt == "parquet":
        run_df.to_parquet(path, index=False)
    elif fmt == "csv":
        run_df.to_csv(path, index=False)
    else:
        raise DataError(f"unknown run format {fmt!r}", field="fmt", hint=f"use one of {', '.join(FORMATS)}")
    return path
