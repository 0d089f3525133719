"""The sentences and the compact tables a person reads, written once from the comparison table.

The console, the MLflow description, ``--json`` and ``report.html`` call these functions; they consume only
the comparison table (its rows and ``table.attrs``, the settings ``paired_comparison`` records), a sweep's
grid or a :class:`~abcompare.stats.tuning.TunedComparison`, and return plain text. The orders and number
formats they use are :mod:`abcompare.outcome.rows`'.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

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
    parse_metric,
    plural,
)
from abcompare.outcome.rows import (
    format_bytes,
    format_duration,
    format_p,
    format_ratio,
    grid_cells,
    grid_headers,
    grid_numeric,
    primary_first,
    verdict_lines,
)

if TYPE_CHECKING:
    from abcompare.stats.tuning import TunedComparison

__all__ = ["format_p"]  # re-exported: the sentences' p format is the one of outcome.rows

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


def _correction_label(table: pd.DataFrame) -> str:
    return _correction_name(str(table.attrs.get("correction", NO_CORRECTION)))


def _correction_name(correction: str) -> str:
    """A correction as the sentences say it (``Holm``, ``max-T``; ``no`` for none)."""
    return CORRECTION_LABELS.get(correction, "no")


def _family_note(table: pd.DataFrame, size: int, what: str) -> str:
    """How the p-value of a family of ``size`` was adjusted, e.g. ``Holm-adjusted over 3 treatments``
    (the table's ``attrs["correction"]``)."""
    return _correction_note(str(table.attrs.get("correction", NO_CORRECTION)), size, what)


def _correction_note(correction: str, size: int, what: str) -> str:
    """:func:`_family_note` for a family adjusted with ``correction``."""
    if size <= 1:
        return ""
    if correction == NO_CORRECTION:
        return f"not adjusted for the {size} {what}"
    return f"{_correction_name(correction)}-adjusted over {size} {what}"


# ------------------------------------------------------------------------------------------ sentences
def verdict_sentence(table: pd.DataFrame, treatment: str) -> str:
    """The verdict on the primary metric for one treatment, e.g.

    ``Verdict hybrid-rrf: better on ndcg@10, +0.031 (+4.5%) [0.008, 0.055], p = 0.008.``

    A non-significant difference adds the minimum detectable effect, at the level the primary test was
    actually held to after its correction (and says why, if the difference is larger than it).
    """
    return "".join(verdict_parts(table, treatment))


def verdict_parts(table: pd.DataFrame, treatment: str) -> tuple[str, str]:
    """:func:`verdict_sentence` in two parts: the verdict itself (the treatment, the verdict, the change,
    its interval and p), which a view may set in bold, and what follows it (the detectable effect, ...)."""
    rows = _rows(table, treatment, PRIMARY)
    if rows.empty:
        return f"Verdict {treatment}: the primary metric was not compared", "."
    row = rows.iloc[0]
    metric, verdict = row["metric"], row["verdict"]
    if bool(row.get("all_zero", False)):
        same = ": every query scored the same in both runs."
        return f"Verdict {treatment}: {NO_DIFFERENCE} on {metric}", same
    change = format_change(row["delta"], row["relative_delta"], row["ci_low"], row["ci_high"])
    note = _family_note(table, int(row["family_size"]), "treatments")
    p = _p_clause(row["p_adjusted"]) + (f" ({note})" if note else "")
    head = f"Verdict {treatment}: {verdict} on {metric}, {change}, {p}"
    if verdict in SIGNIFICANT:
        return head, "."
    min_effect = table.attrs.get("min_effect")
    if verdict == INCONCLUSIVE:
        return head, (
            f": the interval includes both zero and the smallest effect you care about ({min_effect:g})."
        )
    return head, _mde_clause(table, row) + _equivalence_clause(min_effect) + "."


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
    return f"{treatment} · {metric} {change}, {_p_clause(row['p_adjusted'])} · {row['verdict']}"


def _mde_clause(table: pd.DataFrame, row: pd.Series) -> str:
    """``; this query set detects differences of about 0.030 or more`` (+ why when |delta| exceeds it)."""
    mde, level = float(row["mde"]), float(row["alpha_effective"])
    power = table.attrs.get("power", 0.8)
    alpha = table.attrs.get("alpha", 0.05)
    if not math.isfinite(mde):
        return (
            f"; with {table.attrs.get('n_resamples')} resamples no difference can reach alpha {alpha:g} "
            "after the correction (use more resamples)"
        )
    at = f"alpha {alpha:g}"
    if level < alpha:
        at = f"alpha {level:.2g} after {_correction_label(table)} correction"
    clause = f"; this query set detects differences of about {mde:.3f} or more ({power:.0%} power at {at})"
    if abs(row["delta"]) >= mde > 0:
        test = table.attrs.get("primary", "primary")
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


def non_inferiority_sentence(table: pd.DataFrame, treatment: str) -> str:
    """The non-inferiority test's line under the verdict ('' without a margin), e.g.

    ``Non-inferiority: non-inferior on ndcg@10 at margin 0.01, p = 0.012 (one-sided permutation test of
    delta > -0.01).``
    """
    margin = table.attrs.get("non_inferiority_margin")
    rows = _rows(table, treatment, PRIMARY)
    if margin is None or rows.empty or "non_inferiority" not in rows:
        return ""
    row = rows.iloc[0]
    note = _family_note(table, int(row["family_size"]), "treatments")
    test = f"one-sided {table.attrs.get('primary', 'primary')} test of delta > {_lower_bound(margin)}"
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


def secondary_summary(table: pd.DataFrame, treatment: str) -> str:
    """``Secondary metrics: 12 of 14 better after max-T correction.`` ('' when there are none)."""
    rows = _rows(table, treatment, SECONDARY)
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
    if table.attrs.get("correction", NO_CORRECTION) == NO_CORRECTION or size <= 1:
        how = "without correction" if size > 1 else ""
    else:
        how = f"after {_correction_label(table)} correction"
        if size != total:
            how += f" over {size} comparisons"
    return f"Secondary metrics: {text}" + (f" {how}" if how else "") + "."


def treatment_summary(table: pd.DataFrame, treatment: str) -> str:
    """The verdict sentence and the secondary line of one treatment, as one paragraph."""
    return " ".join(s for s in (verdict_sentence(table, treatment), secondary_summary(table, treatment)) if s)


def settings_line(table: pd.DataFrame) -> str:
    """What was tested how: queries, primary metric and test, the two families, alpha, B and seed."""
    attrs = table.attrs
    n_queries = int(table["n_queries"].iloc[0]) if len(table) else 0
    primary_size = int((table["role"] == PRIMARY).sum())
    secondary_size = int((table["role"] == SECONDARY).sum())
    correction = _correction_label(table)
    primary_family = "no correction" if primary_size <= 1 else f"{correction} correction over {primary_size}"
    line = (
        f"paired tests on {plural(n_queries, 'query')}; primary metric {attrs.get('primary_metric')} "
        f"({attrs.get('primary')} test, {primary_family})"
    )
    if secondary_size:
        line += f"; secondary metrics: {correction} correction over {secondary_size} comparisons"
    return line + f"; alpha {attrs.get('alpha')}, B = {attrs.get('n_resamples')}, seed {attrs.get('seed')}"


def summary_text(table: pd.DataFrame) -> str:
    """Every treatment's paragraph, one per line."""
    return "\n".join(treatment_summary(table, t) for t in treatments(table))


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
        f"delta crosses ±{boundary})."
    )


