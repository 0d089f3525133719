"""What a generator is given: one query and that variant's top-k hits (id, text, rank), best first."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pandas as pd


@dataclass(frozen=True)
class Hit:
    """One retrieved item as a generator sees it: its id (the run's key), its text and its rank (1 = best)."""

    id: str
    text: str
    rank: int


@dataclass(frozen=True)
class Query:
    """One question: its id and its text."""

    query_id: str
    text: str


def hits_from_run(run: pd.DataFrame, k: int, texts: Mapping[str, str] | None = None) -> dict[str, list[Hit]]:
    """Each query's top ``k`` hits of a run table (``query_id``, ``key``, ``rank``, and ``content`` when the
    retriever gave the text), the text of a key without content taken from ``texts`` (a key with no text at
    all is given as an empty text, never dropped: it was retrieved)."""
    top = run.sort_values(["query_id", "rank"], kind="stable").groupby("query_id", sort=False).head(k)
    content = top["content"] if "content" in top.columns else pd.Series("", index=top.index)
    texts = texts or {}
    out: dict[str, list[Hit]] = {}
    for (query_id, key, rank), text in zip(
        top[["query_id", "key", "rank"]].itertuples(index=False), content, strict=True
    ):
        text = text if isinstance(text, str) and text else texts.get(str(key), "")
        out.setdefault(str(query_id), []).append(Hit(str(key), str(text), int(rank)))
    return out


def as_hits(hits: Sequence[Hit | Mapping[str, object]]) -> list[Hit]:
    """Hits given as :class:`Hit` or as mappings with ``id``, ``text`` and optionally ``rank``, best first."""
    out = []
    for i, hit in enumerate(hits, start=1):
        if isinstance(hit, Hit):
            out.append(hit)
        else:
            out.append(Hit(str(hit["id"]), str(hit.get("text") or ""), int(hit.get("rank") or i)))  # type: ignore[arg-type]
    return out
