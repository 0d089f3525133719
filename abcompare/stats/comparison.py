"""Compare each treatment with the control on every metric: result objects and the tidy comparison table.

The declared primary metric decides the verdict: its family is the treatments (one treatment, no
correction). Every other metric@k is secondary, corrected in its own family over all treatments.

Randomness: one ``numpy.random.Generator(PCG64(seed))`` is created per call and consumed in a fixed
order: first the permutation test's sign vectors, shared by every metric column of every treatment (one
sign per query, so max-T can adjust across them), then, for each treatment in the order given, the
bootstrap's resampled queries, shared by all metric columns of that treatment, and last, with a
non-inferiority margin and the permutation test primary, the one-sided test's sign vectors (so a margin
changes no other number). The same inputs and seed
give bit-identical output; adding a treatment or metric changes the draws seen by the ones after it. The
raw p-values do not depend on the correction.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from abcompare.core.errors import StatisticsError
from abcompare.core.settings import ComparisonSettings, PairedComparison
from abcompare.core.vocabulary import (
    BOOTSTRAP,
    CORRECTIONS,
    MAXT,
    PERMUTATION,
    PRIMARY,
    SECONDARY,
    TEST_ALIASES,
    TESTS,
    WILCOXON,
    ZERO_METHODS,
    default_primary_metric,
)
from abcompare.stats.bootstrap import BootstrapResult, paired_bootstrap
from abcompare.stats.correction import adjust_pvalues, canonical_correction, per_test_alpha
from abcompare.stats.flips import family_sign_flips
from abcompare.stats.intervals import add_verdict_intervals
from abcompare.stats.maxt import MaxTResult, max_t_sign_flip
from abcompare.stats.noninferiority import NON_INFERIORITY_TESTS, margin_problem, non_inferiority_test
from abcompare.stats.paired import PairedDifferences, constant_columns, paired_differences
from abcompare.stats.permutation import PermutationResult, sign_flip_test
from abcompare.stats.power import minimum_detectable_effect
from abcompare.stats.ttest import TTestResult, paired_ttest
from abcompare.stats.verdict import minimum_effect_columns, verdicts
from abcompare.stats.wilcoxon import WilcoxonResult, wilcoxon_test

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class TreatmentComparison:
    """Everything computed for one treatment against the control; ``None`` for a test that was not run."""

    name: str
    pairs: PairedDifferences
    alpha: float
    ttest: TTestResult
    permutation: PermutationResult | None
    bootstrap: BootstrapResult | None
    wilcoxon: WilcoxonResult | None

    def rows(self) -> list[dict[str, object]]:
        """One dict per metric with every column of the comparison table except the family-wide ones."""
        d = self.pairs.d
        n = self.pairs.n_queries
        control_mean = self.pairs.control.mean(axis=0)
        treatment_mean = self.pairs.treatment.mean(axis=0)
        delta = d.mean(axis=0)
        sd = np.where(constant_columns(d), 0.0, d.std(axis=0, ddof=1))
        nan = np.full(d.shape[1], np.nan)
        perm, boot, wil = self.permutation, self.bootstrap, self.wilcoxon
        out = []
        for j, metric in enumerate(self.pairs.metrics):
            if boot is not None:
                unadjusted = (boot.bca_low[j], boot.bca_high[j], str(boot.ci_method[j]))
            else:
                unadjusted = (self.ttest.ci_low[j], self.ttest.ci_high[j], "t")
            out.append(
                {
                    "treatment": self.name,
                    "metric": metric,
                    "n_queries": n,
                    "control_mean": control_mean[j],
                    "treatment_mean": treatment_mean[j],
                    "delta": delta[j],
                    "relative_delta": _ratio_or_infinity(delta[j], control_mean[j]),
                    "ci_low": nan[j],  # the interval at the verdict's level: stats.intervals, once adjusted
                    "ci_high": nan[j],
                    "ci_method": "",
                    "boot_ci_low": unadjusted[0],
                    "boot_ci_high": unadjusted[1],
                    "boot_ci_method": unadjusted[2],
                    "t_ci_low": self.ttest.ci_low[j],
                    "t_ci_high": self.ttest.ci_high[j],
                    "pct_ci_low": boot.pct_low[j] if boot is not None else nan[j],
                    "pct_ci_high": boot.pct_high[j] if boot is not None else nan[j],
                    "p_t": self.ttest.pvalue[j],
                    "p_permutation": perm.pvalue[j] if perm is not None else nan[j],
                    "p_bootstrap": boot.pvalue[j] if boot is not None else nan[j],
                    "p_wilcoxon": wil.pvalue[j] if wil is not None else nan[j],
                    "permutation_exact": bool(perm.exact) if perm is not None else False,
                    "effect_size": _ratio_or_infinity(delta[j], sd[j]),
                    "sd_delta": sd[j],
                    "wins": int((d[:, j] > 0).sum()),
                    "ties": int((d[:, j] == 0).sum()),
                    "losses": int((d[:, j] < 0).sum()),
                    "all_zero": bool(np.all(d[:, j] == 0)),
                }
            )
        return out


class _Progress:
    """Turns each resampling test's ``(done, of)`` reports into one running ``(step, total)`` count."""

    def __init__(self, callback: Progress, total: int) -> None:
        self.callback, self.total, self.offset = callback, total, 0
        callback(0, total)  # the whole count from the start: a bar never shows a total that later jumps

    def __call__(self, done: int, of: int) -> None:
        self.callback(self.offset + done, self.total)
        if done == of:
            self.offset += of

    def advance(self, steps: int) -> None:
        self.offset += steps
        self.callback(self.offset, self.total)