def _about(n: float) -> str:
    """A count of queries as people read an estimate: two significant figures from 100 on (``1,900``)."""
    if n < 100:
        return f"{int(n):,}"
    digits = len(str(int(n))) - 2
    return f"{int(round(n, -digits)):,}"


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
    change = f"{effect:g}" if row["effect_source"] == "min_effect" else f"the observed change ({effect:.3g})"
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
    for row in [] if robustness is None else robustness.to_dict(orient="records"):
        notes.setdefault(str(row["treatment"]), []).append(robustness_sentence(row))
    for row in [] if queries_needed is None else queries_needed.to_dict(orient="records"):
        if primary_verdict(table, str(row["treatment"])) not in SIGNIFICANT:
            notes.setdefault(str(row["treatment"]), []).append(queries_needed_sentence(row))
    return notes


# ------------------------------------------------------------------------------------------ cost
def _speed(ratio: float) -> str:
    """A time ratio (the treatment's over the control's) in words: ``2.3x faster``, ``1.8x slower``."""
    if ratio == 1:
        return "as fast"
    return f"{format_ratio(1 / ratio)} faster" if ratio < 1 else f"{format_ratio(ratio)} slower"


def _size(ratio: float) -> str:
    return "the same size" if ratio == 1 else f"{format_ratio(ratio)} the size"


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _encoding_clause(row: Mapping[str, Any], control: Mapping[str, Any]) -> str:
    """How fast the treatment encodes its chunks against the control; cached vectors were never timed, so
    they are said to be cached, never 0 s of encoding."""
    from abcompare.stats.cost import CACHED, NO_EMBEDDINGS, PARTLY_CACHED

    def rate(r: Mapping[str, Any]) -> str:
        return f"{format_duration(r['encode_seconds_per_1000_chunks'])} per 1,000 chunks"

    def part(r: Mapping[str, Any], whose: str) -> list[str]:
        if r["embeddings"] != PARTLY_CACHED:
            return []
        return [f"{whose}{int(r['encoded_chunks']):,} of {int(r['embedded_chunks']):,} chunks encoded here, "
                "the rest cached"]  # fmt: skip

    ours, theirs = row["embeddings"], control["embeddings"]
    if ours == NO_EMBEDDINGS and theirs == NO_EMBEDDINGS:
        return ""
    mine = not _missing(row["encode_seconds_per_1000_chunks"])
    other = not _missing(control["encode_seconds_per_1000_chunks"])
    notes = part(row, "") + part(control, "the control: ")
    if mine and other:
        head = f"encodes {_speed(row['encode_ratio'])}"
        both = [format_duration(r["encode_seconds_per_1000_chunks"]) for r in (row, control)]
        notes.insert(0, f"{both[0]} vs {both[1]} per 1,000 chunks")
    elif mine:
        head = f"encodes {rate(row)}"
        notes.append(
            "the control encodes nothing"
            if theirs == NO_EMBEDDINGS
            else "the control's embeddings were cached"
        )
    elif ours == CACHED:
        head = "encoding not timed (its embeddings were cached)"
    else:
        head = "encodes nothing"
        notes.append(f"the control: {rate(control)}" if other else "the control's embeddings were cached")
    return head + (f" ({'; '.join(notes)})" if notes else "")


