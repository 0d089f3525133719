"""The sentences and the compact tables a person reads, written once from the comparison table.

The console, the MLflow description, ``--json`` and ``report.html`` call these functions; they consume only
a tested comparison (:class:`~abcompare.core.settings.PairedComparison`: the table's rows and the
settings it was tested with), a sweep's grid or a :class:`~abcompare.stats.tuning.TunedComparison`, and
return plain text. The orders and number formats they use are :mod:`abcompare.outcome.rows`'.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from abcompare.core.vocabulary import (
    BETTER,
    CORRECTION_LABELS,
    INCONCLUSIVE,
    NO_CORRECTION,
    NO_DIFFERENCE,
    PRIMARY,
    SECONDARY,
    SIGNIFICANT,
    WORSE,
    plural,
)
from abcompare.outcome.attribution_sentences import (
    ATTRIBUTION_PARTS,
    attribution_json,
    attribution_row,
    attribution_sentence,
)
from abcompare.outcome.cost_sentences import cost_json, cost_sentence
from abcompare.outcome.rows import (
    format_interval,
    format_p,
    grid_cells,
    grid_headers,
    grid_numeric,
    primary_first,
)
from abcompare.stats.intervals import interval_label
from abcompare.stats.verdict import FROM_CONFIG, FROM_CONTROL_MEAN

if TYPE_CHECKING:
    from abcompare.core.settings import PairedComparison
    from abcompare.stats.tuning import TunedComparison

#: Re-exported: the sentences' p format is the one of outcome.rows; the cost and attribution sentences
#: live in their own modules, and tests and the views import them from here too.
__all__ = [
    "ATTRIBUTION_PARTS", "attribution_json", "attribution_row", "attribution_sentence", "cost_json",
    "cost_sentence", "format_p",
]  # fmt: skip

# ------------------------------------------------------------------------------------------ numbers


def format_change(delta: float, relative: float | None, low: float, high: float) -> str:
    """``+0.031 (+4.5%) [0.008, 0.055]``: the difference, relative to the control, and its interval."""
    rel = f" ({relative:+.1%})" if relative is not None and math.isfinite(relative) else ""
    return f"{delta:+.3f}{rel} [{low:.3f}, {high:.3f}]"


def _p_clause(p: float) -> str:
    text = format_p(p)
    return f"p {text}" if text.startswith("<") else f"p = {text}"


# ------------------------------------------------------------------------------------------ selection
def treatments(table: pd.DataFrame) -> list[str]:
    """The treatments of the table, in table order."""
    return list(dict.fromkeys(table["treatment"]))


def sentence_treatments(table: pd.DataFrame, grid: pd.DataFrame | None) -> list[str]:
    """The treatments whose verdict sentence is shown, in table order: all of them, except a sweep's
    candidates whose primary verdict is not significant (the sweep's grid lists every candidate)."""
    swept = set(grid["candidate"]) if grid is not None else set()
    return [
        name
        for name in treatments(table)
        if name not in swept or _rows(table, name, PRIMARY)["verdict"].isin(SIGNIFICANT).any()
    ]


def _rows(table: pd.DataFrame, treatment: str, role: str) -> pd.DataFrame:
    return table[(table["treatment"] == treatment) & (table["role"] == role)]


def primary_verdict(table: pd.DataFrame, treatment: str) -> str:
    """The treatment's verdict on the primary metric (empty when the primary metric was not compared)."""
    rows = _rows(table, treatment, PRIMARY)
    return str(rows["verdict"].iloc[0]) if len(rows) else ""


def _correction_label(tested: PairedComparison) -> str:
    return _correction_name(tested.settings.correction)


def _correction_name(correction: str) -> str:
    """A correction as the sentences say it (``Holm``, ``max-T``; ``no`` for none)."""
    return CORRECTION_LABELS.get(correction, "no")


def _family_note(tested: PairedComparison, size: int, what: str) -> str:
    """How the p-value of a family of ``size`` was adjusted, e.g. ``Holm-adjusted over 3 treatments``
    (the comparison's correction)."""
    return _correction_note(tested.settings.correction, size, what)


def _correction_note(correction: str, size: int, what: str) -> str:
    """:func:`_family_note` for a family adjusted with ``correction``."""
    if size <= 1:
        return ""
    if correction == NO_CORRECTION:
        return f"not adjusted for the {size} {what}"
    return f"{_correction_name(correction)}-adjusted over {size} {what}"


# ------------------------------------------------------------------------------------------ sentences
def verdict_sentence(tested: PairedComparison, treatment: str) -> str:
    """The verdict on the primary metric for one treatment, e.g.

    ``Verdict hybrid-rrf: better on ndcg@10, +0.031 (+4.5%) [0.008, 0.055], p = 0.008.``

    A non-significant difference adds the minimum detectable effect, at the level the primary test was
    actually held to after its correction (and says why, if the difference is larger than it).
    """
    return "".join(verdict_parts(tested, treatment))


def verdict_parts(tested: PairedComparison, treatment: str) -> tuple[str, str]:
    """:func:`verdict_sentence` in two parts: the verdict itself (the treatment, the verdict, the change,
    its interval and p), which a view may set in bold, and what follows it (the detectable effect, ...)."""
    rows = _rows(tested.table, treatment, PRIMARY)
    if rows.empty:
        return f"Verdict {treatment}: the primary metric was not compared", "."
    row = rows.iloc[0]
    metric, verdict = row["metric"], row["verdict"]
    if bool(row.get("all_zero", False)):
        same = ": every query scored the same in both runs."
        return f"Verdict {treatment}: {NO_DIFFERENCE} on {metric}", same
    change = format_change(row["delta"], row["relative_delta"], row["ci_low"], row["ci_high"])
    note = _family_note(tested, int(row["family_size"]), "treatments")
    p = _p_clause(row["p_adjusted"]) + (f" ({note})" if note else "")
    head = f"Verdict {treatment}: {verdict} on {metric}, {change}, {p}"
    if verdict in SIGNIFICANT:
        return head, below_min_effect_clause(row) + "."
    min_effect = tested.settings.min_effect
    if verdict == INCONCLUSIVE:
        return head, (
            f": the interval includes both zero and the smallest effect you care about ({min_effect:g})."
        )
    return head, _mde_clause(tested, row) + _equivalence_clause(min_effect) + "."


def below_min_effect_clause(row: Mapping[str, Any]) -> str:
    """What a significant change below the smallest effect of interest adds to its verdict (the row's
    ``below_min_effect``, ``min_effect_used``, ``min_effect_source``: ``stats.verdict``), '' otherwise, e.g.
    ``; significant but below the minimum effect (0.01, significance.min_effect): this query set detects
    differences of about 0.002, and the interval rules out a gain of 0.01 or more``."""
    if not bool(row.get("below_min_effect", False)):
        return ""
    used, low, high = float(row["min_effect_used"]), float(row["ci_low"]), float(row["ci_high"])
    change, minimum = ("gain" if float(row["delta"]) > 0 else "loss"), _figure(used)
    ruled_out = max(abs(low), abs(high)) < used and low * high > 0
    interval = (
        f"the interval rules out a {change} of {minimum} or more"
        if ruled_out
        else f"the interval does not rule out a {change} of {minimum}"
    )
    mde = float(row.get("mde", math.nan))
    detects = (
        f"this query set detects differences of about {_figure(mde)}, and " if math.isfinite(mde) else ""
    )
    return (
        f"; significant but below the minimum effect ({minimum}, {row['min_effect_source']}): "
        f"{detects}{interval}"
    )


def _figure(value: float) -> str:
    """A small effect in three significant figures, without an exponent: ``0.00499``, ``0.000028``."""
    return np.format_float_positional(value, precision=3, unique=True, fractional=False, trim="-")


def verdict_run_name(table: pd.DataFrame, treatment: str) -> str:
    """A treatment run's name in MLflow once it is compared: the treatment, then its primary comparison
    with the control, e.g. ``dbsf · ndcg@10 -0.001 [-0.020, 0.015], p = 0.944 · no significant difference``.

    MLflow's compare view paints the runs' names on its first screen and its metrics several screens down
    (its fixed sections come first), so the name is where the primary delta, its interval and its
    adjusted p can be read beside the metric's name. The verdict comes last: a narrow column cuts it first.
    The name starts with the treatment, so a search on ``attributes.run_name LIKE 'dbsf%'`` still finds it;
    the run's ``abcompare.variant`` tag keeps the bare name. With no primary row, the bare name."""
    rows = _rows(table, treatment, PRIMARY)
    if rows.empty:
        return treatment
    row = rows.iloc[0]
    metric = row["metric"]
    if bool(row.get("all_zero", False)):
        return f"{treatment} · {metric} +0.000, every query the same · {NO_DIFFERENCE}"
    change = format_change(row["delta"], None, row["ci_low"], row["ci_high"])
    below = " (below the minimum effect)" if bool(row.get("below_min_effect", False)) else ""
    return f"{treatment} · {metric} {change}, {_p_clause(row['p_adjusted'])} · {row['verdict']}{below}"


def _mde_clause(tested: PairedComparison, row: pd.Series) -> str:
    """``; this query set detects differences of about 0.030 or more`` (+ why when |delta| exceeds it)."""
    mde, level = float(row["mde"]), float(row["alpha_effective"])
    settings = tested.settings
    power, alpha = settings.power, settings.alpha
    if not math.isfinite(mde):
        return (
            f"; with {settings.n_resamples} resamples no difference can reach alpha {alpha:g} "
            "after the correction (use more resamples)"
        )
    at = f"alpha {alpha:g}"
    if level < alpha:
        at = f"alpha {level:.2g} after {_correction_label(tested)} correction"
    clause = f"; this query set detects differences of about {mde:.3f} or more ({power:.0%} power at {at})"
    if abs(row["delta"]) >= mde > 0:
        test = settings.primary
        clause += (
            f". The difference is that large yet not significant: the detectable size is a normal "
            f"approximation, while the {test} test sees how the change is spread over the queries "
            f"({row['wins']} better, {row['losses']} worse, {row['ties']} unchanged)"
        )
    return clause


def _equivalence_clause(min_effect: float | None) -> str:
    if min_effect is None:
        return ""
    return f"; the interval rules out a change of {min_effect:g} or more either way"


def non_inferiority_sentence(tested: PairedComparison, treatment: str) -> str:
    """The non-inferiority test's line under the verdict ('' without a margin), e.g.

    ``Non-inferiority: non-inferior on ndcg@10 at margin 0.01, p = 0.012 (one-sided permutation test of
    delta > -0.01).``
    """
    margin = tested.settings.non_inferiority_margin
    rows = _rows(tested.table, treatment, PRIMARY)
    if margin is None or rows.empty or "non_inferiority" not in rows:
        return ""
    row = rows.iloc[0]
    note = _family_note(tested, int(row["family_size"]), "treatments")
    test = f"one-sided {tested.settings.primary} test of delta > {_lower_bound(margin)}"
    return f"Non-inferiority: {_non_inferiority_clause(row, margin, test, note)}"


def _lower_bound(margin: float) -> str:
    """The bound the non-inferiority test holds the delta above: ``-0.01``; a margin of 0 tests delta > 0,
    not "> -0"."""
    return f"{-margin:g}" if margin else "0"


def _non_inferiority_clause(row: Mapping[str, Any], margin: float, test: str, note: str) -> str:
    """``non-inferior on ndcg@10 at margin 0.01, p = 0.012 (<test>; <note>).``: a non-inferiority row's
    verdict, its adjusted p, the test and how the family was adjusted (a comparison's or a pooled one)."""
    return (
        f"{row['non_inferiority']} on {row['metric']} at margin {margin:g}, "
        f"{_p_clause(row['p_non_inferiority_adjusted'])} ({test}{'; ' + note if note else ''})."
    )


def secondary_summary(tested: PairedComparison, treatment: str) -> str:
    """``Secondary metrics: 12 of 14 better after max-T correction.`` ('' when there are none)."""
    rows = _rows(tested.table, treatment, SECONDARY)
    if rows.empty:
        return ""
    total = len(rows)
    counts = rows["verdict"].value_counts()
    parts = [f"{counts[v]} {v}" for v in (BETTER, WORSE, INCONCLUSIVE) if counts.get(v, 0)]
    if parts:
        parts[0] = parts[0].replace(" ", f" of {total} ", 1)
        text = ", ".join(parts)
    else:
        text = f"none of {total} differs significantly"
    size = int(rows["family_size"].iloc[0])
    if tested.settings.correction == NO_CORRECTION or size <= 1:
        how = "without correction" if size > 1 else ""
    else:
        how = f"after {_correction_label(tested)} correction"
        if size != total:
            how += f" over {size} comparisons"
    return f"Secondary metrics: {text}" + (f" {how}" if how else "") + _secondary_below(rows) + "."


def _secondary_below(rows: pd.DataFrame) -> str:
    """How many significant secondary rows fall short of the smallest effect of interest, e.g. ``; 3 of
    them significant but below the minimum effect (1% of the control's mean)`` ('' when none does)."""
    if "below_min_effect" not in rows:
        return ""
    below = rows[rows["below_min_effect"].astype(bool)]
    if below.empty:
        return ""
    source = str(below["min_effect_source"].iloc[0])
    minimum = (
        f"{_figure(float(below['min_effect_used'].iloc[0]))}, {source}" if source == FROM_CONFIG else source
    )
    return f"; {len(below)} of them significant but below the minimum effect ({minimum})"


def treatment_summary(tested: PairedComparison, treatment: str) -> str:
    """The verdict sentence and the secondary line of one treatment, as one paragraph."""
    parts = (verdict_sentence(tested, treatment), secondary_summary(tested, treatment))
    return " ".join(s for s in parts if s)


def settings_line(tested: PairedComparison) -> str:
    """What was tested how: queries, primary metric and test, the two families, alpha, B and seed."""
    table, settings = tested.table, tested.settings
    n_queries = int(table["n_queries"].iloc[0]) if len(table) else 0
    primary_size = int((table["role"] == PRIMARY).sum())
    secondary_size = int((table["role"] == SECONDARY).sum())
    correction = _correction_label(tested)
    primary_family = "no correction" if primary_size <= 1 else f"{correction} correction over {primary_size}"
    line = (
        f"paired tests on {plural(n_queries, 'query')}; primary metric {settings.primary_metric} "
        f"({settings.primary} test, {primary_family})"
    )
    if secondary_size:
        line += f"; secondary metrics: {correction} correction over {secondary_size} comparisons"
    line += f"; alpha {settings.alpha}, B = {settings.n_resamples}, seed {settings.seed}"
    if "ci_method" in table:
        line += "; " + interval_label(settings.correction, settings.primary, float(settings.alpha))
    return line


def summary_text(tested: PairedComparison) -> str:
    """Every treatment's paragraph, one per line."""
    return "\n".join(treatment_summary(tested, t) for t in treatments(tested.table))


# ------------------------------------------------------------------------------------------ robustness
def robustness_sentence(row: Mapping[str, Any]) -> str:
    """What the unjudged hits could still do to one treatment's verdict (a row of
    ``stats.robustness.robustness_table``), e.g. ``Unjudged hits: judged either way (not relevant, or
    relevant at grade 2), the 142 unjudged hits in either top 10 leave the ndcg@10 delta between -0.004 and
    +0.051; the verdict holds whatever the 142 unjudged hits turn out to be.``"""
    metric, hits = str(row["metric"]), int(row["unjudged_hits"])
    k = metric.rsplit("@", 1)[-1]
    if hits == 0:
        return (
            f"Unjudged hits: every hit in either top {k} is judged, so no missing judgment can move the "
            f"{metric} delta."
        )
    span = f"between {float(row['unjudged_min']):+.3f} and {float(row['unjudged_max']):+.3f}"
    counted = plural(hits, "unjudged hit")
    if float(row["unjudged_min"]) == float(row["unjudged_max"]):
        return (
            f"Unjudged hits: the {counted} in either top {k} count alike for both lists, so no judgment of "
            f"them can move the {metric} delta (it stays {float(row['unjudged_min']):+.3f})."
        )
    grade = f"grade {float(row['top_grade']):g}"
    if bool(row.get("relevant_only", False)):
        head = (
            f"Unjudged hits: the judgments list relevant items only, so the {counted} in either top {k} "
            f"count as not relevant; were any relevant ({grade}), the {metric} delta could lie "
            f"anywhere {span}"
        )
    else:
        head = (
            f"Unjudged hits: judged either way (not relevant, or relevant at {grade}), the {counted} in "
            f"either top {k} leave the {metric} delta {span}"
        )
    them = "it turns out to be" if hits == 1 else f"the {counted} turn out to be"
    if bool(row["holds"]):
        return f"{head}; the verdict holds whatever {them}."
    boundary = f"{float(row['boundary']):.3f}"
    fewest = row.get("flip_judgments")
    if fewest is None or (isinstance(fewest, float) and math.isnan(fewest)):
        return (
            f"{head}; that range reaches the verdict's boundary (a delta of ±{boundary}), so the missing "
            "judgments could flip it."
        )
    fewest = int(fewest)
    which = "it" if hits == 1 else (f"{fewest} of them" if fewest < hits else "all of them")
    return (
        f"{head}; judging {which} relevant could flip the verdict to {row['flips_to']} (it flips where the "
        f"delta {_crossing(str(row.get('verdict', '')), str(row['flips_to']), boundary)})."
    )


def _crossing(verdict: str, flips_to: str, boundary: str) -> str:
    """Where a verdict flips, one way: ``reaches +0.017`` (to better), ``reaches -0.017`` (to worse),
    ``falls below +0.017`` (from better), ``rises above -0.017`` (from worse)."""
    if flips_to == BETTER:
        return f"reaches +{boundary}"
    if flips_to == WORSE:
        return f"reaches -{boundary}"
    if verdict == BETTER:
        return f"falls below +{boundary}"
    if verdict == WORSE:
        return f"rises above -{boundary}"
    return f"crosses ±{boundary}"


def _about(n: float) -> str:
    """A count of queries as people read an estimate: two significant figures from 100 on (``1,900``)."""
    if n < 100:
        return f"{int(n):,}"
    digits = len(str(int(n))) - 2
    return f"{int(round(n, -digits)):,}"


def _observed(row: Mapping[str, Any]) -> str:
    """The observed delta as the verdict prints it (signed, 3 decimals), with its unrounded figure where
    the rounding hides what the count is computed from: ``-0.001, -0.00066 unrounded``."""
    delta = row.get("delta")  # signed; a table logged before it had the column has only |delta|
    delta = float(row["effect"]) if delta is None or pd.isna(delta) else float(delta)
    shown = f"{delta:+.3f}"
    return shown if abs(float(shown) - delta) < 0.05 * abs(delta) else f"{shown}, {delta:+.2g} unrounded"


def queries_needed_sentence(row: Mapping[str, Any]) -> str:
    """How many queries would detect the change of interest (a row of ``stats.power.queries_needed_table``),
    e.g. ``To detect 0.01 on ndcg@10 you would need about 1,900 queries (1,500–2,400 as the spread is
    itself estimated); you have 124.``"""
    metric, effect, have = str(row["metric"]), float(row["effect"]), int(row["n_queries"])
    if not math.isfinite(float(row["queries_needed"])):
        return (
            f"The observed {metric} delta is 0: there is no change to size a query set for (set "
            "significance.min_effect to ask how many queries a given change needs)."
        )
    observed = f"the observed change ({_observed(row)})"
    change = f"{effect:g}" if row["effect_source"] == "min_effect" else observed
    low, high = _about(float(row["queries_low"])), _about(float(row["queries_high"]))
    spread = f" ({low}–{high} as the spread is itself estimated)" if low != high else ""
    return (
        f"To detect {change} on {metric} you would need about {_about(float(row['queries_needed']))} "
        f"queries{spread}; you have {have:,}."
    )


def verdict_notes(
    table: pd.DataFrame, robustness: pd.DataFrame | None, queries_needed: pd.DataFrame | None
) -> dict[str, list[str]]:
    """The lines under each treatment's verdict: what the unjudged hits could do, and, when the primary
    verdict is not significant, how many queries would detect the change of interest."""
    notes: dict[str, list[str]] = {}
    for row in [] if "ci_agrees" not in table else primary_first(table).to_dict(orient="records"):
        if row["ci_agrees"] in (False, 0):  # the row's interval and verdict differ at the edge: say why
            interval = format_interval(row["ci_low"], row["ci_high"], 3)
            line = f"{row['metric']}: its interval {interval} and its verdict differ: {row['ci_note']}."
            notes.setdefault(str(row["treatment"]), []).append(line)
    for row in [] if robustness is None else robustness.to_dict(orient="records"):
        notes.setdefault(str(row["treatment"]), []).append(robustness_sentence(row))
    for row in [] if queries_needed is None else queries_needed.to_dict(orient="records"):
        if primary_verdict(table, str(row["treatment"])) not in SIGNIFICANT:
            notes.setdefault(str(row["treatment"]), []).append(queries_needed_sentence(row))
    return notes


# ------------------------------------------------------------------------------------------ table
_TABLE_COLUMNS: tuple[tuple[str, str, bool], ...] = (
    ("treatment", "treatment", False),
    ("metric", "metric", False),
    ("role", "role", False),
    ("control mean", "control_mean", True),
    ("treatment mean", "treatment_mean", True),
    ("delta", "delta", True),
    ("CI", "ci", True),
    ("p", "p_primary", True),
    ("p adj.", "p_adjusted", True),
    ("verdict", "verdict", False),
)


def _cell(row: pd.Series, key: str, digits: int) -> str:
    if key == "ci":
        return f"[{row['ci_low']:.{digits}f}, {row['ci_high']:.{digits}f}]"
    if key == "delta":
        return f"{row['delta']:+.{digits}f}"
    if key in ("p_primary", "p_adjusted"):
        return format_p(row[key])
    value = row[key]
    return f"{value:.{digits}f}" if isinstance(value, float) else str(value)


def markdown_table(table: pd.DataFrame, treatments: Sequence[str] | None = None, *, digits: int = 3) -> str:
    """The comparison as a compact markdown table (MLflow renders it as a table): rounded, cells padded so
    the source text lines up too.

    One row per (treatment, metric), the primary metric first within each treatment; ``treatments``
    restricts it to some treatments.
    """
    rows = table if treatments is None else table[table["treatment"].isin(list(treatments))]
    rows = primary_first(rows)
    cells = [[_cell(row, key, digits) for _, key, _ in _TABLE_COLUMNS] for _, row in rows.iterrows()]
    headers = [title for title, _, _ in _TABLE_COLUMNS]
    return _markdown(headers, cells, [numeric for _, _, numeric in _TABLE_COLUMNS])


def _markdown(headers: Sequence[str], cells: Sequence[Sequence[str]], right: Sequence[bool]) -> str:
    """A markdown table, its cells padded to their column's width; ``right`` columns right-aligned. A
    ``|`` in a cell (a name may hold one) is escaped, so it cannot split the cell."""
    cells = [[cell.replace("|", "\\|") for cell in row] for row in cells]
    widths = [max([len(h)] + [len(c[i]) for c in cells]) for i, h in enumerate(headers)]

    def line(values: Sequence[str]) -> str:
        padded = [v.rjust(w) if r else v.ljust(w) for v, w, r in zip(values, widths, right, strict=True)]
        return "| " + " | ".join(padded) + " |"

    rule = [("-" * (w + 1) + ":") if r else ("-" * (w + 2)) for w, r in zip(widths, right, strict=True)]
    return "\n".join([line(headers), "|" + "|".join(rule) + "|", *(line(c) for c in cells)])


# ------------------------------------------------------------------------------------------ tuning
def tuned_sentence(result: TunedComparison) -> str:
    """What tuning over the grid is worth on unseen queries, and which setting it chose most often, e.g.

    ``Tuning over this grid of 24 settings gains +0.012 ndcg@10 on unseen queries [0.003, 0.021],
    p = 0.004 (5-fold cross-validation); the setting chosen most often is fusion.k=30 (4 of 5 folds).``
    """
    significant = result.p_value <= result.alpha
    verb = ("gains" if result.delta >= 0 else "loses") if significant else "changes"
    interval = f"[{result.ci_low:.3f}, {result.ci_high:.3f}]"
    head = (
        f"Tuning over this grid of {len(result.candidates)} settings {verb} {result.delta:+.3f} "
        f"{result.metric} on unseen queries {interval}, {_p_clause(result.p_value)} "
        f"({result.folds}-fold cross-validation"
    )
    head += ")" if significant else f"; not significant at alpha {result.alpha:g})"
    chosen = result.most_chosen
    times = result.choices.count(chosen)
    return f"{head}; the setting chosen most often is {chosen} ({times} of {result.folds} folds)."


def as_json(tested: PairedComparison) -> dict[str, Any]:
    """The verdicts as plain data: per treatment its verdict, sentence and secondary line, and with a
    margin its non-inferiority test (``margin``, adjusted ``p``, ``verdict``, ``sentence``)."""
    table = tested.table
    out: dict[str, Any] = {}
    for name in treatments(table):
        out[name] = {
            "metric": tested.settings.primary_metric,
            "verdict": primary_verdict(table, name) or None,
            "sentence": verdict_sentence(tested, name),
            "secondary": secondary_summary(tested, name),
            **_min_effect_json(_rows(table, name, PRIMARY)),
        }
        sentence = non_inferiority_sentence(tested, name)
        if sentence:
            row = _rows(table, name, PRIMARY).iloc[0]
            out[name]["non_inferiority"] = {
                "margin": tested.settings.non_inferiority_margin,
                "p": float(row["p_non_inferiority_adjusted"]),
                "p_raw": float(row["p_non_inferiority"]),
                "verdict": row["non_inferiority"],
                "sentence": sentence,
            }
    return out


def _min_effect_json(rows: pd.DataFrame) -> dict[str, Any]:
    """Where it applies (a significant primary change below the smallest effect of interest), what
    ``--json`` adds to the verdict: ``below_min_effect``: ``{"min_effect": 0.01, "source": ...}``; nothing
    otherwise (every row's ``below_min_effect`` column is in ``comparison``)."""
    if rows.empty or not bool(rows.iloc[0].get("below_min_effect", False)):
        return {}
    row = rows.iloc[0]
    return {
        "below_min_effect": {"min_effect": float(row["min_effect_used"]), "source": row["min_effect_source"]}
    }


# ------------------------------------------------------------------------------------------ gate
#: A CI gate (``abcompare run --fail-on``), per value: what a treatment that fails it is, and what the
#: treatments are when none fails it (each followed by ``on <primary metric>``).
GATE_WORDS = {
    "worse": ("worse than the control", "no treatment is worse than the control"),
    "not-better": ("not better than the control", "every treatment is better than the control"),
    "inferior": ("not shown non-inferior", "every treatment is non-inferior"),
}


def gate_sentence(
    table: pd.DataFrame, fail_on: str, failing: Sequence[str], *, metric: str, margin: float | None
) -> str:
    """The gate's one line: which treatments fail it and why, or that none does, e.g. ``gate --fail-on
    worse failed: dbsf is worse than the control on ndcg@10.`` (``metric``: the gated verdict's metric as
    said, ``margin``: the non-inferiority margin, for ``inferior``)."""
    fails, passes = GATE_WORDS[fail_on]
    where = f" on {metric}"
    if fail_on == "inferior":
        where += f" at margin {margin:g}"
    where += _gate_minimum(table, fail_on)
    if not failing:
        return f"gate --fail-on {fail_on} passed: {passes}{where}{_ungated_small_gains(table, fail_on)}."
    if fail_on == "not-better":
        names = ", ".join(f"{name} ({_gate_reason(table, name)})" for name in failing)
    else:
        names = ", ".join(failing)
    verb = "is" if len(failing) == 1 else "are"
    return f"gate --fail-on {fail_on} failed: {names} {verb} {fails}{where}."


def _gate_reason(table: pd.DataFrame, name: str) -> str:
    """Why a treatment is not better, in the not-better gate's line: its verdict, or its gain when that is
    below the configured minimum effect (``better by +0.003``; the line ends with the minimum)."""
    rows = _rows(table, name, PRIMARY)
    if rows.empty:
        return "not compared"
    row = rows.iloc[0]
    if row["verdict"] == BETTER and bool(row.get("below_min_effect", False)):
        return f"better by +{_figure(float(row['delta']))}"
    return str(row["verdict"])


def _gate_minimum(table: pd.DataFrame, fail_on: str) -> str:
    """The minimum gain a not-better gate required: `` by at least the minimum effect 0.01`` when
    ``significance.min_effect`` is set ('' otherwise, and for the other gates)."""
    if fail_on != "not-better" or "min_effect_source" not in table:
        return ""
    rows = table[(table["role"] == PRIMARY) & (table["min_effect_source"] == FROM_CONFIG)]
    if rows.empty:
        return ""
    return f" by at least the minimum effect {_figure(float(rows['min_effect_used'].iloc[0]))}"


def _ungated_small_gains(table: pd.DataFrame, fail_on: str) -> str:
    """What a passing not-better gate adds without ``significance.min_effect``: the gains that pass though
    below 1% of the control's mean (the default reading, which the gate does not enforce)."""
    if fail_on != "not-better" or "below_min_effect" not in table:
        return ""
    rows = table[(table["role"] == PRIMARY) & (table["min_effect_source"] == FROM_CONTROL_MEAN)]
    small = rows[rows["below_min_effect"].astype(bool) & (rows["verdict"] == BETTER)]
    if small.empty:
        return ""
    gains = ", ".join(f"{row['treatment']} +{_figure(float(row['delta']))}" for _, row in small.iterrows())
    return (
        f"; not gated: gains below {FROM_CONTROL_MEAN} ({gains}); set significance.min_effect to require "
        "a minimum gain"
    )


def grid_frame(
    table: pd.DataFrame,
    settings: Mapping[str, Mapping[str, Any]],
    efficiency: Mapping[str, Mapping[str, float]] | None = None,
) -> pd.DataFrame:
    """A sweep's candidates as one table, best first: their settings (one column per setting path), the
    primary metric's control and candidate means, delta, interval, adjusted p and verdict, and their cost
    (``efficiency.*``), sorted by delta (descending)."""
    primary = table[table["role"] == PRIMARY].set_index("treatment")
    rows = []
    for name, values in settings.items():
        if name not in primary.index:
            continue
        row = primary.loc[name]
        out: dict[str, Any] = {"candidate": name, **dict(values)}
        for column in ("metric", "control_mean", "treatment_mean", "delta", "ci_low", "ci_high", "p_adjusted",
                       "verdict"):  # fmt: skip
            out[column] = row[column]
        out.update((efficiency or {}).get(name, {}))
        rows.append(out)
    grid = pd.DataFrame(rows)
    if grid.empty:
        return grid
    ordered = grid.sort_values(["delta", "candidate"], ascending=[False, True], kind="stable")
    return ordered.reset_index(drop=True)


# ------------------------------------------------------------------------------------------ sweeps
def sweep_sentence(grid: pd.DataFrame, tested: PairedComparison) -> str:
    """How a sweep's candidates fared on the primary metric, e.g. ``Sweep: 3 of 24 candidates better than
    the control on ndcg@10 after max-T correction, none worse; the largest difference is fusion.k=30,
    +0.012 (+1.5%).``"""
    if grid.empty:
        return "Sweep: no candidate was compared."
    total = len(grid)
    counts = grid["verdict"].value_counts()
    better, worse = int(counts.get(BETTER, 0)), int(counts.get(WORSE, 0))
    metric = grid["metric"].iloc[0]
    how = (
        f" after {_correction_label(tested)} correction"
        if total > 1 and _correction_label(tested) != "no"
        else ""
    )
    head = f"Sweep: {better} of {total} candidates better than the control on {metric}{how}"
    head += f", {worse} worse" if worse else ", none worse"
    best = grid.iloc[0]
    relative = best["delta"] / best["control_mean"] if best["control_mean"] else float("nan")
    rel = f" ({relative:+.1%})" if math.isfinite(relative) else ""
    return f"{head}; the largest difference is {best['candidate']}, {best['delta']:+.3f}{rel}."


def grid_markdown_table(grid: pd.DataFrame, settings: Sequence[str] = (), *, digits: int = 3) -> str:
    """A sweep's grid as a markdown table, best first; significant candidates are starred."""
    cells = [grid_cells(row, settings, digits) for row in grid.to_dict(orient="records")]
    return _markdown(grid_headers(settings), cells, grid_numeric(settings))
