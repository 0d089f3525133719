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
    return CORRECTION_LABELS.get(str(table.attrs.get("correction", NO_CORRECTION)), "no")


def _family_note(table: pd.DataFrame, size: int, what: str) -> str:
    """How the p-value of a family of ``size`` was adjusted, e.g. ``Holm-adjusted over 3 treatments``."""
    if size <= 1:
        return ""
    if table.attrs.get("correction", NO_CORRECTION) == NO_CORRECTION:
        return f"not adjusted for the {size} {what}"
    return f"{_correction_label(table)}-adjusted over {size} {what}"


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


def cost_sentence(cost: pd.DataFrame, treatment: str) -> str:
    """What a treatment costs against the control, from the cost table (``stats.cost.cost_table``), e.g.

    ``Cost vs control: encodes 2.3x faster (41 s vs 95 s per 1,000 chunks), queries 1.8x faster (3.1 ms vs
    5.6 ms per query, p95 ...), model 0.25x the size (23 MB vs 91 MB), index the same size (7.7 MB).``

    Latencies whose ratio's interval reaches into the noise floor's band are "within the noise"; cached
    embeddings are said to be cached, never 0 s of encoding.
    """
    row, control = cost.loc[treatment].to_dict(), cost.loc["control"].to_dict()
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
    """A markdown table, its cells padded to their column's width; ``right`` columns right-aligned."""
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
    """The verdicts as plain data: per treatment its verdict, sentence and secondary line."""
    out: dict[str, Any] = {}
    for name in treatments(table):
        out[name] = {
            "metric": table.attrs.get("primary_metric"),
            "verdict": primary_verdict(table, name) or None,
            "sentence": verdict_sentence(table, name),
            "secondary": secondary_summary(table, name),
        }
    return out


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
    for line in verdict_lines(table, tuned_sentence(tuned) if tuned is not None else None, grid, cost):
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