def _query_clause(row: Mapping[str, Any], control: Mapping[str, Any]) -> str:
    """The treatment's latency against the control's: a ratio beyond the noise, or within it."""
    if _missing(row["query_ratio"]):
        return "queries not timed"
    figures = (
        f"{format_duration(row['seconds_per_query'])} vs {format_duration(control['seconds_per_query'])} "
        f"per query, p95 {format_duration(row['seconds_per_query_p95'])} vs "
        f"{format_duration(control['seconds_per_query_p95'])}"
    )
    if bool(row["query_within_noise"]):
        return f"queries within the noise ({figures})"
    return f"queries {_speed(row['query_ratio'])} ({figures})"


def _bytes_clause(what: str, row: Mapping[str, Any], control: Mapping[str, Any]) -> str:
    ours, theirs = float(row[f"{what}_bytes"]), float(control[f"{what}_bytes"])
    if not ours and not theirs:
        return f"no {what}"
    if not theirs:
        return f"{what} {format_bytes(ours)} (the control has none)"
    if not ours:
        return f"no {what} (the control's: {format_bytes(theirs)})"
    ratio = float(row[f"{what}_ratio"])
    if ratio == 1:
        return f"{what} the same size ({format_bytes(ours)})"
    return f"{what} {_size(ratio)} ({format_bytes(ours)} vs {format_bytes(theirs)})"