def _ratio_or_infinity(num: float, den: float) -> float:
    """num / den, with 0 / 0 = 0 (nothing changed) and x / 0 = +-inf (instead of NaN or an error)."""
    if num == 0:
        return 0.0
    if den == 0:
        return float(np.sign(num) * np.inf)
    return float(num / den)


@dataclass(frozen=True)
class _Draws:
    """What a test of one treatment may draw on: the generator, the settings, the progress callback."""

    rng: np.random.Generator
    alpha: float
    n_resamples: int
    zero_method: str
    progress: Progress | None


#: The tests a comparison may run beside the t test (always run: it is analytic), by name: how each is
#: computed from one treatment's differences ``d``. The permutation test's sign vectors are usually drawn
#: once for every treatment (``_joint_sign_flips``); its entry runs when a treatment is tested alone.
TEST_RUNNERS: dict[str, Callable[[np.ndarray, _Draws], object]] = {
    PERMUTATION: lambda d, at: sign_flip_test(d, at.n_resamples, at.rng, progress=at.progress),
    BOOTSTRAP: lambda d, at: paired_bootstrap(d, at.n_resamples, at.rng, at.alpha, progress=at.progress),
    WILCOXON: lambda d, at: wilcoxon_test(d, at.zero_method),
}

#: How many resamples each test draws: once for the whole table (``joint``) or once per treatment.
_JOINT, _PER_TREATMENT = "joint", "per treatment"
RESAMPLING: dict[str, str] = {PERMUTATION: _JOINT, BOOTSTRAP: _PER_TREATMENT}


def compare_treatment(
    pairs: PairedDifferences,
    rng: np.random.Generator,
    *,
    name: str = "treatment",
    alpha: float = 0.05,
    n_resamples: int = 10_000,
    tests: Sequence[str] = TESTS,
    zero_method: str = "pratt",
    permutation: PermutationResult | None = None,
    progress: Progress | None = None,
) -> TreatmentComparison:
    """Run the requested tests on one treatment's paired differences (all metric columns at once).

    The t interval is always computed (it is analytic); the others are run from :data:`TEST_RUNNERS`, in
    canonical order on the one generator. A ``permutation`` result computed beforehand (e.g. on sign
    vectors shared with other treatments) is used as is. ``progress(done, n_resamples)`` reports each
    resampling test's batches.
    """
    d = pairs.d
    draws = _Draws(rng, alpha, n_resamples, zero_method, progress)
    done: dict[str, object] = {PERMUTATION: permutation} if permutation is not None else {}
    for test in TESTS:
        if test in tests and test not in done and test in TEST_RUNNERS:
            done[test] = TEST_RUNNERS[test](d, draws)
    return TreatmentComparison(
        name, pairs, alpha, paired_ttest(d, alpha), done.get(PERMUTATION), done.get(BOOTSTRAP),
        done.get(WILCOXON),
    )  # type: ignore[arg-type]  # fmt: skip


