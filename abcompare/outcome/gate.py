"""A CI gate on a comparison's verdicts (``abcompare run --fail-on``): which treatments fail it.

``worse``: a treatment whose primary verdict is ``worse``; ``not-better``: one whose primary verdict is not
``better``; ``inferior``: one not shown non-inferior (``significance.non_inferiority_margin``). The line
that says so is :func:`abcompare.outcome.sentences.gate_sentence`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from abcompare.core.errors import ConfigError
from abcompare.core.vocabulary import BETTER, NON_INFERIOR, PRIMARY, WORSE
from abcompare.outcome.sentences import GATE_WORDS, treatments
from abcompare.outcome.view import ExperimentView, PooledView

if TYPE_CHECKING:
    from abcompare.config import ExperimentConfig
    from abcompare.outcome.results import ComparisonResult

#: The values of ``--fail-on``, in the order the help lists them.
FAIL_ON: tuple[str, ...] = tuple(GATE_WORDS)
#: The value that needs the non-inferiority test.
INFERIOR = "inferior"


def fails_gate(row: pd.Series, fail_on: str) -> bool:
    """Whether one treatment's primary row fails the gate ``fail_on``."""
    if fail_on == "worse":
        return row["verdict"] == WORSE
    if fail_on == "not-better":
        return row["verdict"] != BETTER
    if fail_on == INFERIOR:
        return row.get("non_inferiority") != NON_INFERIOR
    raise ValueError(f"unknown gate {fail_on!r}; use one of {', '.join(FAIL_ON)}")


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


def gated_table(result: ComparisonResult) -> pd.DataFrame:
    """What ``--fail-on`` judges, read off the result's view: one collection's primary rows, or across several
    the pooled verdict of each treatment (one primary row each; a collection's own verdict is shown, not
    gated)."""
    view = ExperimentView.from_result(result)
    pooled = [_pooled_rows(section, len(view.collections)) for section in view.sections]
    (table,) = [*pooled, *(alone.comparison for alone in view.alone.values())]
    return table


def _pooled_rows(section: PooledView, collections: int) -> pd.DataFrame:
    """The pooled verdicts as the gate reads a comparison table: one primary row per treatment."""
    table = section.pooled.assign(role=PRIMARY)
    table.attrs = {
        **section.pooled.attrs,
        "primary_metric": f"{section.primary_metric} pooled across {collections} collections",
    }
    return table
