"""Hit lists <-> run tables: ``run_frame_from_hits``, ``hits_from_run_frame`` and the vectorised stable key.

Keys follow ``abcompare.core.hits.stable_key`` (and its vectorised form ``stable_keys``) exactly, so a table
built here matches annotations the same way the reference evaluator does.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from abcompare.core.hits import RagHit, clean_id, stable_key, stable_keys

__all__ = [
    "FLOAT_FIELDS",
    "HIT_COLUMNS",
    "INT_FIELDS",
    "RUN_COLUMNS",
    "clean_id",
    "hits_from_run_frame",
    "run_frame_from_hits",
    "stable_keys",
]

RUN_COLUMNS: tuple[str, ...] = ("query_id", "rank", "key", "score")
FLOAT_FIELDS = ("retrieval_score", "fusion_score", "rerank_score")
INT_FIELDS = ("chunk_index", "page_number", "start", "end")
HIT_COLUMNS = (
    "id",
    "document_id",
    "chunk_index",
    "content",
    "retriever_source",
    "retrieval_score",
    "fusion_score",
    "rerank_score",
    "source_name",
    "source_path",
    "source_uri",
    "page_number",
    "section_title",
    "start",
    "end",
    "title",
)
_META_FIELDS = ("start", "end", "title")


# ------------------------------------------------------------------------------------------ hits <-> run
def _hit_score(hit: RagHit) -> float:
    for value in (hit.score, hit.rerank_score, hit.fusion_score, hit.retrieval_score):
        if value is not None:
            return float(value)
    return math.nan


def run_frame_from_hits(hits_by_query: Mapping[str, Sequence[RagHit | Mapping[str, Any]]]) -> pd.DataFrame:
    """The run table for ranked hit lists: key = stable_key(hit, position), rank = position + 1.

    score is ``hit.score`` or else the most specific of rerank / fusion / retrieval score; ``start``,
    ``end`` and ``title`` are promoted from ``hit.metadata``.
    """
    rows: list[dict[str, Any]] = []
    for query_id, hits in hits_by_query.items():
        for position, raw in enumerate(hits):
            hit = raw if isinstance(raw, RagHit) else RagHit.model_validate(raw)
            row: dict[str, Any] = {
                "query_id": str(query_id),
                "rank": position + 1,
                "key": stable_key(hit, position),
                "score": _hit_score(hit),
            }
            for name in HIT_COLUMNS:
                value = (hit.metadata or {}).get(name) if name in _META_FIELDS else getattr(hit, name)
                if value is not None:
                    row[name] = value
            rows.append(row)
    frame = pd.DataFrame(rows, columns=[*RUN_COLUMNS, *HIT_COLUMNS])
    present = [c for c in HIT_COLUMNS if frame[c].notna().any()]
    frame = frame[[*RUN_COLUMNS, *present]]
    frame = frame.astype({"query_id": "str", "key": "str", "rank": np.int64, "score": float})
    for name in present:
        if name in INT_FIELDS:
            frame[name] = frame[name].astype("Int64")
        elif name in FLOAT_FIELDS:
            frame[name] = frame[name].astype(float)
        else:
            frame[name] = frame[name].astype("str").where(frame[name].notna())
    return frame


def _py(value: object) -> object:
    """A frame cell as a plain Python value, with NaN/NA as None."""
    if value is None or value is pd.NA:
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, np.generic):
        return value.item()
    return value


def hits_from_run_frame(frame: pd.DataFrame) -> dict[str, list[RagHit]]:
    """Ranked ``RagHit`` lists per query from a run table (the inverse of ``run_frame_from_hits``).

    When a row's key is not what its fields compute, the hit's ``id`` is set to the key so keys survive.
    """
    qcodes, uniques = pd.factorize(frame["query_id"], sort=False)
    rank = frame["rank"].to_numpy() if "rank" in frame else np.arange(len(frame))
    ordered = frame.iloc[np.lexsort((rank, qcodes))]
    out: dict[str, list[RagHit]] = {str(q): [] for q in uniques}
    columns = [c for c in HIT_COLUMNS if c in ordered]
    for row in ordered.itertuples(index=False):
        values = row._asdict()
        fields = {c: _py(values[c]) for c in columns if c not in _META_FIELDS}
        meta = {c: _py(values[c]) for c in _META_FIELDS if c in values and _py(values[c]) is not None}
        fields["score"] = _py(values.get("score"))
        if meta:
            fields["metadata"] = meta
        hit = RagHit(**fields)
        hits = out[str(values["query_id"])]
        key = str(values["key"])
        if stable_key(hit, len(hits)) != key:
            hit = hit.model_copy(update={"id": key})
        hits.append(hit)
    return out
