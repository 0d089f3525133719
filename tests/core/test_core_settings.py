"""The typed settings beside the tables (``core.settings``): their stored form both ways, a stored run's
form read back (old ones too), and that they cannot be changed once made."""

from __future__ import annotations

import dataclasses

import pytest

from abcompare.core.settings import ComparisonSettings, FamilySettings, PooledSettings

#: What a comparison table's ``attrs`` held when the settings travelled there (and what the stored parquet
#: files of those runs hold), written out by hand.
STORED = {
    "alpha": 0.05, "n_resamples": 500, "seed": 0, "correction": "holm", "primary": "permutation",
    "primary_metric": "ndcg@10", "min_effect": None, "non_inferiority_margin": None, "zero_method": "pratt",
    "tests": ["t", "permutation", "bootstrap", "wilcoxon"], "power": 0.8,
}  # fmt: skip


def test_a_stored_comparison_reads_back_as_the_same_settings_and_writes_the_same_form() -> None:
    settings = ComparisonSettings.from_dict(STORED)
    assert settings.tests == ("t", "permutation", "bootstrap", "wilcoxon") and settings.n_resamples == 500
    assert settings.to_dict() == STORED  # the stored form is the one attrs held, key for key


def test_an_older_stored_form_takes_the_defaults_and_ignores_what_it_does_not_know() -> None:
    older = {key: value for key, value in STORED.items() if key not in ("power", "zero_method")}
    settings = ComparisonSettings.from_dict({**older, "something_later": 1})
    assert (settings.power, settings.zero_method) == (0.8, "pratt")


def test_a_pooled_run_stored_before_the_margin_correction_was_always_written_reads_back() -> None:
    stored = {
        "metric": "ndcg@10", "weighting": "per_query", "alpha": 0.05, "n_resamples": 2000, "seed": 3,
        "correction": "holm", "test": "stratified permutation", "ci_method": ["BCa", "percentile"],
        "meta_method": "DerSimonian-Laird", "min_effect": None, "collections": ["a", "b"],
        "non_inferiority_margin": None,
    }  # fmt: skip
    settings = PooledSettings.from_dict(stored)
    assert settings.ci_method == ("BCa", "percentile") and settings.collections == ("a", "b")
    assert settings.non_inferiority_correction == "none"
    assert PooledSettings.from_dict(settings.to_dict()) == settings
    family = FamilySettings.from_dict({"correction": "holm", "family_size": 4, "correction_note": "", "x": 1})
    assert (family.correction, family.family_size) == ("holm", 4)


def test_settings_are_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        ComparisonSettings().alpha = 0.1  # type: ignore[misc]
