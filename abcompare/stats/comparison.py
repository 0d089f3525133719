"""Compare each treatment with the control on every metric: result objects and the tidy comparison table.

Randomness: one ``numpy.random.Generator(PCG64(seed))`` is created per call and consumed in a fixed
order: for each treatment (in the order given), the permutation test's sign flips, then the bootstrap's
resampled queries, each shared by all metric columns of that treatment. The same inputs and seed give
bit-identical output; adding a treatment or metric changes the draws seen by the ones after it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from abcompare.errors import StatisticsError
from abcompare.stats.bootstrap import BootstrapResult, paired_bootstrap
from abcompare.stats.correction import CORRECTIONS, adjust_pvalues
from abcompare.stats.paired import PairedDifferences, constant_columns, paired_differences
from abcompare.stats.permutation import PermutationResult, sign_flip_test
from abcompare.stats.power import minimum_detectable_effect
from abcompare.stats.ttest import TTestResult, paired_ttest
from abcompare.stats.wilcoxon import ZERO_METHODS, WilcoxonResult, wilcoxon_test

#: The four tests, by their column suffix (p_t, p_permutation, p_bootstrap, p_wilcoxon).
TESTS: tuple[str, ...] = ("t", "permutation", "bootstrap", "wilcoxon")
_TEST_ALIASES = {"ttest": "t", "t-test": "t", "sign-flip": "permutation", "randomization": "permutation"}

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
    mde: np.ndarray

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
                ci = (boot.bca_low[j], boot.bca_high[j], str(boot.ci_method[j]))
            else:
                ci = (self.ttest.ci_low[j], self.ttest.ci_high[j], "t")
            out.append(
                {
                    "treatment": self.name,
                    "metric": metric,
                    "n_queries": n,
                    "control_mean": control_mean[j],
                    "treatment_mean": treatment_mean[j],
                    "delta": delta[j],
                    "relative_delta": _ratio(delta[j], control_mean[j]),
                    "ci_low": ci[0],
                    "ci_high": ci[1],
                    "ci_method": ci[2],
                    "t_ci_low": self.ttest.ci_low[j],
                    "t_ci_high": self.ttest.ci_high[j],
                    "pct_ci_low": boot.pct_low[j] if boot is not None else nan[j],
                    "pct_ci_high": boot.pct_high[j] if boot is not None else nan[j],
                    "p_t": self.ttest.pvalue[j],
                    "p_permutation": perm.pvalue[j] if perm is not None else nan[j],
                    "p_bootstrap": boot.pvalue[j] if boot is not None else nan[j],
                    "p_wilcoxon": wil.pvalue[j] if wil is not None else nan[j],
                    "permutation_exact": bool(perm.exact) if perm is not None else False,
                    "effect_size": _ratio(delta[j], sd[j]),
                    "sd_delta": sd[j],
                    "wins": int((d[:, j] > 0).sum()),
                    "ties": int((d[:, j] == 0).sum()),
                    "losses": int((d[:, j] < 0).sum()),
                    "mde": float(self.mde[j]),
                    "all_zero": bool(np.all(d[:, j] == 0)),
                }
            )
        return out


class _Progress:
    """Turns each resampling test's ``(done, of)`` reports into one running ``(step, total)`` count."""

    def __init__(self, callback: Progress, total: int) -> None:
        self.callback, self.total, self.offset = callback, total, 0

    def __call__(self, done: int, of: int) -> None:
        self.callback(self.offset + done, self.total)
        if done == of:
            self.offset += of

    def advance(self, steps: int) -> None:
        self.offset += steps
        self.callback(self.offset, self.total)


def _ratio(num: float, den: float) -> float:
    """num / den, with 0 / 0 = 0 (nothing changed) and x / 0 = +-inf (instead of NaN or an error)."""
    if num == 0:
        return 0.0
    if den == 0:
        return float(np.sign(num) * np.inf)
    return float(num / den)


def compare_treatment(
    pairs: PairedDifferences,
    rng: np.random.Generator,
    *,
    name: str = "treatment",
    alpha: float = 0.05,
    n_resamples: int = 10_000,
    tests: Sequence[str] = TESTS,
    zero_method: str = "pratt",
    power: float = 0.8,
    progress: Progress | None = None,
) -> TreatmentComparison:
    """Run the requested tests on one treatment's paired differences (all metric columns at once).

    The t interval is always computed (it is analytic); ``progress(done, n_resamples)`` reports each
    resampling test's batches.
    """
    d = pairs.d
    perm = sign_flip_test(d, n_resamples, rng, progress=progress) if "permutation" in tests else None
    boot = paired_bootstrap(d, n_resamples, rng, alpha, progress=progress) if "bootstrap" in tests else None
    wil = wilcoxon_test(d, zero_method) if "wilcoxon" in tests else None
    sd = np.where(constant_columns(d), 0.0, d.std(axis=0, ddof=1))
    mde = minimum_detectable_effect(sd, pairs.n_queries, alpha, power)
    return TreatmentComparison(name, pairs, alpha, paired_ttest(d, alpha), perm, boot, wil, np.asarray(mde))


