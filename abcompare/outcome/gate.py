"""A CI gate on a comparison's verdicts (``abcompare run --fail-on``): which treatments fail it.

``worse``: a treatment whose primary verdict is ``worse``; ``not-better``: one whose primary verdict is not
``better``; ``inferior``: one not shown non-inferior (``significance.non_inferiority_margin``). The line
that says so is :func:`abcompare.outcome.sentences.gate_sentence`.
"""

from __future__ import annotations

import pandas as pd

from abcompare.core.vocabulary import BETTER, NON_INFERIOR, PRIMARY, WORSE
from abcompare.outcome.sentences import GATE_WORDS, treatments

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
