"""What ships with abcompare: example datasets, found by name (``example_path("hr-docs")``), and configs.

The configs are the checkout's ``configs/`` folder itself (``CONFIGS``, a link to it here, so that a wheel
carries the very same files); ``abcompare.config.examples`` lists and finds them."""

from __future__ import annotations

from pathlib import Path

from abcompare.core.errors import DataError

_HERE = Path(__file__).resolve().parent

#: The shipped example configs (``configs/`` at the checkout's root; a link to it here, real files in a
#: wheel). Paths inside a config resolve against its own folder, so its run files travel with it.
CONFIGS = _HERE / "configs"

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
