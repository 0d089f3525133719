"""The judgment rules, written once: which queries are evaluated, which hits count as relevant, which
as judged, and what happens to hits nobody judged.

- **Evaluated queries**: every query with at least one judgment, of any grade (0 included). A query
  whose judgments all lie below the relevance threshold stays in the mean: it scores 0 on the binary
  measures, and in the trec convention its nDCG still uses the grades as gains (trec_eval, ``-c``).
- **Relevant**: ``grade >= relevance_threshold``, for precision, recall, F1, MRR and the ai4j nDCG.
  The trec nDCG uses every positive grade as its gain, whatever the threshold (trec_eval's ``-l``).
- **Judged**: a hit whose key has a judgment of any grade for its query. ``judged@k`` is the judged
  share of the top ``min(k, hits returned)`` (ir_measures' ``Judged@k``), 0 for an empty list.
- **One grade per judged id**: an id judged more than once for a query (two lines, or two ids that are
  equal once stripped) keeps its best grade.
- **Unjudged hits**: ``nonrelevant`` (default) counts them as non-relevant, as trec_eval does;
  ``condensed`` removes them before the metrics are computed (Sakai 2007, trec_eval ``-J``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from abcompare.core.vocabulary import CONTROL, parse_metric

UNJUDGED_POLICIES: tuple[str, ...] = ("nonrelevant", "condensed")
"""What unjudged hits are: non-relevant (the list as returned) or removed (the condensed list)."""


def is_relevant(grade: np.ndarray | float, relevance_threshold: float) -> np.ndarray | bool:
    """The binary relevance rule: a grade counts as relevant when it reaches the threshold."""
    return np.asarray(grade) >= relevance_threshold


def evaluated_queries(judged_query_codes: np.ndarray, n_queries: int) -> np.ndarray:
    """A mask over query codes ``0..n_queries-1``: True for every query with at least one judgment."""
    evaluated = np.zeros(n_queries, dtype=bool)
    evaluated[np.asarray(judged_query_codes, dtype=np.int64)] = True
    return evaluated


def best_grades(pair: np.ndarray, grade: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each distinct (query, id) ``pair`` code once, ascending, with the best of its grades."""
    pair = np.asarray(pair, dtype=np.int64)
    if pair.size == 0:
        return pair, np.zeros(0, dtype=np.float64)
    order = np.argsort(pair, kind="stable")  # judgments come grouped by query: nearly sorted already
    ordered = pair[order]
    first = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1])))
    return ordered[first], np.maximum.reduceat(np.asarray(grade, dtype=np.float64)[order], first)


#: A treatment whose judged@k falls this far below the control's gets a warning: its losses may be holes.
JUDGED_GAP = 0.05


@dataclass(frozen=True)
class JudgedCoverage:
    """How much of one variant's top ``cutoff`` was judged, over the whole query set."""

    variant: str
    cutoff: int
    mean_judged: float  # mean of judged@k over queries
    unjudged_hits: int  # hits in the top min(k, returned) of all queries that nobody judged


def judged_coverage(per_query: Mapping[str, pd.DataFrame], cutoff: int) -> dict[str, JudgedCoverage]:
    """Each variant's mean judged@k and count of unjudged hits in its top ``cutoff``, from its per-query
    table (columns ``judged@k`` and ``retrieved_count``)."""
    out = {}
    for name, frame in per_query.items():
        judged = frame[f"judged@{cutoff}"].to_numpy(dtype=np.float64)
        shown = np.minimum(cutoff, frame["retrieved_count"].to_numpy())
        unjudged = int(np.rint(((1.0 - judged) * shown).sum()))
        out[name] = JudgedCoverage(name, cutoff, float(judged.mean()) if judged.size else 0.0, unjudged)
    return out


def judged_gap_warnings(
    coverage: Mapping[str, JudgedCoverage], control: str = CONTROL, gap: float = JUDGED_GAP
) -> list[str]:
    """One sentence per treatment whose judged@k is at least ``gap`` below the control's: its losses may be
    missing judgments rather than worse results (the pooling bias of IR evaluation)."""
    base = coverage[control]
    sentences = []
    for name, cov in coverage.items():
        if name == control or base.mean_judged - cov.mean_judged < gap - 1e-12:
            continue
        k = cov.cutoff
        sentences.append(
            f"{name}: {base.mean_judged - cov.mean_judged:.0%} more of its top {k} is unjudged than the "
            f"control's (judged@{k} {cov.mean_judged:.2f} vs {base.mean_judged:.2f}; {cov.unjudged_hits} "
            f"unjudged hits against {base.unjudged_hits}); its losses may be missing judgments, not worse "
            "results: run `abcompare pool CONFIG`, judge the pooled hits and add the file to "
            "dataset.annotations (or set evaluation.unjudged: condensed)"
        )
    return sentences


def judgment_coverage(
    per_query: Mapping[str, pd.DataFrame], primary_metric: str
) -> tuple[dict[str, JudgedCoverage], list[str]]:
    """Each variant's judged@k at the primary metric's cutoff, and the warning sentences of the treatments
    whose lists are clearly less judged than the control's (their losses may be missing judgments)."""
    coverage = judged_coverage(per_query, parse_metric(primary_metric)[1])
    return coverage, judged_gap_warnings(coverage)


def attach_judged_means(comparison: pd.DataFrame, per_query: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """The comparison table with each row's ``control_judged`` and ``treatment_judged``: both variants'
    mean judged@k at the cutoff of the row's metric, so a gain or loss can be read beside its coverage."""
    cutoffs = [parse_metric(metric)[1] for metric in comparison["metric"]]
    control = per_query[CONTROL]
    out = comparison.copy()
    out["control_judged"] = [float(control[f"judged@{k}"].mean()) for k in cutoffs]
    out["treatment_judged"] = [
        float(per_query[t][f"judged@{k}"].mean())
        for t, k in zip(comparison["treatment"], cutoffs, strict=True)
    ]
    return out


def lists_relevant_only(annotations: pd.DataFrame, threshold: float) -> bool:
    """Whether the judgments list relevant items only (every row at or above the threshold): then an
    unjudged hit counts as not relevant by construction, which the judged@k line says."""
    grades = annotations.get("grade", pd.Series(dtype=float))
    return len(grades) > 0 and bool((grades >= threshold).all())
