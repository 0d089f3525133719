"""Example datasets shipped with abcompare, found by name (``example_path("hr-docs")``)."""

from __future__ import annotations

from pathlib import Path

from abcompare.core.errors import DataError

_HERE = Path(__file__).resolve().parent

EXAMPLES: dict[str, Path] = {
    "hr-docs": _HERE / "hr_docs",
}


def example_key(name: str) -> str:
    """The canonical form of an example's name (``HR_Docs`` -> ``hr-docs``)."""
    return name.strip().lower().replace("_", "-")


def example_path(name: str) -> Path:
    """The folder of the shipped example ``name`` (a BEIR layout: corpus.jsonl, queries.jsonl, qrels/)."""
    key = example_key(name)
    if key not in EXAMPLES:
        known = ", ".join(sorted(EXAMPLES))
        raise DataError(f"unknown example {name!r}", field="dataset.name", hint=f"known examples: {known}")
    return EXAMPLES[key]