def _own_clauses(row: Mapping[str, Any]) -> list[str]:
    """A retrieved variant's own cost figures, with no control to compare them with."""
    from abcompare.stats.cost import CACHED, PARTLY_CACHED

    clauses = []
    if not _missing(row["encode_seconds_per_1000_chunks"]):
        clauses.append(f"encodes {format_duration(row['encode_seconds_per_1000_chunks'])} per 1,000 chunks")
    elif row["embeddings"] in (CACHED, PARTLY_CACHED):
        clauses.append("encoding not timed (its embeddings were cached)")
    if _missing(row["seconds_per_query"]):
        clauses.append("queries not timed")
    else:
        clauses.append(f"queries {format_duration(row['seconds_per_query'])} per query, p95 "
                       f"{format_duration(row['seconds_per_query_p95'])}")  # fmt: skip
    for what in ("model", "index"):
        size = float(row[f"{what}_bytes"])
        clauses.append(f"{what} {format_bytes(size)}" if size else f"no {what}")
    return clauses


def _given_cost(row: Mapping[str, Any], control: Mapping[str, Any] | None) -> str:
    """What is known of a variant whose run was given: a Python retriever's one call, or nothing."""
    from abcompare.stats.cost import PYTHON

    if row["source"] != PYTHON:
        return "not measured here (a run file: it was retrieved elsewhere)"
    if _missing(row["seconds_per_query"]):
        return "not measured here (a Python retriever)"
    against = ""
    if control is not None and not _missing(control["seconds_per_query"]):
        against = (
            f"; the control's, timed one query at a time: {format_duration(control['seconds_per_query'])}"
        )
    return (
        f"the Python retriever took {format_duration(row['seconds_per_query'])} per query (one call over "
        f"every query, timed once, so not compared with the control{against}); its index and model are "
        "its own, not measured here"
    )


def cost_sentence(cost: pd.DataFrame, treatment: str) -> str:
    """What a treatment costs against the control, from the cost table (``stats.cost.cost_table``), e.g.

    ``Cost vs control: encodes 2.3x faster (41 s vs 95 s per 1,000 chunks), queries 1.8x faster (3.1 ms vs
    5.6 ms per query, p95 ...), model 0.25x the size (23 MB vs 91 MB), index the same size (7.7 MB).``

    Latencies whose ratio's interval reaches into the noise floor's band are "within the noise"; cached
    embeddings are said to be cached, never 0 s of encoding. A treatment given as a run file or a Python
    retriever gets what is known of it (``Cost: ...``), and so does a retrieved treatment whose control
    was given (its own figures, and that the control's were not measured here).
    """
    from abcompare.stats.cost import RETRIEVED

    row = cost.loc[treatment].to_dict()
    control = cost.loc["control"].to_dict() if "control" in cost.index else None
    source = row.get("source", RETRIEVED)
    if source != RETRIEVED:
        retrieved = control is not None and control.get("source", RETRIEVED) == RETRIEVED
        return f"Cost: {_given_cost(row, control if retrieved else None)}."
    if control is None or control.get("source", RETRIEVED) != RETRIEVED:
        whose = "not measured here" if control is None else _given_cost(control, None)
        return f"Cost: {', '.join(_own_clauses(row))}; the control's: {whose}."
    clauses = [
        _encoding_clause(row, control),
        _query_clause(row, control),
        _bytes_clause("model", row, control),
        _bytes_clause("index", row, control),
    ]
    return "Cost vs control: " + ", ".join(c for c in clauses if c) + "."


def _plain_value(value: Any) -> Any:
    """A cost-table cell as JSON has it: None for a missing one, a bool, a float, or text."""
    import numpy as np

    if _missing(value):
        return None
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    return float(value) if isinstance(value, (int, float, np.integer, np.floating)) else value


