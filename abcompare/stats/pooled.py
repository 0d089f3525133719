"""One verdict across several collections: the pooled delta, its stratified tests, the per-collection family.

The queries are paired within a collection and independent across collections. The pooled delta is the
weighted mean of the collections' mean differences, sum_c W_c mean(d_c): equal weight per collection
(``collection``, W_c = 1 / C, the BEIR convention) or per query (``per_query``, W_c = n_c / N).

- p-value: the stratified sign-flip test. Under the null every query's difference is equally likely to
  have either sign, within its collection; the pooled statistic is then sum_i x_i with x_i = W_c d_i / n_c,
  so the test is :func:`~abcompare.stats.permutation.sign_flip_test` on the x_i (its exact-vs-Monte-Carlo
  threshold and its p rule, unchanged), queries whose differences are all zero left out (a zero has the
  same value under both signs, so the p-value is the same and the enumeration exact more often).
- interval (``ci_low``/``ci_high``): the stratified sign-flip test inverted at the level its verdict uses
  (:mod:`abcompare.stats.intervals`), so the pooled row's interval and verdict agree as a collection's
  rows do: ``delta +- c sqrt(n) sd(x)``, c the critical value of the studentized sum of the x_i under the
  same sign vectors as the p (max-T's simultaneous one over the treatments, else each treatment's own at
  its corrected level alpha_effective); |t| is monotone in |sum x|, so it excludes 0 exactly when the
  adjusted p is <= alpha (a tie at the critical value aside: ``ci_agrees``, ``ci_note``).
- beside it (``boot_ci_low``/``boot_ci_high``): the stratified bootstrap, queries resampled with replacement
  within each collection; BCa with the stratified jackknife's acceleration (influence
  W_c (d_i - mean_c) / n_c), the percentile interval where BCa is undefined, as ``stats.bootstrap`` does
  for one collection; unadjusted, at 1 - alpha.
- beside them, the random-effects meta-analysis of the collections' deltas (:mod:`.meta_analysis`).

Randomness: one ``Generator(PCG64(seed))`` per call, consumed first by the sign vectors (shared by all
treatments), then by the bootstrap's resamples (shared by all treatments, collection by collection within
each batch). With one collection and one treatment the draws are those of ``paired_comparison`` on the
primary metric alone, so its permutation p and interval are the same numbers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from abcompare.core.errors import StatisticsError
from abcompare.core.settings import (
    ComparisonSettings,
    FamilySettings,
    PairedComparison,
    PooledComparison,
    PooledSettings,
)
from abcompare.core.vocabulary import BETTER, CONTROL, HOLM, MAXT, NO_CORRECTION, PERMUTATION, PRIMARY, WORSE
from abcompare.stats._chunks import chunk_sizes, single_threaded_blas
from abcompare.stats.bootstrap import _RTOL, CountSampler, _bca
from abcompare.stats.comparison import check_test_settings, paired_test
from abcompare.stats.correction import adjust_pvalues, per_test_alpha
from abcompare.stats.flips import FamilyFlips, family_correction, family_sign_flips
from abcompare.stats.intervals import agreement, interval_note, verdict_interval
from abcompare.stats.maxt import max_t_sign_flip
from abcompare.stats.meta_analysis import DEFAULT_META_METHOD, META_LABELS, collection_effects, random_effects
from abcompare.stats.noninferiority import NonInferiorityResult, margin_problem, non_inferiority_test
from abcompare.stats.paired import constant_columns, paired_differences
from abcompare.stats.permutation import PermutationResult, sign_flip_test
from abcompare.stats.verdict import verdicts

COLLECTION = "collection"
PER_QUERY = "per_query"
#: How the pooled delta weighs the collections: equally (the BEIR convention) or by their queries.
WEIGHTINGS: tuple[str, ...] = (COLLECTION, PER_QUERY)
#: The columns of the two tables, in order.
POOLED_COLUMNS: tuple[str, ...] = (
    "treatment", "metric", "weighting", "collections", "n_queries", "delta", "ci_low", "ci_high",
    "p_value", "p_adjusted", "exact", "meta_effect", "meta_ci_low", "meta_ci_high", "meta_p_value",
    "tau2", "i2", "q", "q_p_value", "verdict", "better", "worse", "no_difference", "disagree",
    "meta_heaviest", "meta_heaviest_weight", "boot_ci_low", "boot_ci_high", "alpha_effective", "ci_method",
    "ci_agrees", "ci_note",
)  # fmt: skip
PER_COLLECTION_COLUMNS: tuple[str, ...] = (
    "collection", "treatment", "metric", "n_queries", "delta", "ci_low", "ci_high", "p_value",
    "p_adjusted", "verdict", "own_ci_low", "own_ci_high", "alpha_effective", "ci_method", "ci_agrees",
)  # fmt: skip


def pooling_weights(sizes: Sequence[int], weighting: str = COLLECTION) -> np.ndarray:
    """W_c per collection (summing to 1): 1 / C for ``collection``, n_c / N for ``per_query``."""
    n = np.asarray(sizes, dtype=np.float64)
    if weighting == COLLECTION:
        return np.full(n.size, 1.0 / n.size)
    if weighting == PER_QUERY:
        return n / n.sum()
    raise StatisticsError(
        f"unknown weighting {weighting!r}", field="weighting", hint=f"use one of {', '.join(WEIGHTINGS)}"
    )


def _stacked(differences: Sequence[np.ndarray], weights: np.ndarray) -> np.ndarray:
    """The x_i = W_c d_i / n_c of every query, collection after collection ((N, m) array)."""
    parts = []
    for d, w in zip(differences, weights, strict=True):
        d = np.asarray(d, dtype=np.float64)
        d = d[:, None] if d.ndim == 1 else d
        parts.append(d * (w / d.shape[0]))
    return np.vstack(parts)


def _changed_rows(x: np.ndarray) -> np.ndarray:
    """The queries with a non-zero difference in some column (the others do not move under flips); one
    zero row when none has (every p is then 1, from the two sign vectors of that row)."""
    changed = x[np.any(x != 0, axis=1)]
    return changed if len(changed) else x[:1]


def stratified_sign_flip_test(
    differences: Sequence[np.ndarray],
    weights: Sequence[float] | np.ndarray,
    n_resamples: int = 10_000,
    rng: np.random.Generator | None = None,
) -> PermutationResult:
    """Two-sided sign-flip test of sum_c W_c mean(d_c) = 0, signs flipped query by query within collections.

    ``differences`` holds each collection's (n_c,) or (n_c, m) differences; the columns share the sign
    vectors. ``statistic`` is the pooled delta; ``exact`` when every sign vector of the changed queries
    was enumerated (2^k <= n_resamples, k the queries with a non-zero difference), p = count / 2^k;
    otherwise p = (b + 1) / (B + 1), the rule of :func:`~abcompare.stats.permutation.sign_flip_test`.
    """
    x = _stacked(differences, np.asarray(weights, dtype=np.float64))
    flips = sign_flip_test(_changed_rows(x), n_resamples, rng)
    squeeze = all(np.ndim(d) == 1 for d in differences)
    delta = x.sum(axis=0)
    pvalue = np.atleast_1d(flips.pvalue)
    if squeeze:
        return PermutationResult(delta[0], pvalue[0], flips.n_resamples, flips.exact)
    return PermutationResult(delta, pvalue, flips.n_resamples, flips.exact)


def stratified_non_inferiority(
    differences: Sequence[np.ndarray],
    weights: Sequence[float] | np.ndarray,
    margin: float,
    *,
    correction: str,
    alpha: float,
    n_resamples: int = 10_000,
    rng: np.random.Generator | None = None,
) -> NonInferiorityResult:
    """One-sided test of sum_c W_c mean(d_c) > -margin, signs flipped query by query within collections.

    Each collection's differences are shifted by the margin (the pooled mean of d + margin is the pooled
    delta + margin, the weights summing to 1), and the one-sided sign-flip test of
    :func:`~abcompare.stats.noninferiority.non_inferiority_test` runs on x_i = W_c (d_i + margin) / n_c, so
    the one-sided p-value rule, the exact/Monte Carlo rule and the family's correction (``maxt``: one-sided
    max-T on the same flips) exist once. ``statistic`` is the pooled delta + margin per column."""
    w = np.asarray(weights, dtype=np.float64)
    x = _stacked([np.asarray(d, dtype=np.float64) + float(margin) for d in differences], w)
    result = non_inferiority_test(
        _changed_rows(x), 0.0, test=PERMUTATION, correction=correction, alpha=alpha,
        n_resamples=n_resamples, rng=rng,
    )  # fmt: skip
    return replace(result, margin=float(margin), statistic=np.atleast_1d(x.sum(axis=0)))


@dataclass(frozen=True)
class StratifiedBootstrap:
    """Per column: the pooled delta, its percentile and BCa intervals, which one is the interval
    (``ci_method``: "bca", or "percentile" where BCa is undefined), and the resampled pooled means."""

    statistic: np.ndarray
    pct_low: np.ndarray
    pct_high: np.ndarray
    bca_low: np.ndarray
    bca_high: np.ndarray
    ci_method: np.ndarray
    means: np.ndarray
    n_resamples: int


@single_threaded_blas()
def stratified_bootstrap(
    differences: Sequence[np.ndarray],
    weights: Sequence[float] | np.ndarray,
    n_resamples: int = 10_000,
    rng: np.random.Generator | None = None,
    alpha: float = 0.05,
) -> StratifiedBootstrap:
    """Resample queries with replacement within each collection; intervals at 1 - alpha for the pooled delta.

    Each resample's pooled mean is sum_c W_c mean(d*_c). The BCa acceleration is the stratified one
    (Davison & Hinkley 1997, 3.7): the skewness of the influence values W_c (d_i - mean_c) / n_c.
    """
    if n_resamples < 2:
        raise ValueError("n_resamples must be at least 2")
    rng = rng if rng is not None else np.random.default_rng()
    w = np.asarray(weights, dtype=np.float64)
    blocks = [np.asarray(d, dtype=np.float64) for d in differences]
    squeeze = all(b.ndim == 1 for b in blocks)
    blocks = [b[:, None] if b.ndim == 1 else b for b in blocks]
    means_c = [b.mean(axis=0) for b in blocks]
    delta = sum(wc * mc for wc, mc in zip(w, means_c, strict=True))
    centred = [np.where(constant_columns(b), 0.0, b - mc) for b, mc in zip(blocks, means_c, strict=True)]
    influence = np.vstack([wc * c / b.shape[0] for wc, c, b in zip(w, centred, blocks, strict=True)])
    constant = np.all(influence == 0, axis=0)
    tol = _RTOL * np.abs(influence).sum(axis=0)
    total = sum(b.shape[0] for b in blocks)
    m = blocks[0].shape[1]
    dev = np.empty((n_resamples, m))
    sizes = list(chunk_sizes(n_resamples, total))
    samplers = [CountSampler(sizes[0], b.shape[0]) for b in blocks]
    done = 0
    for rows in sizes:
        shift = np.zeros((rows, m))
        for wc, c, sampler in zip(w, centred, samplers, strict=True):
            shift += wc * ((sampler.draw(rng, rows) @ c) / c.shape[0])
        dev[done : done + rows] = shift
        done += rows
    means = delta + dev
    pct_low, pct_high = np.percentile(means, [100.0 * alpha / 2.0, 100.0 * (1.0 - alpha / 2.0)], axis=0)
    bca_low, bca_high = _bca(means, dev, influence, alpha, tol)
    pct_low, pct_high = np.where(constant, delta, pct_low), np.where(constant, delta, pct_high)
    bca_low, bca_high = np.where(constant, delta, bca_low), np.where(constant, delta, bca_high)
    fallback = ~(np.isfinite(bca_low) & np.isfinite(bca_high))
    ci_method = np.where(fallback, "percentile", "bca")
    bca_low, bca_high = np.where(fallback, pct_low, bca_low), np.where(fallback, pct_high, bca_high)
    fields = (delta, pct_low, pct_high, bca_low, bca_high, ci_method)
    if squeeze:
        return StratifiedBootstrap(*(f[0] for f in fields), means[:, 0], n_resamples)
    return StratifiedBootstrap(*fields, means, n_resamples)


def _treatment_names(per_query: Mapping[str, Mapping[str, pd.DataFrame]]) -> list[str]:
    """The treatments (every variant but the control, in the first collection's order), the same in each."""
    if not per_query:
        raise StatisticsError(
            "no collections to pool", field="per_query", hint="pass at least one collection"
        )
    names: list[str] | None = None
    for collection, variants in per_query.items():
        if CONTROL not in variants:
            raise StatisticsError(
                f"collection {collection!r} has no {CONTROL!r} variant",
                field=f"per_query.{collection}",
                hint="each collection maps 'control' and every treatment to its per-query metrics",
            )
        these = [str(v) for v in variants if v != CONTROL]
        if names is None:
            names = these
        elif sorted(these) != sorted(names):
            raise StatisticsError(
                f"collection {collection!r} has treatments {these}, the first collection {names}",
                field=f"per_query.{collection}",
                hint="run the same control and treatments on every collection",
            )
    if not names:
        raise StatisticsError("no treatment to compare", field="per_query", hint="add a treatment")
    return names


def _differences(
    collection: str, variants: Mapping[str, pd.DataFrame], treatment: str, metric: str
) -> np.ndarray:
    """One collection's differences of ``treatment`` on ``metric``; a problem names the collection."""
    try:
        pairs = paired_differences(variants[CONTROL], variants[treatment], [metric], treatment_name=treatment)
    except StatisticsError as exc:
        raise StatisticsError(
            f"collection {collection!r}: {exc.message}", field=f"per_query.{collection}", hint=exc.hint
        ) from exc
    return pairs.d[:, 0]


def _collection_rows(
    tested: PairedComparison, collection: str, treatments: Sequence[str], metric: str
) -> list[dict[str, object]]:
    """The primary-metric rows of one collection's comparison table, in treatment order."""
    comparison = tested.table
    rows = comparison[comparison["metric"] == metric].set_index("treatment")
    missing = [t for t in treatments if t not in rows.index]
    if missing:
        raise StatisticsError(
            f"the comparison of collection {collection!r} has no {metric!r} row for {', '.join(missing)}",
            field=f"comparisons.{collection}",
            hint="pass each collection's paired_comparison table on the same metric",
        )
    p_column = "p_primary" if "p_primary" in rows.columns else f"p_{tested.settings.primary}"
    return [
        {
            "collection": collection,
            "treatment": t,
            "metric": metric,
            "n_queries": int(rows.at[t, "n_queries"]),
            "delta": float(rows.at[t, "delta"]),
            "ci_low": float(rows.at[t, "ci_low"]),
            "ci_high": float(rows.at[t, "ci_high"]),
            "p_value": float(rows.at[t, p_column]),
        }
        for t in treatments
    ]


def _names(table: pd.DataFrame, treatment: str, verdict: Sequence[str] | None, exclude: bool = False) -> str:
    rows = table[table["treatment"] == treatment]
    chosen = rows["verdict"].isin(verdict or ())
    return ";".join(rows.loc[~chosen if exclude else chosen, "collection"].astype(str))


def pooled_comparison(
    per_query: Mapping[str, Mapping[str, pd.DataFrame]],
    *,
    metric: str,
    weighting: str = COLLECTION,
    correction: str,
    alpha: float,
    n_resamples: int,
    seed: int,
    comparisons: Mapping[str, pd.DataFrame | PairedComparison] | None = None,
    min_effect: float | None = None,
    non_inferiority_margin: float | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The pooled comparison of every treatment with the control on ``metric``, and the per-collection table.

    Parameters
    ----------
    per_query : mapping collection -> (mapping variant -> per-query metrics)
        Each collection's per-query tables (index ``query_id``), ``"control"`` and each treatment.
    metric : str
        The metric pooled (the primary metric).
    weighting : {'collection', 'per_query'}
        Equal weight per collection (the BEIR convention) or per query.
    correction : {'holm', 'bh', 'maxt', 'none'}
        For the pooled family (the treatments; ``maxt`` on the stratified sign flips) and the per-collection
        family (every (collection, treatment) primary test; ``maxt`` has no joint resampling across
        independent collections, so that family uses Holm, as the per-collection table's settings say).
    alpha, n_resamples, seed, min_effect
        As in :func:`~abcompare.stats.comparison.paired_comparison`.
    non_inferiority_margin : float, optional
        Adds the pooled non-inferiority test (:func:`stratified_non_inferiority`, one-sided, the treatments
        one family under ``correction``): columns ``p_non_inferiority``, ``p_non_inferiority_adjusted`` and
        ``non_inferiority``. Its sign flips are drawn after every other resample, so the other figures are
        the same with and without it.
    comparisons : mapping collection -> paired_comparison table (or ``paired_test`` result), optional
        Each collection's own table: its ``metric`` rows give the per-collection delta, interval and
        primary p-value, its settings the primary test (a table's ``attrs``, as ``paired_comparison``
        writes them). Without them each collection's comparison is run here (permutation primary).

    Returns
    -------
    (pooled, per_collection) : DataFrames
        ``pooled`` one row per treatment (:data:`POOLED_COLUMNS`), ``per_collection`` one row per
        (collection, treatment) (:data:`PER_COLLECTION_COLUMNS`); a copy of their settings in ``attrs``, for
        notebooks (:func:`pooled_test` returns them as typed objects).

    Examples
    --------
    Five queries that all improve: 2^5 sign vectors, of which only all-plus and all-minus reach the
    observed |sum|, so p = 2/32 however large the gain.

    >>> import pandas as pd
    >>> a = pd.DataFrame({"query_id": ["a1", "a2", "a3"], "ndcg@10": [0.2, 0.5, 0.1]})
    >>> b = pd.DataFrame({"query_id": ["b1", "b2"], "ndcg@10": [0.4, 0.3]})
    >>> up = lambda frame, gain: frame.assign(**{"ndcg@10": frame["ndcg@10"] + gain})
    >>> pooled, per_collection = pooled_comparison(
    ...     {"a": {"control": a, "new": up(a, 0.1)}, "b": {"control": b, "new": up(b, 0.2)}},
    ...     metric="ndcg@10", correction="holm", alpha=0.05, n_resamples=999, seed=0,
    ... )
    >>> row = pooled.iloc[0]
    >>> round(float(row["delta"]), 3), float(row["p_value"]), bool(row["exact"]), str(row["verdict"])
    (0.15, 0.0625, True, 'no significant difference')
    """
    tested = None
    if comparisons is not None:
        tested = {
            name: table if isinstance(table, PairedComparison)
            else PairedComparison(table, ComparisonSettings.from_dict(table.attrs))  # a public table's copy
            for name, table in comparisons.items()
        }  # fmt: skip
    result = pooled_test(
        per_query, metric=metric, weighting=weighting, correction=correction, alpha=alpha,
        n_resamples=n_resamples, seed=seed, comparisons=tested, min_effect=min_effect,
        non_inferiority_margin=non_inferiority_margin,
    )  # fmt: skip
    pooled, per_collection = result.pooled, result.per_collection
    pooled.attrs, per_collection.attrs = result.settings.to_dict(), result.family.to_dict()  # the copies
    return pooled, per_collection


def pooled_test(
    per_query: Mapping[str, Mapping[str, pd.DataFrame]],
    *,
    metric: str,
    weighting: str = COLLECTION,
    correction: str,
    alpha: float,
    n_resamples: int,
    seed: int,
    comparisons: Mapping[str, PairedComparison] | None = None,
    min_effect: float | None = None,
    non_inferiority_margin: float | None = None,
) -> PooledComparison:
    """:func:`pooled_comparison` as a result object: the two tables and how each was made
    (:class:`~abcompare.core.settings.PooledComparison`), not in ``DataFrame.attrs``; the runner calls
    this one."""
    correction = _check_pooled_settings(
        alpha, n_resamples, seed, correction, weighting, min_effect, non_inferiority_margin
    )
    treatments = _treatment_names(per_query)
    collections = [str(c) for c in per_query]
    differences = _collection_differences(per_query, treatments, metric)
    sizes = [d.shape[0] for d in differences]
    weights = pooling_weights(sizes, weighting)
    rng = np.random.Generator(np.random.PCG64(int(seed)))
    x = _changed_rows(_stacked(differences, weights))
    pooled_correction = family_correction(correction, len(treatments), x.shape[0])
    flips = family_sign_flips(x, pooled_correction, n_resamples=int(n_resamples), rng=rng)
    p_value, p_adjusted, exact = flips.pvalue, flips.pvalue_adjusted, flips.exact
    boot = stratified_bootstrap(differences, weights, int(n_resamples), rng, alpha)
    delta = np.atleast_1d(boot.statistic)
    interval = _pooled_interval(x, delta, flips, p_value, p_adjusted, pooled_correction, alpha,
                                int(n_resamples), int(seed))  # fmt: skip
    ci_low, ci_high = interval["ci_low"], interval["ci_high"]

    per_collection, family = _per_collection(
        per_query, treatments, metric, correction, alpha, n_resamples, seed, comparisons, min_effect
    )
    verdict = verdicts(delta, p_adjusted, ci_low, ci_high, alpha, min_effect)
    columns = {
        "delta": delta, "p_value": p_value, "p_adjusted": p_adjusted, "verdict": verdict, **interval,
        "boot_ci_low": np.atleast_1d(boot.bca_low), "boot_ci_high": np.atleast_1d(boot.bca_high),
    }  # fmt: skip
    rows = [
        _pooled_row(j, treatment, differences, per_collection, columns, metric=metric, weighting=weighting,
                    sizes=sizes, exact=bool(exact), alpha=alpha)
        for j, treatment in enumerate(treatments)
    ]  # fmt: skip
    pooled = pd.DataFrame(rows, columns=list(POOLED_COLUMNS))
    non_inferiority_correction = NO_CORRECTION
    if non_inferiority_margin is not None:  # drawn last: the figures above do not depend on it
        non_inferiority_correction = _add_non_inferiority(pooled, stratified_non_inferiority(
            differences, weights, float(non_inferiority_margin), correction=correction, alpha=alpha,
            n_resamples=int(n_resamples), rng=rng,
        ))  # fmt: skip
    settings = PooledSettings(
        metric=metric, weighting=weighting, alpha=alpha, n_resamples=int(n_resamples), seed=int(seed),
        correction=pooled_correction, test="stratified permutation",
        ci_method=tuple(str(m) for m in np.atleast_1d(boot.ci_method)),
        meta_method=META_LABELS[DEFAULT_META_METHOD], min_effect=min_effect, collections=tuple(collections),
        non_inferiority_margin=non_inferiority_margin, non_inferiority_correction=non_inferiority_correction,
    )  # fmt: skip
    return PooledComparison(pooled, per_collection, settings, family)


def _collection_differences(
    per_query: Mapping[str, Mapping[str, pd.DataFrame]], treatments: list[str], metric: str
) -> list[np.ndarray]:
    """Each collection's per-query differences treatment - control on ``metric``, one column per treatment."""
    return [
        np.column_stack([_differences(collection, variants, t, metric) for t in treatments])
        for collection, variants in per_query.items()
    ]


def _check_pooled_settings(
    alpha: float, n_resamples: int, seed: int, correction: str, weighting: str, min_effect: float | None,
    non_inferiority_margin: float | None,
) -> str:  # fmt: skip
    """The pooled comparison's settings checked (as the comparison's, plus the weighting and the margin);
    the canonical correction."""
    _tests, _primary, correction = check_test_settings(
        alpha, n_resamples, seed, correction, "permutation", None, "pratt", 0.8, min_effect
    )
    if weighting not in WEIGHTINGS:
        raise StatisticsError(
            f"unknown weighting {weighting!r}", field="weighting", hint=f"use one of {', '.join(WEIGHTINGS)}"
        )
    problem = margin_problem(non_inferiority_margin, PERMUTATION)
    if problem is not None:
        raise StatisticsError(problem, field="non_inferiority_margin")
    return correction


def _pooled_row(
    j: int, treatment: str, differences: Sequence[np.ndarray], per_collection: pd.DataFrame,
    columns: Mapping[str, np.ndarray], *, metric: str, weighting: str, sizes: Sequence[int], exact: bool,
    alpha: float,
) -> dict[str, object]:  # fmt: skip
    """Treatment ``j``'s row of the pooled table: the pooled test's figures (``columns``, one value per
    treatment), the random-effects meta-analysis of its collections, and which collections disagree."""
    effects, variances = collection_effects([d[:, j] for d in differences])
    meta = random_effects(effects, variances, alpha=alpha)
    names = [str(c) for c in per_collection.loc[per_collection["treatment"] == treatment, "collection"]]
    heaviest, share = random_effects_heaviest(variances, meta.tau2, names)
    better = _names(per_collection, treatment, [BETTER])
    worse = _names(per_collection, treatment, [WORSE])
    return {
        "treatment": treatment,
        "metric": metric,
        "weighting": weighting,
        "collections": len(differences),
        "n_queries": int(sum(sizes)),
        "delta": float(columns["delta"][j]),
        "ci_low": float(columns["ci_low"][j]),
        "ci_high": float(columns["ci_high"][j]),
        "p_value": float(columns["p_value"][j]),
        "p_adjusted": float(columns["p_adjusted"][j]),
        "exact": exact,
        "meta_effect": meta.effect,
        "meta_ci_low": meta.ci_low,
        "meta_ci_high": meta.ci_high,
        "meta_p_value": meta.p_value,
        "tau2": meta.tau2,
        "i2": meta.i2,
        "q": meta.q,
        "q_p_value": meta.q_p_value,
        "verdict": str(columns["verdict"][j]),
        "better": better,
        "worse": worse,
        "no_difference": _names(per_collection, treatment, [BETTER, WORSE], exclude=True),
        "disagree": bool(better and worse),
        "meta_heaviest": heaviest,
        "meta_heaviest_weight": share,
        **{key: _scalar(columns[key][j]) for key in _INTERVAL_KEYS},
    }


#: The pooled row's interval columns beyond ``ci_low``/``ci_high`` (:func:`_pooled_interval`).
_INTERVAL_KEYS = ("boot_ci_low", "boot_ci_high", "alpha_effective", "ci_method", "ci_agrees", "ci_note")


def _scalar(value: object) -> object:
    return value.item() if isinstance(value, np.generic) else value


def _pooled_interval(
    x: np.ndarray, delta: np.ndarray, flips: FamilyFlips, p_value: np.ndarray, p_adjusted: np.ndarray,
    correction: str, alpha: float, n_resamples: int, seed: int,
) -> dict[str, np.ndarray]:  # fmt: skip
    """Per treatment: the stratified sign-flip test inverted at its verdict's level (the module docstring),
    its level, method, and whether it agrees with the adjusted p (with why not, where it does not).

    ``x`` holds the weighted differences W_c d_i / n_c of the changed queries (one column per treatment),
    so ``delta`` is each column's sum. Under max-T the p's own sign vectors give the simultaneous critical
    value; otherwise each column's own null is drawn from ``PCG64(seed)`` as the p's were (the first draws
    of the comparison's generator), so the same vectors give the same raw p."""
    x = np.asarray(x, dtype=np.float64).reshape(x.shape[0], -1)
    n, m = x.shape
    p_value, p_adjusted = np.atleast_1d(p_value), np.atleast_1d(p_adjusted)
    if correction == MAXT and flips.maxt is not None:
        null, level = flips.maxt, np.full(m, float(alpha))
    else:
        null = None
        if n >= 2:
            rng = np.random.Generator(np.random.PCG64(seed))
            null = max_t_sign_flip(x, list(range(m)), n_resamples=n_resamples, rng=rng)
        level = per_test_alpha(p_value, correction, alpha)
    flat = constant_columns(x) if n >= 2 else np.ones(m, dtype=bool)
    se = np.where(flat, 0.0, np.sqrt(n) * (x.std(axis=0, ddof=1) if n >= 2 else np.zeros(m)))
    low, high, method = verdict_interval(delta, se, np.full(m, n), level, null=null)
    agrees = agreement(low, high, p_adjusted, alpha)
    excludes = (low > 0) | (high < 0)
    notes = [
        "" if ok else interval_note(bool(out), correction, PERMUTATION)
        for ok, out in zip(agrees, excludes, strict=True)
    ]
    return {
        "ci_low": low, "ci_high": high, "alpha_effective": np.asarray(level, dtype=np.float64),
        "ci_method": np.array([method] * m, dtype=object), "ci_agrees": agrees,
        "ci_note": np.array(notes, dtype=object),
    }  # fmt: skip


def random_effects_heaviest(variances: np.ndarray, tau2: float, names: Sequence[str]) -> tuple[str, float]:
    """The collection the random-effects estimate weights most, and its share of the weights
    1 / (v_i + tau²): why that estimate can sit away from the pooled one, which weights the collections
    equally (or by their queries). ``("", nan)`` where the meta-analysis is undefined."""
    v = np.asarray(variances, dtype=np.float64)
    if not (np.isfinite(tau2) and np.all(np.isfinite(v)) and np.all(v + tau2 > 0)) or len(names) != v.size:
        return "", float("nan")
    weights = 1.0 / (v + tau2)
    i = int(np.argmax(weights))
    return names[i], float(weights[i] / weights.sum())


def _add_non_inferiority(pooled: pd.DataFrame, test: NonInferiorityResult) -> str:
    """The pooled non-inferiority test's columns, added to the pooled table; its correction returned."""
    pooled["p_non_inferiority"] = np.atleast_1d(test.pvalue).astype(float)
    pooled["p_non_inferiority_adjusted"] = np.atleast_1d(test.pvalue_adjusted).astype(float)
    pooled["non_inferiority"] = [str(v) for v in np.atleast_1d(test.verdict)]
    return str(test.correction)


def _adjusted_intervals(
    frame: pd.DataFrame, per_query: Mapping[str, Mapping[str, pd.DataFrame]], metric: str, family: str,
    alpha: float, n_resamples: int, seed: int, comparisons: Mapping[str, PairedComparison] | None,
) -> None:  # fmt: skip
    """Each (collection, treatment) row's interval at the level its p adjusted over every collection is
    held to (:mod:`abcompare.stats.intervals`), so the per-collection table's interval and verdict agree;
    the collection's own interval (at its own family's level) stays in ``own_ci_low``/``own_ci_high``.

    A permutation row reads its critical value off the collection's own sign vectors: the comparison drew
    them first from ``PCG64(seed)``, one 64-bit word per 64 queries per vector whatever its columns, so
    the same seed gives the same vectors and the same raw p."""
    frame["own_ci_low"], frame["own_ci_high"] = frame["ci_low"], frame["ci_high"]
    level = per_test_alpha(frame["p_value"].to_numpy(dtype=np.float64), family, alpha)
    lows, highs, methods = [], [], []
    for i, row in enumerate(frame.itertuples(index=False)):
        tested = None if comparisons is None else comparisons.get(row.collection)
        primary = PERMUTATION if tested is None else tested.settings.primary
        d = _differences(str(row.collection), per_query[row.collection], str(row.treatment), metric)
        null = None
        if primary == PERMUTATION and d.size >= 2:
            rng = np.random.Generator(np.random.PCG64(int(seed)))
            null = max_t_sign_flip(d, n_resamples=int(n_resamples), rng=rng)
        flat = d.size < 2 or bool(constant_columns(d[:, None])[0])
        se = np.array([0.0 if flat else d.std(ddof=1) / np.sqrt(d.size)])
        low, high, method = verdict_interval(
            np.array([float(row.delta)]), se, np.array([d.size]), level[i : i + 1], null=null
        )
        lows.append(float(low[0]))
        highs.append(float(high[0]))
        methods.append(method)
    frame["ci_low"], frame["ci_high"], frame["ci_method"] = lows, highs, methods
    frame["alpha_effective"] = level
    frame["ci_agrees"] = agreement(frame["ci_low"], frame["ci_high"], frame["p_adjusted"], alpha)


def _per_collection(
    per_query: Mapping[str, Mapping[str, pd.DataFrame]],
    treatments: Sequence[str],
    metric: str,
    correction: str,
    alpha: float,
    n_resamples: int,
    seed: int,
    comparisons: Mapping[str, PairedComparison] | None,
    min_effect: float | None,
) -> tuple[pd.DataFrame, FamilySettings]:
    """One row per (collection, treatment), its primary p adjusted over all of them (Holm for max-T)."""
    rows: list[dict[str, object]] = []
    for collection, variants in per_query.items():
        tested = None if comparisons is None else comparisons.get(collection)
        if tested is None:
            tested = paired_test(
                variants[CONTROL],
                {t: variants[t] for t in treatments},
                primary_metric=metric,
                metrics=[metric],
                alpha=alpha,
                n_resamples=n_resamples,
                seed=seed,
                correction="none",
                tests=("permutation", "bootstrap"),
                min_effect=min_effect,
            )
        rows.extend(_collection_rows(tested, str(collection), treatments, metric))
    frame = pd.DataFrame(rows)
    family = HOLM if correction == MAXT else correction
    frame["p_adjusted"] = adjust_pvalues(frame["p_value"].to_numpy(dtype=np.float64), family)
    _adjusted_intervals(frame, per_query, metric, family, alpha, n_resamples, seed, comparisons)
    frame["verdict"] = verdicts(
        frame["delta"], frame["p_adjusted"], frame["ci_low"], frame["ci_high"], alpha, min_effect
    )
    frame = frame[list(PER_COLLECTION_COLUMNS)]
    note = "max-T has no joint resampling across independent collections: this family uses Holm"
    settings = FamilySettings(
        metric=metric, alpha=alpha, correction=family, family_size=len(frame),
        correction_note=note if correction == MAXT else "", role=PRIMARY,
    )  # fmt: skip
    return frame, settings
