"""The settings a table was tested with, as frozen values carried beside it (scipy's result objects).

A comparison table's settings (:class:`ComparisonSettings`) and a pooled test's (:class:`PooledSettings`)
travel with the result types and the view, not in ``DataFrame.attrs``: pandas calls ``attrs``
experimental and drops them on ``concat``, ``merge`` and some slicing, so a setting carried there could
vanish between two stages without an error. :meth:`to_dict` is the stored form (the keys ``attrs`` held,
written beside the table in MLflow) and :meth:`from_dict` reads it back, from a fresh run or an old one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from typing import TYPE_CHECKING, Any

from abcompare.core.vocabulary import NO_CORRECTION, PERMUTATION, TESTS

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class ComparisonSettings:
    """How a comparison table was tested (``stats.comparison.paired_comparison``'s settings)."""

    alpha: float = 0.05
    n_resamples: int = 10_000
    seed: int = 0
    correction: str = "holm"
    primary: str = PERMUTATION  # the test whose adjusted p decides the verdict
    primary_metric: str = ""
    min_effect: float | None = None
    non_inferiority_margin: float | None = None
    zero_method: str = "pratt"
    tests: tuple[str, ...] = TESTS  # the tests run, in canonical order
    power: float = 0.8

    def to_dict(self) -> dict[str, Any]:
        """The stored form: each setting by name, ``tests`` as a list (JSON- and parquet-ready)."""
        data = asdict(self)
        data["tests"] = list(self.tests)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ComparisonSettings:
        """The settings from :meth:`to_dict`'s form (a stored table's; unknown keys are ignored, a missing
        one takes its default, as a run stored before it existed)."""
        values = _known(cls, data)
        if "tests" in values:
            values["tests"] = tuple(values["tests"])
        return cls(**values)


@dataclass(frozen=True)
class PooledSettings:
    """How a pooled test across collections was run (``stats.pooled.pooled_comparison``'s settings): the
    metric, the weighting, the test, alpha, the correction over the treatments, resamples and seed, each
    treatment's bootstrap interval method, the meta-analysis, and the non-inferiority margin and its
    correction (with a margin)."""

    metric: str = ""
    weighting: str = "collection"
    alpha: float = 0.05
    n_resamples: int = 10_000
    seed: int = 0
    correction: str = NO_CORRECTION
    test: str = "stratified permutation"
    ci_method: tuple[str, ...] = ()
    meta_method: str = ""
    min_effect: float | None = None
    collections: tuple[str, ...] = ()
    non_inferiority_margin: float | None = None
    non_inferiority_correction: str = NO_CORRECTION

    def to_dict(self) -> dict[str, Any]:
        """The stored form: each setting by name, the tuples as lists."""
        data = asdict(self)
        data["ci_method"], data["collections"] = list(self.ci_method), list(self.collections)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PooledSettings:
        """The settings from :meth:`to_dict`'s form (unknown keys ignored, missing ones at their default)."""
        values = _known(cls, data)
        for key in ("ci_method", "collections"):
            if key in values:
                values[key] = tuple(values[key] or ())
        return cls(**values)


@dataclass(frozen=True)
class FamilySettings:
    """How the per-collection table's family (every collection's primary test) was adjusted: the
    correction, the family's size and the note that says why it differs from the one asked for."""

    metric: str = ""
    alpha: float = 0.05
    correction: str = NO_CORRECTION
    family_size: int = 0
    correction_note: str = ""
    role: str = "primary"

    def to_dict(self) -> dict[str, Any]:
        """The stored form: each setting by name."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> FamilySettings:
        """The settings from :meth:`to_dict`'s form (unknown keys ignored, missing ones at their default)."""
        return cls(**_known(cls, data))


@dataclass(frozen=True)
class PairedComparison:
    """A comparison table and the settings it was tested with (scipy's result objects): one row per
    (treatment, metric), as ``stats.comparison.paired_comparison`` documents, and its settings."""

    table: pd.DataFrame
    settings: ComparisonSettings


@dataclass(frozen=True)
class PooledComparison:
    """A pooled test across collections (``stats.pooled.pooled_comparison``): the pooled table (one row
    per treatment), the per-collection table (one row per collection and treatment), and how each was
    made."""

    pooled: pd.DataFrame
    per_collection: pd.DataFrame
    settings: PooledSettings
    family: FamilySettings


def _known(cls: type, data: Mapping[str, Any]) -> dict[str, Any]:
    """The entries of ``data`` that name a field of the dataclass ``cls``."""
    names = {f.name for f in fields(cls)}
    return {key: value for key, value in data.items() if key in names}