def cost_json(cost: pd.DataFrame | None) -> dict[str, Any]:
    """The cost table as plain data: per variant its figures (and a treatment's ratios and sentence)."""
    if cost is None:
        return {}
    out: dict[str, Any] = {}
    for name, row in cost.iterrows():
        values = {k: _plain_value(v) for k, v in row.to_dict().items()}
        if values["query_within_noise"] is not None:
            values["query_within_noise"] = bool(values["query_within_noise"])
        if name != "control" and "control" in cost.index:
            values["sentence"] = cost_sentence(cost, str(name))
        out[str(name)] = values
    return out


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


def as_json(table: pd.DataFrame) -> dict[str, Any]:
    """The verdicts as plain data: per treatment its verdict, sentence and secondary line, and with a
    margin its non-inferiority test (``margin``, adjusted ``p``, ``verdict``, ``sentence``)."""
    out: dict[str, Any] = {}
    for name in treatments(table):
        out[name] = {
            "metric": table.attrs.get("primary_metric"),
            "verdict": primary_verdict(table, name) or None,
            "sentence": verdict_sentence(table, name),
            "secondary": secondary_summary(table, name),
        }
        sentence = non_inferiority_sentence(table, name)
        if sentence:
            row = _rows(table, name, PRIMARY).iloc[0]
            out[name]["non_inferiority"] = {
                "margin": table.attrs["non_inferiority_margin"],
                "p": float(row["p_non_inferiority_adjusted"]),
                "p_raw": float(row["p_non_inferiority"]),
                "verdict": row["non_inferiority"],
                "sentence": sentence,
            }
    return out


# ------------------------------------------------------------------------------------------ gate
#: A CI gate (``abcompare run --fail-on``), per value: what a treatment that fails it is, and what the
#: treatments are when none fails it (each followed by ``on <primary metric>``).
GATE_WORDS = {
    "worse": ("worse than the control", "no treatment is worse than the control"),
    "not-better": ("not better than the control", "every treatment is better than the control"),
    "inferior": ("not shown non-inferior", "every treatment is non-inferior"),
}


def gate_sentence(table: pd.DataFrame, fail_on: str, failing: Sequence[str]) -> str:
    """The gate's one line: which treatments fail it and why, or that none does, e.g. ``gate --fail-on
    worse failed: dbsf is worse than the control on ndcg@10.``"""
    fails, passes = GATE_WORDS[fail_on]
    where = f" on {table.attrs.get('primary_metric')}"
    if fail_on == "inferior":
        where += f" at margin {table.attrs.get('non_inferiority_margin'):g}"
    if not failing:
        return f"gate --fail-on {fail_on} passed: {passes}{where}."
    if fail_on == "not-better":
        names = ", ".join(f"{name} ({primary_verdict(table, name) or 'not compared'})" for name in failing)
    else:
        names = ", ".join(failing)
    verb = "is" if len(failing) == 1 else "are"
    return f"gate --fail-on {fail_on} failed: {names} {verb} {fails}{where}."


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
def sweep_sentence(grid: pd.DataFrame, table: pd.DataFrame) -> str:
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
        f" after {_correction_label(table)} correction"
        if total > 1 and _correction_label(table) != "no"
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