def _resampling_steps(tests: Sequence[str], n_treatments: int, n_resamples: int) -> int:
    """The resamples the table's tests draw in all, by :data:`RESAMPLING`, plus one step per treatment
    for its analytic tests and rows."""
    steps = n_treatments
    for test in tests:
        how = RESAMPLING.get(test)
        steps += n_resamples * (1 if how == _JOINT else n_treatments if how == _PER_TREATMENT else 0)
    return steps


def _bad(field: str, message: str, hint: str) -> StatisticsError:
    """A test setting's error, located at its field."""
    return StatisticsError(message, field=field, hint=hint)


def _check_numbers(alpha, n_resamples, seed, power, min_effect) -> None:
    """The numeric settings' rules: alpha and power in (0, 1), integers n_resamples >= 2 and seed >= 0, a
    positive min_effect or None."""
    if not isinstance(alpha, (int, float)) or not 0.0 < alpha < 1.0:
        raise _bad("alpha", f"alpha must lie strictly between 0 and 1, got {alpha!r}", "e.g. alpha=0.05")
    if not isinstance(power, (int, float)) or not 0.0 < power < 1.0:
        raise _bad("power", f"power must lie strictly between 0 and 1, got {power!r}", "e.g. power=0.8")
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, (int, np.integer)) or n_resamples < 2:
        raise _bad("n_resamples", f"n_resamples must be an integer >= 2, got {n_resamples!r}", "e.g. 10000")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise _bad("seed", f"seed must be a non-negative integer, got {seed!r}", "e.g. seed=0")
    if min_effect is not None and (
        isinstance(min_effect, bool) or not isinstance(min_effect, (int, float)) or not min_effect > 0
    ):
        raise _bad(
            "min_effect",
            f"min_effect must be a positive number in metric units, got {min_effect!r}",
            "e.g. min_effect=0.01 (the smallest change you care about), or None",
        )


def check_test_settings(
    alpha,
    n_resamples,
    seed,
    correction,
    primary,
    tests,
    zero_method,
    power,
    min_effect,
    non_inferiority_margin=None,
) -> tuple[tuple[str, ...], str, str]:
    """Validate the test settings, the one place their rules live (``paired_comparison`` and the config's
    significance section both call it); return (tests, primary test, correction) in canonical names."""

    _check_numbers(alpha, n_resamples, seed, power, min_effect)
    if str(correction).lower() not in CORRECTIONS:
        raise _bad("correction", f"unknown correction {correction!r}", f"use one of {', '.join(CORRECTIONS)}")
    correction = canonical_correction(correction)
    if zero_method not in ZERO_METHODS:
        raise _bad(
            "zero_method", f"unknown zero_method {zero_method!r}", f"use one of {', '.join(ZERO_METHODS)}"
        )
    names = TESTS if tests is None else ([tests] if isinstance(tests, str) else list(tests))
    canonical = []
    for test in names:
        test = TEST_ALIASES.get(str(test).lower(), str(test).lower())
        if test not in TESTS:
            raise _bad("tests", f"unknown test {test!r}", f"use some of {', '.join(TESTS)}")
        if test not in canonical:
            canonical.append(test)
    if not canonical:
        raise _bad("tests", "tests= is empty", f"use some of {', '.join(TESTS)}")
    primary = TEST_ALIASES.get(str(primary).lower(), str(primary).lower())
    if primary not in TESTS:
        raise _bad("primary", f"unknown primary test {primary!r}", f"use one of {', '.join(TESTS)}")
    if primary not in canonical:
        raise _bad(
            "primary", f"the primary test {primary!r} is not among tests={canonical}", "add it to tests"
        )
    if correction == MAXT and primary != PERMUTATION:
        raise _bad(
            "correction",
            f"correction maxt adjusts the permutation test's p-values, but the primary test is {primary!r}",
            "use primary='permutation' with correction='maxt', or correction='holm'",
        )
    problem = margin_problem(non_inferiority_margin, primary)
    if problem is not None:
        raise _bad(
            "non_inferiority_margin",
            problem,
            f"e.g. non_inferiority_margin=0.01 (primary metric units) with primary "
            f"{' or '.join(NON_INFERIORITY_TESTS)}, or leave it out",
        )
    return tuple(t for t in TESTS if t in canonical), primary, correction


