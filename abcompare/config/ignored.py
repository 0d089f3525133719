"""Settings a variant of its kind would ignore: refused at the key where they are written, never dropped
without a word. A variant that reads a run file (``run.path``) or asks a Python retriever (``run.python``)
retrieves nothing, so a ``rerank`` or ``query_planning`` written for it would change no number; RRF's
``k`` means nothing to another fusion method, RM3's settings nothing without ``expansion: rm3``, and so on.

Only what is written for the variant itself counts (the control's keys, or a treatment's overrides): a
treatment that switches to a run file inherits the control's retrievers, which are the control's settings,
not the treatment's. A ``null`` is never refused (it removes a setting, it sets none)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from abcompare.retrieval.settings import VariantSettings


@dataclass(frozen=True)
class IgnoredBy:
    """A setting (its path in a variant) that variants of one kind ignore, and why."""

    path: tuple[str, ...]
    applies: Callable[[VariantSettings], bool]
    why: Callable[[VariantSettings], str]


def _reads_a_run(variant: VariantSettings) -> bool:
    return variant.run is not None


def _run_source(variant: VariantSettings) -> str:
    assert variant.run is not None
    if variant.run.python is not None:
        return f"asks the Python retriever {variant.run.python!r} for its hits"
    return f"reads its hits from the run file {variant.run.path}"


def _retrieval_setting(key: str) -> IgnoredBy:
    return IgnoredBy(
        (key,),
        _reads_a_run,
        lambda v: (
            f"is ignored: this variant {_run_source(v)} and retrieves nothing, so no {key} is "
            "applied (remove it, or give the variant retrievers instead of a run)"
        ),
    )


def _unfused(variant: VariantSettings, method: str | None) -> bool:
    return method is not None and method != "rrf"


def _planning(variant: VariantSettings) -> Any:
    return variant.query_planning if variant.run is None else None


_RM3 = ("fb_docs", "fb_terms", "original_weight", "fb_max_df")

#: Every setting some kind of variant ignores.
IGNORED: tuple[IgnoredBy, ...] = (
    *(
        _retrieval_setting(key)
        for key in ("chunking", "retrievers", "fusion", "rerank", "query_planning", "depth", "top_k")
    ),
    IgnoredBy(
        ("run", "format"),
        lambda v: v.run is not None and v.run.python is not None,
        lambda v: "is ignored: a Python retriever hands over hits, not a file (remove it)",
    ),
    *(
        IgnoredBy(
            ("chunking", key),
            lambda v: v.run is None and v.chunking.strategy == "none",
            lambda v, key=key: (
                f"is ignored: chunking strategy 'none' keeps each document whole, so no "
                f"{key} is applied (remove it, or choose strategy 'recursive' or 'sentence')"
            ),
        )
        for key in ("size", "overlap")
    ),
    IgnoredBy(
        ("fusion", "k"),
        lambda v: v.run is None and v.fusion is not None and _unfused(v, v.fusion.method),
        lambda v: (
            f"is ignored: k is the constant of RRF, and fusion method {v.fusion.method!r} does not "  # type: ignore[union-attr]
            "use it (remove it, or use method 'rrf')"
        ),
    ),
    IgnoredBy(
        ("query_planning", "fusion", "k"),
        lambda v: _planning(v) is not None and _unfused(v, _planning(v).fusion.method),
        lambda v: (
            f"is ignored: k is the constant of RRF, and query fusion method "
            f"{_planning(v).fusion.method!r} does not use it (remove it, or use method 'rrf')"
        ),
    ),
    *(
        IgnoredBy(
            ("query_planning", key),
            lambda v: _planning(v) is not None and _planning(v).expansion is None,
            lambda v, key=key: (
                f"is ignored: {key} is a setting of RM3 feedback, and this variant has "
                "no 'expansion: rm3' (remove it, or add expansion: rm3)"
            ),
        )
        for key in _RM3
    ),
    *(
        IgnoredBy(
            ("query_planning", key),
            lambda v: _planning(v) is not None and _planning(v).variants is None,
            lambda v, key=key: (
                f"is ignored: without a rewrites file ('variants') each question has one "
                f"query text, so {key} is not used (remove it, or give query_planning.variants)"
            ),
        )
        for key in ("fusion", "include_original")
    ),
)


def _written(data: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        if not isinstance(data, Mapping):
            return None
        data = data.get(key)
    return data


def ignored_settings(written: Any, variant: VariantSettings) -> list[tuple[tuple[str, ...], str]]:
    """The settings written for ``variant`` (``written``: the control's keys, or a treatment's overrides)
    that it ignores, each with why; empty when every written setting has an effect."""
    found: list[tuple[tuple[str, ...], str]] = []
    for rule in IGNORED:
        inside_one_found = any(rule.path[: len(p)] == p for p, _ in found)  # a block, not its keys too
        if _written(written, rule.path) is not None and rule.applies(variant) and not inside_one_found:
            found.append((rule.path, rule.why(variant)))
    return found
