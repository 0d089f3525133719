"""Random-effects meta-analysis of per-collection mean differences, through statsmodels' ``combine_effects``.

Each collection contributes its mean per-query difference and that mean's variance ``var(d, ddof=1) / n``.
The between-collection variance tau² is estimated by Paule-Mandel (statsmodels' default, ``"iterated"``):
it is the estimator Veroniki et al. (2016) and Langan et al. (2019) recommend over DerSimonian-Laird, which
underestimates tau² when heterogeneity is large, and statsmodels' own DerSimonian-Laird branch does not
truncate a negative tau² at zero (weights 1 / (v - |tau²|) would then be wrong). ``method="dl"`` gives
the DerSimonian-Laird estimate truncated at zero (the textbook estimator), which is then the fixed-effect
result. The interval and p-value are the usual normal (z) ones at scale 1; I² is Higgins & Thompson's
max(0, (Q - df) / Q), a share in [0, 1].
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats
from statsmodels.stats.meta_analysis import combine_effects

#: tau² estimators: Paule-Mandel (statsmodels' "iterated") and DerSimonian-Laird truncated at zero.
META_METHODS = {"pm": "iterated", "dl": "dl"}
#: The default tau² estimator.
DEFAULT_META_METHOD = "pm"
#: The estimators' names as people read them (the pooled table's ``attrs["meta_method"]``).
META_LABELS = {"pm": "Paule-Mandel", "dl": "DerSimonian-Laird"}


@dataclass(frozen=True)
class MetaAnalysis:
    """The random-effects summary of k effects: effect, interval, two-sided p, tau², I², Q and its p.

    Every field is NaN when the meta-analysis is undefined (a collection whose differences do not vary has
    variance 0 and so infinite weight); I² and Q's p are NaN with a single collection (Q has 0 df).
    """

    effect: float
    ci_low: float
    ci_high: float
    p_value: float
    tau2: float
    i2: float
    q: float
    q_p_value: float
    method: str
    k: int


def collection_effects(differences: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Each collection's mean difference and that mean's variance ``var(d, ddof=1) / n`` (1-D arrays)."""
    effects = np.array([float(np.mean(d)) for d in differences])
    variances = np.array([float(np.var(d, ddof=1)) / len(d) for d in differences])
    return effects, variances


def random_effects(
    effects: Sequence[float] | np.ndarray,
    variances: Sequence[float] | np.ndarray,
    *,
    alpha: float = 0.05,
    method: str = DEFAULT_META_METHOD,
) -> MetaAnalysis:
    """Random-effects combination of ``effects`` with within-collection ``variances`` (statsmodels).

    ``method`` is ``"pm"`` (Paule-Mandel, the default) or ``"dl"`` (DerSimonian-Laird, truncated at 0).
    """
    if method not in META_METHODS:
        raise ValueError(f"method must be one of {', '.join(META_METHODS)}, got {method!r}")
    eff = np.asarray(effects, dtype=np.float64)
    var = np.asarray(variances, dtype=np.float64)
    k = int(eff.size)
    if k == 0 or eff.shape != var.shape:
        raise ValueError("effects and variances must be non-empty and of the same length")
    if not (np.all(np.isfinite(eff)) and np.all(np.isfinite(var)) and np.all(var > 0)):
        nan = float("nan")
        return MetaAnalysis(nan, nan, nan, nan, nan, nan, nan, nan, method, k)
    with warnings.catch_warnings(), np.errstate(divide="ignore", invalid="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)  # k = 1: Q has 0 df, h² = 0 / 0
        res = combine_effects(eff, var, method_re=META_METHODS[method], use_t=False, alpha=alpha)
        _fe, ci_re, _fe_wls, _re_wls = res.conf_int(alpha=alpha, use_t=False)
    tau2 = float(res.tau2) if k > 1 else 0.0
    effect, sd = float(res.mean_effect_re), float(res.sd_eff_w_re)
    low, high = float(ci_re[0]), float(ci_re[1])
    if tau2 < 0:  # DerSimonian-Laird below zero: truncated, which is the fixed-effect model
        tau2 = 0.0
        effect, sd = float(res.mean_effect_fe), float(res.sd_eff_w_fe)
        _fe_low, _fe_high = _fe
        low, high = float(_fe_low), float(_fe_high)
    q = float(res.q)
    if k > 1:
        i2 = max(0.0, (q - (k - 1)) / q) if q > 0 else 0.0
        q_p = float(res.test_homogeneity().pvalue)
    else:
        i2, q_p, q = float("nan"), float("nan"), 0.0
    p = float(2.0 * stats.norm.sf(abs(effect) / sd)) if sd > 0 else float("nan")
    return MetaAnalysis(effect, low, high, p, tau2, i2, q, q_p, method, k)
