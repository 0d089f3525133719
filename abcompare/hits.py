"""The retrieval hit model and the stable key that matches hits to annotations.

The stable key follows the seed RAG library's evaluator exactly: it is how a hit is identified when it is
compared with annotated relevant ids, so an annotation id must equal the key its hit computes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict

HIT_FIELDS: tuple[str, ...] = (
    "id",
    "score",
    "rank",
    "retriever_source",
    "retrieval_score",
    "fusion_score",
    "rerank_score",
    "content",
    "metadata",
    "document_id",
    "source_name",
    "source_path",
    "source_uri",
    "page_number",
    "section_title",
    "chunk_index",
)


class RagHit(BaseModel):
    """One retrieved item, as the seed library's ``RagHit``; every field is optional.

    Chunk character offsets and the document title, where known, travel in ``metadata``
    (``start``, ``end``, ``title``).
    """

    model_config = ConfigDict(extra="ignore")

    id: str | None = None
    score: float | None = None
    rank: int | None = None
    retriever_source: str | None = None
    retrieval_score: float | None = None
    fusion_score: float | None = None
    rerank_score: float | None = None
    content: str | None = None
    metadata: dict[str, Any] | None = None
    document_id: str | None = None
    source_name: str | None = None
    source_path: str | None = None
    source_uri: str | None = None
    page_number: int | None = None
    section_title: str | None = None
    chunk_index: int | None = None


def _clean(value: Any) -> str | None:
    """The value as a stripped string, or None when it is None or blank after stripping."""
    if value is None:
        return None
    text = str(value).strip()
    return text or None


def _getter(hit: Any):
    if isinstance(hit, Mapping):
        return hit.get
    return lambda name: getattr(hit, name, None)


def stable_key(hit: RagHit | Mapping[str, Any] | None, index: int) -> str:
    """The key a hit is matched on: the first of ``id``; ``document_id#idx``; ``source_path#idx``;
    ``source_uri#idx``; ``source_name#section_title#idx`` (both set); ``content``; else ``str(index)``.

    ``idx`` is the chunk index or ``-``; blank means None or empty after strip; values are stripped.
    Accepts a ``RagHit``, a mapping of hit fields, or None.
    """
    if hit is None:
        return str(index)
    get = _getter(hit)
    hit_id = _clean(get("id"))
    if hit_id is not None:
        return hit_id
    idx = _clean(get("chunk_index")) or "-"
    for field in ("document_id", "source_path", "source_uri"):
        value = _clean(get(field))
        if value is not None:
            return f"{value}#{idx}"
    source_name = _clean(get("source_name"))
    section_title = _clean(get("section_title"))
    if source_name is not None and section_title is not None:
        return f"{source_name}#{section_title}#{idx}"
    content = _clean(get("content"))
    if content is not None:
        return content
    return str(index)
