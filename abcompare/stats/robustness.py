"""Whether a verdict survives the missing judgments: the rule that says when a change of the mean delta
flips it, and the robustness row of each treatment from the range the unjudged hits allow.

**The flip rule.** The verdict is ``better``/``worse`` when the primary test's adjusted p is <= alpha
(:mod:`abcompare.stats.verdict`). Judgments move the per-query differences; re-running a resampling test
for every candidate judgment is out of budget, so the verdict's test is read on the mean delta with its
spread held fixed: the adjusted p as a two-sided normal test gives the standard error
``se = |delta| / z_{1-p/2}`` (the t test's ``sd / sqrt(n)`` when p is 0 or 1, or delta 0), and the test
crosses alpha where the mean delta is ``boundary = z_{1-alpha/2} * se``. That boundary agrees with the
verdict by construction: a significant delta lies beyond it, a non-significant one inside.

- ``better`` flips (to not significant) when the mean delta can fall below +boundary (at the boundary
  the test sits at p = alpha, still significant);
- ``worse`` flips when it can rise above -boundary;
- not significant (``no significant difference``, ``inconclusive``) flips when it can reach +boundary
  (to better) or -boundary (to worse). The interval-based split between the two non-significant verdicts
  (``min_effect``) is not a flip.

The verdict **holds** when the whole range of the mean delta stays on its side of the boundary (exact, as
the range is); otherwise the fewest judgments that flip it are found greedily (an achievable count).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import pandas as pd
from scipy import stats

from abcompare.core.settings import PairedComparison
from abcompare.core.vocabulary import BETTER, NO_DIFFERENCE, PRIMARY, WORSE

ROBUSTNESS_COLUMNS = (
    "treatment", "metric", "verdict", "delta", "unjudged_hits", "unjudged_min", "unjudged_max", "top_grade",
    "boundary", "holds", "flip_judgments", "flips_to", "relevant_only",
)  # fmt: skip
"""The robustness table's columns: one row per treatment, on the primary metric."""


#: How far past a significant verdict's boundary the mean delta must go to flip it: the boundary is where
#: the test sits at p = alpha (still significant), computed back from that p to within rounding.
PAST = 1e-12


class UnjudgedRangeLike(Protocol):
    """What the evaluation stage says about the unjudged hits of one treatment against the control."""

    n_unjudged: int
    top_grade: float
    low: float
    high: float

    def fewest_judgments(
        self, target: float, direction: int, *, beyond: bool = False
    ) -> list[tuple[str, str]] | None: ...


@dataclass(frozen=True)
class FlipRule:
    """Where the verdict flips: for each ``direction`` (+1: the mean delta rising, -1: falling) the mean
    delta at which it flips (``targets``) and the verdict it then becomes (``to``); ``beyond``: it must pass
    the target (a significant verdict, still significant at p = alpha), not only reach it."""

    boundary: float
    directions: tuple[int, ...]
    targets: tuple[float, ...]
    to: tuple[str, ...]
    beyond: bool = False

    def flips_at(self, mean: float, direction: int, target: float) -> bool:
        """Whether a mean delta of ``mean`` flips the verdict on the ``direction`` side."""
        past = direction * (mean - target)
        return past > PAST if self.beyond else past >= 0

    def holds(self, low: float, high: float) -> bool:
        """Whether no mean delta in ``[low, high]`` flips the verdict."""
        return not any(
            self.flips_at(high if direction > 0 else low, direction, target)
            for direction, target in zip(self.directions, self.targets, strict=True)
        )


def flip_rule(
    verdict: str, delta: float, p_adjusted: float, alpha: float, sd: float, n_queries: int
) -> FlipRule:
    """The verdict's flip rule (see the module docstring) from its primary row's figures."""
    z_alpha = float(stats.norm.isf(alpha / 2.0))
    if 0.0 < p_adjusted < 1.0 and delta != 0 and np.isfinite(delta):
        se = abs(delta) / float(stats.norm.isf(p_adjusted / 2.0))
    else:
        se = float(sd) / np.sqrt(max(n_queries, 1))
    boundary = z_alpha * se
    if verdict == BETTER:
        return FlipRule(boundary, (-1,), (boundary,), (NO_DIFFERENCE,), beyond=True)
    if verdict == WORSE:
        return FlipRule(boundary, (1,), (-boundary,), (NO_DIFFERENCE,), beyond=True)
    return FlipRule(boundary, (1, -1), (boundary, -boundary), (BETTER, WORSE))


def robustness_table(
    tested: PairedComparison, ranges: Mapping[str, UnjudgedRangeLike], *, relevant_only: bool = False
) -> pd.DataFrame:
    """One row per treatment with a range: the primary metric's delta, the range the unjudged hits allow,
    whether the verdict holds over it, and else the fewest judgments (found greedily) that flip it and to
    what. ``relevant_only``: the judgments list relevant items only (an unjudged hit then counts as not
    relevant by construction; the range says what it would take were some relevant)."""
    alpha, comparison = float(tested.settings.alpha), tested.table
    primary = comparison[comparison["role"] == PRIMARY].set_index("treatment")
    rows = []
    for name, span in ranges.items():
        if name not in primary.index:
            continue
        row = primary.loc[name]
        rule = flip_rule(
            str(row["verdict"]), float(row["delta"]), float(row["p_adjusted"]), alpha, float(row["sd_delta"]),
            int(row["n_queries"]),
        )  # fmt: skip
        # a range of one value (the same hits unjudged at the same places in both lists, as in identical
        # runs) cannot move the delta, whatever the boundary
        holds = span.low == span.high or rule.holds(span.low, span.high)
        fewest, to = None, None
        if not holds:
            for direction, target, verdict in zip(rule.directions, rule.targets, rule.to, strict=True):
                found = span.fewest_judgments(target, direction, beyond=rule.beyond)
                if found is not None and (fewest is None or len(found) < fewest):
                    fewest, to = len(found), verdict
        rows.append(
            {
                "treatment": name, "metric": row["metric"], "verdict": row["verdict"], "delta": row["delta"],
                "unjudged_hits": int(span.n_unjudged), "unjudged_min": span.low, "unjudged_max": span.high,
                "top_grade": span.top_grade, "boundary": rule.boundary, "holds": bool(holds),
                "flip_judgments": fewest, "flips_to": to, "relevant_only": bool(relevant_only),
            }
        )  # fmt: skip
    return pd.DataFrame(rows, columns=list(ROBUSTNESS_COLUMNS))
