"""Restrict query-keyed tables (queries, annotations, spans, runs) to a common set of queries."""

from __future__ import annotations

from collections.abc import Iterable

import pandas as pd

__all__ = ["common_query_ids", "restrict_to_queries"]


def restrict_to_queries(frame: pd.DataFrame, query_ids: Iterable[str]) -> pd.DataFrame:
    """The rows whose ``query_id`` is in ``query_ids``, in their original order, with a fresh index."""
    wanted = pd.Index([str(q) for q in query_ids])
    return frame[frame["query_id"].astype("str").isin(wanted)].reset_index(drop=True)


def common_query_ids(*frames: pd.DataFrame) -> list[str]:
    """Query ids present in every frame, in the order of the first frame's first appearance."""
    if not frames:
        return []
    ordered = pd.unique(frames[0]["query_id"].astype("str"))
    keep = pd.Index(ordered)
    for frame in frames[1:]:
        keep = keep[keep.isin(frame["query_id"].astype("str"))]
    return [str(q) for q in keep]
