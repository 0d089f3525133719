"""Tables the tests build by hand: run tables (the run contract's columns) and qrels as nested dicts."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import pandas as pd

#: The run table's leading columns (docs/architecture.md).
RUN_COLUMNS = ("query_id", "rank", "key", "score")


def run_frame(rows: Iterable[Sequence], columns: Sequence[str] = RUN_COLUMNS) -> pd.DataFrame:
    """A run table from rows written out in ``columns``' order."""
    return pd.DataFrame(list(rows), columns=list(columns))


def run_of_keys(keys_by_query: Mapping[str, Sequence[str]]) -> pd.DataFrame:
    """A run table from each query's keys, best first: ranks from 1, score 1 / rank."""
    rows = [(q, r + 1, k, 1.0 / (r + 1)) for q, keys in keys_by_query.items() for r, k in enumerate(keys)]
    return run_frame(rows)


def qrels_dict(path: Path) -> dict[str, dict[str, int]]:
    """A BEIR qrels TSV (``query-id, corpus-id, score`` with a header) as ``{query: {doc: grade}}``, the
    form pytrec_eval and ranx take."""
    frame = pd.read_csv(path, sep="\t", dtype=str)
    qrels: dict[str, dict[str, int]] = {}
    for qid, doc, grade in frame.itertuples(index=False):
        qrels.setdefault(qid, {})[doc] = int(grade)
    return qrels
