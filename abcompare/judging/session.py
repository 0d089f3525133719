"""Judging a list of (query, hit) pairs in the order given (``abcompare pool``'s decisive-first order, so a
bounded budget goes where it moves the verdict), at most ``max_pairs`` of them: the judged-pairs table, what
it cost, and how many pairs were left unjudged and why."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from abcompare.judging.base import Judge
from abcompare.judging.cost import JudgeCost

PAIR_COLUMNS = ("query_id", "key", "query_text", "hit_text")


@dataclass(frozen=True)
class JudgedPairs:
    """``labels``: one row per pair asked (``query_id, key, grade`` (nullable), ``source, judge,
    prompt_version, problem, cached``); ``over_budget`` pairs past ``max_pairs`` were not asked;
    ``cost`` is the judge's running cost after this batch."""

    labels: pd.DataFrame
    over_budget: int
    max_pairs: int
    cost: JudgeCost

    @property
    def judged(self) -> int:
        return int(self.labels["grade"].notna().sum())

    @property
    def unusable(self) -> int:
        return int(self.labels["grade"].isna().sum())

    def summary(self) -> str:
        """One line: how many pairs were judged, and how many not and why."""
        asked = len(self.labels)
        parts = [f"judged {self.judged} of {asked + self.over_budget} pairs"]
        if self.unusable:
            why = self.labels.loc[self.labels["grade"].isna(), "problem"].value_counts()
            reasons = ", ".join(f"{n} {problem}" for problem, n in why.items())
            parts.append(f"{self.unusable} answers unusable, counted as not judged ({reasons})")
        if self.over_budget:
            parts.append(f"{self.over_budget} not asked (judge.max_pairs = {self.max_pairs})")
        return "; ".join(parts)


def judge_pairs(judge: Judge, pairs: pd.DataFrame, max_pairs: int) -> JudgedPairs:
    """Ask ``judge`` for the first ``max_pairs`` rows of ``pairs`` (columns :data:`PAIR_COLUMNS`), in order.
    The judge sees only the two texts."""
    missing = [c for c in PAIR_COLUMNS if c not in pairs.columns]
    if missing:
        raise ValueError(f"pairs lack the columns {missing}")
    if max_pairs < 0:
        raise ValueError("max_pairs must be >= 0")
    asked = pairs.iloc[:max_pairs]
    rows = []
    for query_id, key, query_text, hit_text in asked[list(PAIR_COLUMNS)].itertuples(index=False):
        grade = judge.grade(str(query_text), str(hit_text))
        rows.append(
            {
                "query_id": query_id,
                "key": key,
                "grade": grade.value,
                "source": grade.source,
                "judge": grade.judge,
                "prompt_version": grade.prompt_version,
                "problem": grade.problem,
                "cached": grade.cached,
            }
        )
    labels = pd.DataFrame(
        rows,
        columns=["query_id", "key", "grade", "source", "judge", "prompt_version", "problem", "cached"],
    )
    labels["grade"] = labels["grade"].astype("Int64")
    return JudgedPairs(labels, len(pairs) - len(asked), max_pairs, judge.cost)