# ------------------------------------------------------------------------------------------ description
def description_markdown(
    table: pd.DataFrame,
    *,
    context: str,
    tuned: TunedComparison | None = None,
    grid: pd.DataFrame | None = None,
    grid_settings: Sequence[str] = (),
    attribution: pd.DataFrame | None = None,
    notes: Mapping[str, Sequence[str]] | None = None,
    cost: pd.DataFrame | None = None,
) -> str:
    """The text a comparison opens with (MLflow's run description, ``summary.md``): the verdict sentences
    (the verdict itself in bold, then the detectable effect when not significant) and the secondary lines
    first, then the compact table (a markdown table, rounded; its source lines up too), then what was
    compared (``context``) and how it was tested.

    A sweep opens with the tuned comparison and the sweep's count, gives sentences only for the candidates
    that differ, and tabulates the grid (best first) instead of every row.
    """
    paragraphs: list[str] = []
    tuned_text = tuned_sentence(tuned) if tuned is not None else None
    for line in verdict_lines(table, tuned_text, grid, attribution, notes, cost):
        if line.kind == "tuned":
            paragraphs.append(f"**{line.text}**")
        elif line.kind == "verdict" and tuned is None and line.text.startswith(line.head):
            # the verdict itself in bold, short enough to stay above MLflow's "Show more" fade
            paragraphs.append(f"**{line.head}**{line.text[len(line.head) :]}")
        else:
            paragraphs.append(line.text)
    body = grid_markdown_table(grid, grid_settings) if grid is not None else markdown_table(table)
    paragraphs.append(body)
    paragraphs.append(context)
    paragraphs.append(f"_{settings_line(table)}_")
    return "\n\n".join(paragraphs) + "\n"


# ------------------------------------------------------------------------------------------ attribution
#: The delta's parts (``evaluation.attribution``), in their reading order.
ATTRIBUTION_PARTS = ("new", "lost", "reorder", "ideal")
#: What each part of a measure's delta is, as a sentence says it after its figure: ``{n}`` its count,
#: ``{hits}`` hit(s), ``{queries}`` the count of queries. nDCG, precision and recall count hits; MRR and F1
#: count queries, each in the class of its change.
_ITEM_PHRASES = {"new": "from {n} newly retrieved relevant {hits}", "lost": "from {n} lost",
                 "reorder": "from reordering"}  # fmt: skip
_PART_PHRASES: dict[str, dict[str, str]] = {
    "ndcg": {**_ITEM_PHRASES, "ideal": "from the ideal DCG (the lists' lengths differ)"},
    "precision": {**_ITEM_PHRASES, "ideal": "from the depth evaluated (the lists' lengths differ)"},
    "recall": {**_ITEM_PHRASES, "ideal": "from the relevant count (judged apart)"},
    "mrr": {"new": "from {queries} with a new first relevant hit", "lost": "from {queries} with none left",
            "reorder": "from {queries} whose first relevant hit moved"},
    "f1": {"new": "from {queries} with more relevant hits", "lost": "from {queries} with fewer",
           "ideal": "from {queries} with as many over another depth"},
}  # fmt: skip


def attribution_row(attribution: pd.DataFrame | None, treatment: str, metric: str) -> pd.Series | None:
    """One (treatment, metric) row of the attribution summary, or None when there is none."""
    if attribution is None or attribution.empty:
        return None
    rows = attribution[(attribution["treatment"] == treatment) & (attribution["metric"] == metric)]
    return None if rows.empty else rows.iloc[0]


def attribution_sentence(attribution: pd.DataFrame | None, treatment: str, metric: str) -> str:
    """Where one treatment's change on ``metric`` comes from, e.g. ``Where it comes from: ndcg@10 +0.031 =
    +0.044 from 61 newly retrieved relevant hits − 0.018 from 23 lost + 0.005 from reordering; 12
    unjudged newcomers in its top 10 (scored 0).`` ('' when there is no attribution). A part that is 0
    (and, for new and lost, counts nothing) is left out: the delta is the sum of the parts shown."""
    row = attribution_row(attribution, treatment, metric)
    if row is None:
        return ""
    measure, k = parse_metric(metric)
    terms: list[str] = []
    for part, phrase in _PART_PHRASES.get(measure, {}).items():
        value = float(row[part])
        count = int(row[f"{part}_count"]) if f"{part}_count" in row else 0
        if value == 0 and not (part in ("new", "lost") and count):
            continue
        if part == "lost" and "{n}" in phrase and not terms:
            phrase += " relevant {hits}"  # no newcomer said what is counted
        words = phrase.format(n=count, hits="hit" if count == 1 else "hits", queries=plural(count, "query"))
        sign = "+" if value >= 0 else ("−" if terms else "-")
        terms.append(f"{sign}{' ' if terms else ''}{abs(value):.3f} {words}")
    body = " ".join(terms) if terms else "+0.000 (nothing moved)"
    text = f"Where it comes from: {metric} {float(row['delta']):+.3f} = {body}"
    unjudged = int(row["unjudged_newcomers"])
    if unjudged:
        text += f"; {plural(unjudged, 'unjudged newcomer')} in its top {k} (scored 0)"
    return text + "."


