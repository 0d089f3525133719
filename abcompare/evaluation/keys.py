"""How one hit or one annotated id becomes the string it is matched on (shared by both conventions)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from abcompare.core.hits import RagHit, clean_id, stable_key

HitLike = RagHit | Mapping[str, Any] | str | None
"""A hit as the evaluators accept it: a ``RagHit``, a mapping of hit fields, a plain key string, or None."""


def hit_key(hit: HitLike, index: int) -> str:
    """The key of the hit at 0-based ``index``: ``stable_key`` for hits; a plain string is the hit's id."""
    if isinstance(hit, str):
        return clean_id(hit) or str(index)
    return stable_key(hit, index)


def hit_keys(hits: Iterable[HitLike] | None) -> list[str]:
    """The keys of a ranked hit list, in order (None means no hits)."""
    return [hit_key(hit, index) for index, hit in enumerate(hits or ())]


def relevant_set(relevant_ids: Iterable[Any] | None) -> set[str]:
    """Annotated relevant ids as ai4j's RagEvaluator reads them: None and blank dropped, stripped,
    de-duplicated."""
    if relevant_ids is None:
        return set()
    if isinstance(relevant_ids, str):
        relevant_ids = (relevant_ids,)
    return {key for key in map(clean_id, relevant_ids) if key is not None}


def graded_ids(annotations: Mapping[Any, Any] | Iterable[Any] | None) -> dict[str, float]:
    """Annotations as ``{id: grade}``: a mapping keeps its grades (the highest wins when stripped ids
    collide), a plain iterable of ids gives grade 1; None and blank ids are dropped."""
    if annotations is None:
        return {}
    if not isinstance(annotations, Mapping):
        return dict.fromkeys(relevant_set(annotations), 1.0)
    grades: dict[str, float] = {}
    for raw, grade in annotations.items():
        key = clean_id(raw)
        if key is None:
            continue
        value = float(grade)
        if key not in grades or value > grades[key]:
            grades[key] = value
    return grades