def _check_settings(alpha, n_resamples, seed, correction, primary, tests, zero_method, power) -> tuple:
    """Validate the settings a user passes; return (tests, primary) in canonical names."""

    def bad(field: str, message: str, hint: str) -> StatisticsError:
        return StatisticsError(message, field=field, hint=hint)

    if not isinstance(alpha, (int, float)) or not 0.0 < alpha < 1.0:
        raise bad("alpha", f"alpha must lie strictly between 0 and 1, got {alpha!r}", "e.g. alpha=0.05")
    if not isinstance(power, (int, float)) or not 0.0 < power < 1.0:
        raise bad("power", f"power must lie strictly between 0 and 1, got {power!r}", "e.g. power=0.8")
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, (int, np.integer)) or n_resamples < 2:
        raise bad("n_resamples", f"n_resamples must be an integer >= 2, got {n_resamples!r}", "e.g. 10000")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise bad("seed", f"seed must be a non-negative integer, got {seed!r}", "e.g. seed=0")
    if str(correction).lower() not in CORRECTIONS:
        raise bad("correction", f"unknown correction {correction!r}", f"use one of {', '.join(CORRECTIONS)}")
    if zero_method not in ZERO_METHODS:
        raise bad(
            "zero_method", f"unknown zero_method {zero_method!r}", f"use one of {', '.join(ZERO_METHODS)}"
        )
    names = TESTS if tests is None else ([tests] if isinstance(tests, str) else list(tests))
    canonical = []
    for test in names:
        test = _TEST_ALIASES.get(str(test).lower(), str(test).lower())
        if test not in TESTS:
            raise bad("tests", f"unknown test {test!r}", f"use some of {', '.join(TESTS)}")
        if test not in canonical:
            canonical.append(test)
    if not canonical:
        raise bad("tests", "tests= is empty", f"use some of {', '.join(TESTS)}")
    primary = _TEST_ALIASES.get(str(primary).lower(), str(primary).lower())
    if primary not in TESTS:
        raise bad("primary", f"unknown primary test {primary!r}", f"use one of {', '.join(TESTS)}")
    if primary not in canonical:
        raise bad(
            "primary", f"the primary test {primary!r} is not among tests={canonical}", "add it to tests"
        )
    return tuple(t for t in TESTS if t in canonical), primary


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


def paired_comparison(
    control: pd.DataFrame,
    treatments: pd.DataFrame | Mapping[str, pd.DataFrame],
    alpha: float = 0.05,
    n_resamples: int = 10_000,
    seed: int = 0,
    correction: str = "holm",
    primary: str = "permutation",
    tests: Sequence[str] | None = None,
    metrics: Sequence[str] | None = None,
    zero_method: str = "pratt",
    power: float = 0.8,
    progress: Progress | None = None,
) -> pd.DataFrame:
    """One row per (treatment, metric): means, delta, intervals, raw and adjusted p-values, verdict.

    Frames are per-query metrics indexed by ``query_id`` and paired by it. The primary test's p-values of
    the whole family (every metric of every treatment) are adjusted with ``correction``; ``verdict`` is
    "better"/"worse" when the adjusted p is <= alpha (by the sign of delta), else "no significant
    difference". ``progress(step, total)`` is called as the resampling advances.
    """
    tests, primary = _check_settings(alpha, n_resamples, seed, correction, primary, tests, zero_method, power)
    named = _named_treatments(treatments)
    paired = {
        name: paired_differences(control, frame, metrics, treatment_name=name)
        for name, frame in named.items()
    }
    rng = np.random.Generator(np.random.PCG64(int(seed)))
    resampling = sum(t in tests for t in ("permutation", "bootstrap"))
    tracker = _Progress(progress, len(paired) * (resampling * n_resamples + 1)) if progress else None
    rows: list[dict[str, object]] = []
    for name, pairs in paired.items():
        result = compare_treatment(
            pairs,
            rng,
            name=name,
            alpha=alpha,
            n_resamples=int(n_resamples),
            tests=tests,
            zero_method=zero_method,
            power=power,
            progress=tracker,
        )
        rows.extend(result.rows())
        if tracker is not None:
            tracker.advance(1)  # the analytic tests and the table rows of this treatment
    table = pd.DataFrame(rows)
    table["p_primary"] = table[f"p_{primary}"]
    table["p_adjusted"] = adjust_pvalues(table["p_primary"].to_numpy(), correction)
    significant = table["p_adjusted"] <= alpha
    table["verdict"] = np.select(
        [significant & (table["delta"] > 0), significant & (table["delta"] < 0)],
        ["better", "worse"],
        default="no significant difference",
    )
    table.attrs.update(
        alpha=alpha,
        n_resamples=int(n_resamples),
        seed=int(seed),
        correction=str(correction).lower(),
        primary=primary,
        zero_method=zero_method,
        tests=list(tests),
        power=power,
    )
    return table
