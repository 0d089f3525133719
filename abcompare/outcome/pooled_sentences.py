"""The verdict across several collections in words, from ``stats.pooled.pooled_test``'s two tables and
its settings: each treatment's pooled sentence (in two parts, for a view that sets the verdict in bold)
and its pooled non-inferiority line; the clauses they share with a comparison's sentences are
:mod:`abcompare.outcome.sentences`'."""

from __future__ import annotations

import math
from collections.abc import Sequence

import pandas as pd

from abcompare.core.settings import FamilySettings, PooledSettings
from abcompare.core.vocabulary import (
    BETTER,
    INCONCLUSIVE,
    NO_DIFFERENCE,
    PERMUTATION,
    WORSE,
    plural,
)  # fmt: skip
from abcompare.outcome.sentences import (
    _correction_note,
    _lower_bound,
    _non_inferiority_clause,
    _p_clause,
    format_change,
)
from abcompare.stats.intervals import interval_label

#: The order the per-collection verdicts are listed in a pooled sentence.
_COLLECTION_VERDICTS = (BETTER, WORSE, NO_DIFFERENCE, INCONCLUSIVE)


def _collections_clause(verdict: str, names: Sequence[str]) -> str:
    """``better on 3 (scifact, hr-docs, cisi)``, ``no significant difference on cranfield``."""
    listed = ", ".join(names)
    return f"{verdict} on {listed}" if len(names) == 1 else f"{verdict} on {len(names)} ({listed})"


def pooled_non_inferiority_sentence(pooled: pd.DataFrame, settings: PooledSettings, treatment: str) -> str:
    """The pooled non-inferiority test's line under the pooled verdict ('' without a margin), e.g.

    ``Non-inferiority across 4 collections: non-inferior on ndcg@10 at margin 0.01, p = 0.003 (one-sided
    stratified permutation test of pooled delta > -0.01).``
    """
    margin = settings.non_inferiority_margin
    rows = pooled[pooled["treatment"] == treatment]
    if margin is None or rows.empty or "non_inferiority" not in rows:
        return ""
    row = rows.iloc[0]
    note = _correction_note(settings.non_inferiority_correction, len(pooled), "treatments")
    test = f"one-sided stratified permutation test of pooled delta > {_lower_bound(margin)}"
    collections = plural(int(row["collections"]), "collection")
    return f"Non-inferiority across {collections}: {_non_inferiority_clause(row, margin, test, note)}"


def pooled_sentence(
    pooled: pd.DataFrame, per_collection: pd.DataFrame, settings: PooledSettings, treatment: str
) -> str:
    """The verdict across collections for one treatment (``stats.pooled.pooled_comparison``'s tables), e.g.

    ``Verdict hybrid across 4 collections: better on ndcg@10, +0.024 [0.011, 0.038], p = 0.001 (stratified
    permutation); better on 3 (scifact, hr-docs, cisi), no significant difference on cranfield;
    heterogeneity I² = 41%.``

    The p-value is the pooled one adjusted over the treatments (the note says how, for several). When
    some collections are significantly better and others significantly worse, the sentence says so first
    and lists the others after the pooled figures. I² is left out where it is undefined (one collection).
    """
    return "".join(pooled_sentence_parts(pooled, per_collection, settings, treatment))


def pooled_sentence_parts(
    pooled: pd.DataFrame, per_collection: pd.DataFrame, settings: PooledSettings, treatment: str
) -> tuple[str, str]:
    """:func:`pooled_sentence` in two parts: the verdict (through the pooled figures and p, which a view may
    set in bold, as :func:`verdict_parts` splits a comparison's) and what follows it."""
    rows = pooled[pooled["treatment"] == treatment]
    if rows.empty:
        return f"Verdict {treatment}: not compared across the collections", "."
    row = rows.iloc[0]
    mine = per_collection[per_collection["treatment"] == treatment]
    by_verdict = {
        v: list(mine.loc[mine["verdict"] == v, "collection"].astype(str)) for v in _COLLECTION_VERDICTS
    }
    change = format_change(float(row["delta"]), None, float(row["ci_low"]), float(row["ci_high"]))
    note = _correction_note(settings.correction, len(pooled), "treatments")
    test = settings.test
    p = f"{_p_clause(row['p_adjusted'])} ({test}{', ' + note if note else ''})"
    figures = f"{row['verdict']} on {row['metric']}, {change}, {p}"
    head = f"Verdict {treatment} across {plural(int(row['collections']), 'collection')}: "
    if bool(row["disagree"]):
        better, worse = (_collections_clause(v, by_verdict[v]) for v in (BETTER, WORSE))
        rest = [_collections_clause(v, by_verdict[v]) for v in (NO_DIFFERENCE, INCONCLUSIVE) if by_verdict[v]]
        verdict = f"{head}the collections disagree, {better} but {worse}; pooled, {figures}"
    else:
        rest = [_collections_clause(v, by_verdict[v]) for v in _COLLECTION_VERDICTS if by_verdict[v]]
        verdict = head + figures
    after = "; " + ", ".join(rest) if rest else ""
    i2 = row["i2"]
    if isinstance(i2, (int, float)) and math.isfinite(float(i2)):
        after += f"; heterogeneity I² = {float(i2):.0%}"
    if row.get("ci_agrees") in (False, 0) and row.get("ci_note"):  # at the edge: a tie, or Holm's step-down
        after += f"; its interval and verdict differ: {row['ci_note']}"
    return verdict, after + "."


def pooled_settings_line(settings: PooledSettings, family: FamilySettings, weighting: str) -> str:
    """How the pooled figures were made: the weighting, the test, the interval, the correction (and why the
    per-collection family's differs, when it does)."""
    weighed = "equal weight per collection" if weighting == "collection" else "each query equally"
    methods = sorted(set(settings.ci_method)) or ["percentile"]
    note = family.correction_note
    return (
        f"pooled: {weighed}; {settings.test} test, "
        f"{settings.n_resamples} resamples, seed {settings.seed}; "
        f"{_interval_phrase(settings)}, the stratified bootstrap's ({', '.join(methods)}) beside it "
        f"(boot_ci_*), alpha {settings.alpha}; "
        f"p adjusted over the treatments ({settings.correction}); random effects "
        f"{settings.meta_method}" + (f"; {note}" if note else "")
    )


def _interval_phrase(settings: PooledSettings) -> str:
    """The pooled row's interval: the stratified sign-flip test inverted at its verdict's level."""
    label = interval_label(settings.correction, PERMUTATION, float(settings.alpha))
    return label.replace("CI: ", "interval: ", 1)