def _named_treatments(treatments: pd.DataFrame | Mapping[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    if isinstance(treatments, pd.DataFrame):
        return {"treatment": treatments}
    if not isinstance(treatments, Mapping) or not treatments:
        raise StatisticsError(
            "treatments must be a per-query metrics DataFrame or a non-empty mapping name -> DataFrame",
            field="treatments",
            hint="e.g. paired_comparison(control, {'bm25+rerank': frame})",
        )
    return {str(name): frame for name, frame in treatments.items()}


def _primary_metric(primary_metric: str | None, metrics: Sequence[str]) -> str:
    if primary_metric is None:
        return default_primary_metric(metrics)
    if str(primary_metric) not in metrics:
        raise StatisticsError(
            f"the primary metric {primary_metric!r} is not among the compared metrics ({', '.join(metrics)})",
            field="primary_metric",
            hint="name one of the compared metric columns, e.g. primary_metric='ndcg@10'",
        )
    return str(primary_metric)


def _joint_sign_flips(
    paired: Mapping[str, PairedDifferences],
    roles: Sequence[str],
    correction: str,
    n_resamples: int,
    rng: np.random.Generator,
    progress: Progress | None,
) -> tuple[dict[str, PermutationResult], MaxTResult | None, MaxTResult | None]:
    """The sign-flip test of every (treatment, metric) column on one set of sign vectors.

    Returns each treatment's permutation result, for ``maxt`` the max-T result whose families are the
    roles (primary, secondary) over all treatments, in the column order treatment by treatment, and the
    null the rows' intervals read their critical values from: that max-T result, or, for any other
    correction, each column's own sign-flip null on the same sign vectors (the same raw p-values as the
    plain test: :func:`~abcompare.stats.maxt.max_t_sign_flip` draws the sign vectors as it does).
    """
    d = np.hstack([pairs.d for pairs in paired.values()])
    n_metrics = len(roles)
    if correction != MAXT and d.shape[0] >= 2:
        own = max_t_sign_flip(d, np.arange(d.shape[1]), n_resamples=n_resamples, rng=rng, progress=progress)
        pvalue, used, exact, maxt, null = own.pvalue, own.n_resamples, own.exact, None, own
    else:
        flips = family_sign_flips(
            d, correction, families=list(roles) * len(paired), n_resamples=n_resamples, rng=rng,
            progress=progress,
        )  # fmt: skip
        pvalue, used, exact, maxt, null = flips.pvalue, flips.n_resamples, flips.exact, flips.maxt, flips.maxt
    mean = d.mean(axis=0)
    results = {}
    for i, name in enumerate(paired):
        block = slice(i * n_metrics, (i + 1) * n_metrics)
        results[name] = PermutationResult(mean[block], pvalue[block], used, exact)
    return results, maxt, null


def _adjust_by_family(
    table: pd.DataFrame, correction: str, alpha: float, maxt: MaxTResult | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per row: the p-value adjusted within its role's family, the family's size, and the level its raw
    p was held to (for the MDE)."""
    p = table["p_primary"].to_numpy(dtype=np.float64)
    roles = table["role"].to_numpy()
    adjusted = np.empty_like(p)
    level = np.empty_like(p)
    size = np.zeros(p.size, dtype=np.int64)
    for role in (PRIMARY, SECONDARY):
        rows = np.flatnonzero(roles == role)
        size[rows] = rows.size
        if maxt is not None:
            adjusted[rows] = maxt.pvalue_adjusted[rows]
            level[rows] = maxt.alpha_effective(alpha)[rows] if rows.size > 1 else alpha
        else:
            adjusted[rows] = adjust_pvalues(p[rows], correction)
            level[rows] = per_test_alpha(p[rows], correction, alpha)
    return adjusted, size, level


def _add_verdicts(
    table: pd.DataFrame, correction: str, alpha: float, maxt: MaxTResult | None, power: float,
    min_effect: float | None, primary: str = PERMUTATION, null: MaxTResult | None = None,
) -> None:  # fmt: skip
    """Each row's p-value adjusted within its role's family, the family's size, the level its raw p was
    held to, the MDE at that level, the interval at the verdict's level (:mod:`abcompare.stats.intervals`)
    and the verdict, added to the comparison table."""
    adjusted, family_size, level = _adjust_by_family(table, correction, alpha, maxt)
    table["p_adjusted"] = adjusted
    table["family_size"] = family_size
    table["alpha_effective"] = level
    n_queries = table["n_queries"].to_numpy()
    table["mde"] = minimum_detectable_effect(table["sd_delta"].to_numpy(), n_queries, level, power)
    add_verdict_intervals(table, correction, primary, alpha, null)
    table["verdict"] = verdicts(
        table["delta"], table["p_adjusted"], table["ci_low"], table["ci_high"], alpha, min_effect
    )
    for column, values in minimum_effect_columns(
        table["verdict"].to_numpy(), table["delta"].to_numpy(), table["control_mean"].to_numpy(), min_effect
    ).items():
        table[column] = values


def _add_non_inferiority(
    table: pd.DataFrame,
    paired: Mapping[str, PairedDifferences],
    primary_metric: str,
    margin: float,
    test: str,
    correction: str,
    alpha: float,
    n_resamples: int,
    rng: np.random.Generator,
    progress: Progress | None,
) -> None:
    """The non-inferiority columns, on the primary rows (treatment order): the one-sided p-value, the
    p-value adjusted over the treatments, and the verdict; the secondary rows get none."""
    column = next(iter(paired.values())).metrics.index(primary_metric)
    d = np.column_stack([pairs.d[:, column] for pairs in paired.values()])
    result = non_inferiority_test(
        d, margin, test=test, correction=correction, alpha=alpha, n_resamples=n_resamples, rng=rng
    )
    if progress is not None and test == PERMUTATION:
        progress.advance(n_resamples)
    rows = np.flatnonzero((table["role"] == PRIMARY).to_numpy())
    table["p_non_inferiority"] = np.nan
    table["p_non_inferiority_adjusted"] = np.nan
    table["non_inferiority"] = None
    table.iloc[rows, table.columns.get_loc("p_non_inferiority")] = result.pvalue
    table.iloc[rows, table.columns.get_loc("p_non_inferiority_adjusted")] = result.pvalue_adjusted
    table.iloc[rows, table.columns.get_loc("non_inferiority")] = result.verdict


def _treatment_rows(
    paired: Mapping[str, PairedDifferences], rng: np.random.Generator, alpha: float, n_resamples: int,
    tests: Sequence[str], zero_method: str, permutations: Mapping[str, PermutationResult],
    tracker: _Progress | None,
) -> list[dict[str, object]]:  # fmt: skip
    """Each treatment's rows, one per metric, its tests run in config order on the one generator."""
    rows: list[dict[str, object]] = []
    for name, pairs in paired.items():
        result = compare_treatment(
            pairs, rng, name=name, alpha=alpha, n_resamples=n_resamples, tests=tests,
            zero_method=zero_method, permutation=permutations.get(name), progress=tracker,
        )  # fmt: skip
        rows.extend(result.rows())
        if tracker is not None:
            tracker.advance(1)  # the analytic tests and the table rows of this treatment
    return rows


def paired_comparison(
    control: pd.DataFrame,
    treatments: pd.DataFrame | Mapping[str, pd.DataFrame],
    *,
    primary_metric: str | None = None,
    metrics: Sequence[str] | None = None,
    alpha: float = 0.05,
    n_resamples: int = 10_000,
    seed: int = 0,
    correction: str = "holm",
    primary: str = "permutation",
    tests: Sequence[str] | None = None,
    zero_method: str = "pratt",
    power: float = 0.8,
    min_effect: float | None = None,
    non_inferiority_margin: float | None = None,
    progress: Progress | None = None,
) -> pd.DataFrame:
    """One row per (treatment, metric): means, delta, intervals, raw and adjusted p-values, role, verdict.

    Parameters
    ----------
    control : DataFrame
        Per-query metrics of the control, indexed by ``query_id`` (``evaluate_run``'s table).
    treatments : DataFrame or mapping name -> DataFrame
        Per-query metrics of each treatment, paired with the control by ``query_id``.
    primary_metric : str, optional
        The metric the verdict is about. Default: ``ndcg@10`` when compared, else nDCG at the cutoff
        nearest 10, else the first metric's measure at the cutoff nearest 10.
    metrics : sequence of str, optional
        The columns to compare (default: every ``<measure>@<k>`` column of the control).
    alpha : float
        Significance level of every test and 1 - level of the intervals.
    n_resamples : int
        Sign vectors of the permutation test and resamples of the bootstrap.
    seed : int
        Seeds the one random generator of the call (see the module docstring for the order of draws).
    correction : {'holm', 'bh', 'maxt', 'none'}
        Applied within each family: the primary family (the primary metric of every treatment) and the
        secondary family (every other metric of every treatment). ``maxt`` is Westfall-Young single-step
        max-T on the permutation test's joint sign flips; it needs ``primary='permutation'``.
    primary : {'t', 'permutation', 'bootstrap', 'wilcoxon'}
        The test whose (adjusted) p-value decides the verdict.
    tests : sequence of str, optional
        The tests to run (default: all four).
    zero_method : {'pratt', 'wilcox', 'zsplit'}
        How Wilcoxon ranks queries whose score did not change.
    power : float
        Power of the minimum detectable effect.
    min_effect : float, optional
        The smallest effect of interest, in metric units: a non-significant row whose interval includes
        both 0 and an effect this large is ``inconclusive``; a ``better``/``worse`` row whose ``|delta|``
        is below it (below 1% of the control's mean when unset) has ``below_min_effect``
        (:func:`abcompare.stats.verdict.minimum_effect_columns`).
    non_inferiority_margin : float, optional
        Adds the one-sided test that each treatment is not worse than the control by more than this
        (primary metric units, >= 0) on the primary metric, by the primary test (``t`` or
        ``permutation``), adjusted over the treatments with ``correction``: columns
        ``p_non_inferiority``, ``p_non_inferiority_adjusted`` and ``non_inferiority`` (``non-inferior`` /
        ``not shown non-inferior``) on the primary rows (see :mod:`abcompare.stats.noninferiority`).
    progress : callable(step, total), optional
        Called as the resampling advances.

    Returns
    -------
    DataFrame
        One row per (treatment, metric); ``role`` is ``primary`` or ``secondary``, ``p_adjusted`` is
        adjusted within the row's role family of ``family_size`` rows, ``alpha_effective`` is the level
        the raw p was held to after that correction, ``mde`` is computed at that level, ``verdict`` is
        ``better``, ``worse``, ``no significant difference`` or ``inconclusive``. ``table.attrs``
        holds a copy of the settings for notebooks (:func:`paired_test` returns them as a typed object).
        See ``docs/statistics.md`` for every column.

    References
    ----------
    M. D. Smucker, J. Allan and B. Carterette, "A comparison of statistical significance tests for
    information retrieval evaluation", CIKM 2007 (the randomization test).
    B. Efron, "Better bootstrap confidence intervals", JASA 82, 1987 (BCa).
    P. H. Westfall and S. S. Young, *Resampling-Based Multiple Testing*, Wiley, 1993 (max-T).
    S. Holm, "A simple sequentially rejective multiple test procedure", Scand. J. Statist. 6, 1979.
    Y. Benjamini and Y. Hochberg, "Controlling the false discovery rate", JRSS B 57, 1995.

    Examples
    --------
    >>> import pandas as pd
    >>> ids = pd.Index([f"q{i}" for i in range(8)], name="query_id")
    >>> control = pd.DataFrame({"ndcg@10": [0.2, 0.5, 0.1, 0.7, 0.4, 0.3, 0.6, 0.2]}, index=ids)
    >>> table = paired_comparison(control, {"new": control + 0.1}, n_resamples=999)
    >>> row = table.iloc[0]
    >>> row["metric"], row["role"], float(row["p_permutation"]), row["verdict"]
    ('ndcg@10', 'primary', 0.0078125, 'better')
    """
    result = paired_test(
        control, treatments, primary_metric=primary_metric, metrics=metrics, alpha=alpha,
        n_resamples=n_resamples, seed=seed, correction=correction, primary=primary, tests=tests,
        zero_method=zero_method, power=power, min_effect=min_effect,
        non_inferiority_margin=non_inferiority_margin, progress=progress,
    )  # fmt: skip
    table = result.table
    table.attrs = result.settings.to_dict()  # the public table's copy; nothing in abcompare reads it
    return table


def paired_test(
    control: pd.DataFrame,
    treatments: pd.DataFrame | Mapping[str, pd.DataFrame],
    *,
    primary_metric: str | None = None,
    metrics: Sequence[str] | None = None,
    alpha: float = 0.05,
    n_resamples: int = 10_000,
    seed: int = 0,
    correction: str = "holm",
    primary: str = "permutation",
    tests: Sequence[str] | None = None,
    zero_method: str = "pratt",
    power: float = 0.8,
    min_effect: float | None = None,
    non_inferiority_margin: float | None = None,
    progress: Progress | None = None,
) -> PairedComparison:
    """:func:`paired_comparison` as a result object: the table and the :class:`ComparisonSettings` it was
    tested with, beside it (not in ``DataFrame.attrs``, which pandas drops on concat and merge); the
    runner, the pooled test and the answers stage call this one."""
    tests, primary, correction = check_test_settings(
        alpha, n_resamples, seed, correction, primary, tests, zero_method, power, min_effect,
        non_inferiority_margin,
    )  # fmt: skip
    named = _named_treatments(treatments)
    paired = {
        name: paired_differences(control, frame, metrics, treatment_name=name)
        for name, frame in named.items()
    }
    compared = next(iter(paired.values())).metrics
    primary_metric = _primary_metric(primary_metric, compared)
    roles = [PRIMARY if metric == primary_metric else SECONDARY for metric in compared]
    rng = np.random.Generator(np.random.PCG64(int(seed)))
    steps = _resampling_steps(tests, len(paired), int(n_resamples))
    steps += (non_inferiority_margin is not None and primary == PERMUTATION) * n_resamples
    tracker = _Progress(progress, steps) if progress else None
    permutations: dict[str, PermutationResult] = {}
    maxt = null = None
    if PERMUTATION in tests:
        permutations, maxt, null = _joint_sign_flips(
            paired, roles, correction, int(n_resamples), rng, tracker
        )
    table = pd.DataFrame(
        _treatment_rows(paired, rng, alpha, int(n_resamples), tests, zero_method, permutations, tracker)
    )
    table.insert(2, "role", roles * len(paired))
    table["p_primary"] = table[f"p_{primary}"]
    _add_verdicts(table, correction, alpha, maxt, power, min_effect, primary, null)
    if non_inferiority_margin is not None:
        _add_non_inferiority(
            table, paired, primary_metric, non_inferiority_margin, primary, correction, alpha,
            int(n_resamples), rng, tracker,
        )  # fmt: skip
    settings = ComparisonSettings(
        alpha=alpha, n_resamples=int(n_resamples), seed=int(seed), correction=correction, primary=primary,
        primary_metric=primary_metric, min_effect=min_effect, non_inferiority_margin=non_inferiority_margin,
        zero_method=zero_method, tests=tuple(tests), power=power,
    )  # fmt: skip
    return PairedComparison(table, settings)
