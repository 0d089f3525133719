"""A CI gate on a comparison's verdicts (``abcompare run --fail-on``): which treatments fail it.

``worse``: a treatment whose primary verdict is ``worse``; ``not-better``: one whose primary verdict is not
``better``, or is ``better`` by less than ``significance.min_effect`` when one is set; ``inferior``: one
not shown non-inferior (``significance.non_inferiority_margin``). The line
that says so is :func:`abcompare.outcome.sentences.gate_sentence`. With ``answers.gate`` the verdict gated
is the answers' (its primary metric an answer metric), by the same rules.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from abcompare.core.errors import ConfigError
from abcompare.core.vocabulary import BETTER, NON_INFERIOR, PRIMARY, WORSE
from abcompare.outcome.sentences import GATE_WORDS, treatments
from abcompare.outcome.view import ComparisonView, ExperimentView, PooledView
from abcompare.stats.verdict import FROM_CONFIG, minimum_effect_columns

if TYPE_CHECKING:
    from abcompare.config import ExperimentConfig
    from abcompare.config.answers import AnswersSettings
    from abcompare.outcome.results import Comparison, ComparisonResult

#: The values of ``--fail-on``, in the order the help lists them.
FAIL_ON: tuple[str, ...] = tuple(GATE_WORDS)
#: The value that needs the non-inferiority test.
INFERIOR = "inferior"


def fails_gate(row: pd.Series, fail_on: str) -> bool:
    """Whether one treatment's primary row fails the gate ``fail_on``."""
    if fail_on == "worse":
        return row["verdict"] == WORSE
    if fail_on == "not-better":
        return row["verdict"] != BETTER or _short_of_min_effect(row)
    if fail_on == INFERIOR:
        return row.get("non_inferiority") != NON_INFERIOR
    raise ValueError(f"unknown gate {fail_on!r}; use one of {', '.join(FAIL_ON)}")


def _short_of_min_effect(row: pd.Series) -> bool:
    """A gain below the configured ``significance.min_effect`` (the row's ``below_min_effect`` with that
    source): not-better counts only a gain at least that large. The 1% default is not gated: it is a
    reading aid nobody asked the gate to enforce (the gate line names such gains)."""
    return bool(row.get("below_min_effect", False)) and row.get("min_effect_source") == FROM_CONFIG


def failing_treatments(table: pd.DataFrame, fail_on: str) -> list[str]:
    """The treatments (in table order) whose primary row fails the gate ``fail_on``; a treatment without a
    primary row fails every gate (nothing shows it passes)."""
    failing = []
    for name in treatments(table):
        rows = table[(table["treatment"] == name) & (table["role"] == PRIMARY)]
        if rows.empty or fails_gate(rows.iloc[0], fail_on):
            failing.append(name)
    return failing


def check_gate(fail_on: str | None) -> str | None:
    """``--fail-on`` as one of its values, or a located error (exit 2) before any work."""
    if fail_on is None:
        return None
    gate = fail_on.strip().lower()
    if gate not in FAIL_ON:
        raise ConfigError(f"unknown gate {fail_on!r} (use {', '.join(FAIL_ON)})", field="--fail-on")
    return gate


def check_gate_settings(gate: str | None, settings: ExperimentConfig, config: Path) -> None:
    """The gate's needs of the config, before any work: ``inferior`` needs a non-inferiority margin."""
    if gate == INFERIOR and settings.significance.non_inferiority_margin is None:
        raise ConfigError(
            "--fail-on inferior needs the non-inferiority test, and no margin is configured",
            file=config,
            field="significance.non_inferiority_margin",
            hint="set it in the config, e.g. 0.01 in the primary metric's units, or add "
            "--set significance.non_inferiority_margin=0.01",
        )
    if gate is not None and settings.answers is not None and settings.answers.gate and settings.datasets:
        raise ConfigError(
            "--fail-on cannot gate the answer verdict across several collections yet (each collection has "
            "its own answer verdict, none is pooled)",
            file=config,
            field="answers.gate",
            hint="gate one collection's answers, or set answers.gate=false to gate the pooled retrieval "
            "verdict",
        )


@dataclass(frozen=True)
class GatedTable:
    """What ``--fail-on`` judges: one primary row per treatment, the gated verdict's metric as the gate's
    line says it, and the non-inferiority margin (None without one)."""

    table: pd.DataFrame
    metric: str
    margin: float | None


def gated_table(result: ComparisonResult) -> GatedTable:
    """What ``--fail-on`` judges, read off the result's view: one collection's primary rows (with
    ``answers.gate``, the answer comparison's rows, its primary metric named as the answers'), or across
    several the pooled verdict of each treatment (one primary row each; a collection's own verdict is shown,
    not gated)."""
    view = ExperimentView.from_result(result)
    min_effect = result.config.significance.min_effect
    pooled = [_pooled_rows(section, len(view.collections), min_effect) for section in view.sections]
    answers = result.config.answers
    alone = [_gated_alone(result.collections[name], shown, answers) for name, shown in view.alone.items()]
    (gated,) = [*pooled, *alone]
    return gated


def _gated_alone(
    comparison: Comparison, alone: ComparisonView, settings: AnswersSettings | None
) -> GatedTable:
    """A collection shown alone: its comparison's rows, or with ``answers.gate`` its answers' rows."""
    if settings is not None and settings.gate and comparison.answers is not None:
        answered = comparison.answers.comparison.tested
        tested = answered.settings
        return GatedTable(
            answered.table, f"the answers' {tested.primary_metric}", tested.non_inferiority_margin
        )
    return GatedTable(alone.comparison, alone.primary_metric, alone.settings.non_inferiority_margin)


def _pooled_rows(section: PooledView, collections: int, min_effect: float | None = None) -> GatedTable:
    """The pooled verdicts as the gate reads a comparison table: one primary row per treatment, with the
    configured minimum effect read as a comparison's rows read it (a pooled row has no control mean, so
    no 1% default)."""
    pooled = section.pooled
    flags = minimum_effect_columns(pooled["verdict"].to_numpy(), pooled["delta"].to_numpy(), None, min_effect)
    table = pooled.assign(role=PRIMARY, **flags)
    metric = f"{section.primary_metric} pooled across {collections} collections"
    return GatedTable(table, metric, section.settings.non_inferiority_margin)
