"""The retrieval hit model, the id rule and the stable key that matches hits to annotations.

The stable key follows the reference RAG library's evaluator (ai4j's ``RagEvaluator``) exactly: it is how
a hit is identified when it is compared with annotated relevant ids, so an annotation id must equal the
key its hit computes. The rule is declared once (:data:`KEY_RULE`) and read by both its forms: the
per-hit :func:`stable_key` and the vectorised :func:`stable_keys` over a run table.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

if TYPE_CHECKING:
    import pandas as pd


class RagHit(BaseModel):
    """One retrieved item, as the reference library's ``RagHit``; every field is optional.

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


KEY_RULE: tuple[tuple[tuple[str, ...], bool], ...] = (
    (("id",), False),
    (("document_id",), True),
    (("source_path",), True),
    (("source_uri",), True),
    (("source_name", "section_title"), True),
    (("content",), False),
)
"""The stable key, in order of precedence: the first entry whose fields are all set gives the key, its
fields joined by ``#``, followed by ``#idx`` (the chunk index, or ``-``) when the flag says so; with none
set, the key is the hit's 0-based position."""


def clean_id(value: object) -> str | None:
    """The id rule: ``value`` as a stripped string, None when it is None, NaN or blank; an integral
    float is written as the integer it is (``7.0`` -> ``"7"``, as ids read from a table come)."""
    if value is None:
        return None
    if isinstance(value, float):
        if math.isnan(value):
            return None
        if value.is_integer() and abs(value) < 2**53:
            value = int(value)
    text = str(value).strip()
    return text or None


def _getter(hit: object):
    if isinstance(hit, Mapping):
        return hit.get
    return lambda name: getattr(hit, name, None)


def stable_key(hit: RagHit | Mapping[str, Any] | None, index: int) -> str:
    """The key a hit is matched on (:data:`KEY_RULE`): the first of ``id``; ``document_id#idx``;
    ``source_path#idx``; ``source_uri#idx``; ``source_name#section_title#idx`` (both set); ``content``;
    else ``str(index)``.

    Parameters
    ----------
    hit : RagHit, mapping of hit fields, or None
        The hit; ``idx`` is its chunk index or ``-``, and every value follows :func:`clean_id`.
    index : int
        Its 0-based position in the list (the last fallback).

    Returns
    -------
    str
        The key an annotated id must equal for the hit to match it.

    Examples
    --------
    >>> stable_key(RagHit(document_id="doc-1", chunk_index=0), 0)
    'doc-1#0'
    >>> stable_key({"id": " a "}, 3), stable_key(None, 3)
    ('a', '3')
    """
    if hit is None:
        return str(index)
    get = _getter(hit)
    idx = clean_id(get("chunk_index")) or "-"
    for fields, with_index in KEY_RULE:
        values = [clean_id(get(field)) for field in fields]
        if all(value is not None for value in values):
            key = "#".join(values)  # type: ignore[arg-type]
            return f"{key}#{idx}" if with_index else key
    return str(index)


def stable_keys(frame: pd.DataFrame, index: pd.Series | None = None) -> pd.Series:
    """:func:`stable_key` for every row of a hit table (columns named as ``RagHit`` fields), vectorised.

    ``index`` is the 0-based position used by the last fallback; by default ``rank - 1``.
    """
    import numpy as np
    import pandas as pd

    if index is None:
        index = frame["rank"] - 1 if "rank" in frame else pd.Series(np.arange(len(frame)), index=frame.index)
    idx = _clean_column(frame, "chunk_index").fillna("-")
    key = pd.Series(pd.NA, index=frame.index, dtype="str")
    for fields, with_index in KEY_RULE:
        value = _clean_column(frame, fields[0])
        for field in fields[1:]:
            value = value + "#" + _clean_column(frame, field)
        key = key.fillna(value + "#" + idx if with_index else value)
    return key.fillna(pd.Series(index, index=frame.index).astype("Int64").astype("str")).astype("str")


def _clean_column(frame: pd.DataFrame, name: str) -> pd.Series:
    """:func:`clean_id` over a column: stripped strings, NA for missing or blank (integral numbers
    written without ``.0``); all NA when the column is absent."""
    import numpy as np
    import pandas as pd

    if name not in frame:
        return pd.Series(pd.NA, index=frame.index, dtype="str")
    col = frame[name]
    if pd.api.types.is_integer_dtype(col):
        col = col.astype("Int64")
    elif pd.api.types.is_float_dtype(col):
        arr = col.to_numpy(dtype=float, na_value=np.nan)
        whole = np.isfinite(arr) & (np.floor(arr) == arr) & (np.abs(arr) < 2**53)  # False for NaN
        as_int = pd.Series(np.where(whole, arr, 0), index=frame.index).astype("int64").astype("str")
        col = as_int.where(whole, col.astype("str")).where(~np.isnan(arr))
    elif col.dtype == object:
        col = col.map(lambda v: int(v) if isinstance(v, float) and v.is_integer() else v, na_action="ignore")
    text = col.astype("str").where(col.notna()).str.strip()
    return text.where(text != "")