def attribution_json(attribution: pd.DataFrame | None) -> dict[str, Any]:
    """The attribution as plain data: per treatment and metric, the delta, its parts, their counts (of
    hits, or of queries for MRR and F1: ``unit``) and the unjudged newcomers."""
    out: dict[str, Any] = {}
    if attribution is None:
        return out
    for row in attribution.to_dict(orient="records"):
        counts = {part: int(row[f"{part}_count"]) for part in ("new", "lost", "reorder")}
        out.setdefault(str(row["treatment"]), {})[str(row["metric"])] = {
            "delta": float(row["delta"]),
            "parts": {part: float(row[part]) for part in ATTRIBUTION_PARTS},
            "counts": counts,
            "unit": str(row["unit"]),
            "unjudged_newcomers": int(row["unjudged_newcomers"]),
            "n_queries": int(row["n_queries"]),
            "sentence": attribution_sentence(attribution, str(row["treatment"]), str(row["metric"])),
        }
    return out


# ------------------------------------------------------------------------------------------ collections
#: The order the per-collection verdicts are listed in a pooled sentence.
_COLLECTION_VERDICTS = (BETTER, WORSE, NO_DIFFERENCE, INCONCLUSIVE)


def _collections_clause(verdict: str, names: Sequence[str]) -> str:
    """``better on 3 (scifact, hr-docs, cisi)``, ``no significant difference on cranfield``."""
    listed = ", ".join(names)
    return f"{verdict} on {listed}" if len(names) == 1 else f"{verdict} on {len(names)} ({listed})"


def pooled_non_inferiority_sentence(pooled: pd.DataFrame, treatment: str) -> str:
    """The pooled non-inferiority test's line under the pooled verdict ('' without a margin), e.g.

    ``Non-inferiority across 4 collections: non-inferior on ndcg@10 at margin 0.01, p = 0.003 (one-sided
    stratified permutation test of pooled delta > -0.01).``
    """
    margin = pooled.attrs.get("non_inferiority_margin")
    rows = pooled[pooled["treatment"] == treatment]
    if margin is None or rows.empty or "non_inferiority" not in rows:
        return ""
    row = rows.iloc[0]
    correction = str(pooled.attrs.get("non_inferiority_correction", NO_CORRECTION))
    note = _correction_note(correction, len(pooled), "treatments")
    test = f"one-sided stratified permutation test of pooled delta > {_lower_bound(margin)}"
    collections = plural(int(row["collections"]), "collection")
    return f"Non-inferiority across {collections}: {_non_inferiority_clause(row, margin, test, note)}"


def pooled_sentence(pooled: pd.DataFrame, per_collection: pd.DataFrame, treatment: str) -> str:
    """The verdict across collections for one treatment (``stats.pooled.pooled_comparison``'s tables), e.g.

    ``Verdict hybrid across 4 collections: better on ndcg@10, +0.024 [0.011, 0.038], p = 0.001 (stratified
    permutation); better on 3 (scifact, hr-docs, cisi), no significant difference on cranfield;
    heterogeneity I² = 41%.``

    The p-value is the pooled one adjusted over the treatments (the note says how, for several). When
    some collections are significantly better and others significantly worse, the sentence says so first
    and lists the others after the pooled figures. I² is left out where it is undefined (one collection).
    """
    return "".join(pooled_sentence_parts(pooled, per_collection, treatment))


def pooled_sentence_parts(
    pooled: pd.DataFrame, per_collection: pd.DataFrame, treatment: str
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
    note = _family_note(pooled, len(pooled), "treatments")
    test = str(pooled.attrs.get("test", "stratified permutation"))
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
    return verdict, after + "."
