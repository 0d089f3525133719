"""``report.html``: one self-contained page (inline CSS and SVG, no script, nothing fetched) that shares
a comparison without the MLflow UI.

It shows the verdicts (the sentences of :mod:`abcompare.outcome.sentences`), judged@k and judgment
warnings, the forest of differences, where each change comes from (a stacked bar per treatment and the
queries that carry each part), the full statistics table, for a sweep the grid (best first,
significant candidates marked), the tuned verdict and the quality-versus-latency plane, and the largest
per-query wins and losses with the query text and both variants' top hits, the annotated-relevant hits
marked. Renders a view only (:mod:`abcompare.outcome.view`): built from a fresh result, or from a comparison
read back from MLflow.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from html import escape
from typing import Any

import numpy as np
import pandas as pd

from abcompare.core.vocabulary import (
    BETTER,
    PRIMARY,
    SIGNIFICANT,
    WORSE,
    parse_metric,
    plural,
    relevance_mark,
)
from abcompare.outcome import rows as shared
from abcompare.outcome import verdicts
from abcompare.outcome.console import random_effects_line
from abcompare.outcome.sentences import (
    ATTRIBUTION_PARTS,
    _markdown,
    attribution_sentence,
    settings_line,
    treatments,
)
from abcompare.outcome.svg import (
    PART_LABELS,
    VERDICT_COLOURS,
    attribution_svg,
    collections_forest_svg,
    forest_svg,
    pareto_svg,
    verdict_colour,
)
from abcompare.outcome.view import ComparisonView, ExperimentView, PooledView
from abcompare.stats.cost import variant_rows

#: How many wins and losses per treatment, and at least how many hits per variant beside each (more when
#: the change is decided deeper: :func:`deciding_depth`).
CHANGES_SHOWN = 5
HITS_SHOWN = 5
#: At most this many treatments get their own wins/losses section (a sweep shows its tuned choice).
TREATMENTS_DETAILED = 4


def page(view: ExperimentView) -> str:
    """The view's ``report.html``, one renderer for every shape: across several collections the pooled
    section first (the top run's page), then each collection the page details (its own comparison's)."""
    parts = [*map(_pooled_part, view.sections), *map(_comparison_part, view.alone.values())]
    title, _, source = parts[0]
    return document(title, [section for _, sections, _ in parts for section in sections], source)


#: A part of a page: its title, its sections and where it was read from (the first part's name the page).
_Part = tuple[str, list[str], str]


def _comparison_part(inputs: ComparisonView) -> _Part:
    """One collection's comparison: the verdicts, the cost, judged@k, the forest, where each change comes
    from, a sweep's grid, the full table, the largest wins and losses."""
    table = inputs.comparison
    primary = inputs.primary_metric
    sections = [
        _header(inputs, primary),
        _verdicts(inputs),
        *([_stage_lines(inputs)] if inputs.stage_lines else []),
        *([_answer_changes(inputs)] if inputs.answer_changes else []),
        _cost(inputs),
        _judgments(inputs),
        _forest(inputs),
        _attribution(inputs, primary),
    ]
    if inputs.grid is not None and not inputs.grid.empty:
        sections.append(_grid(inputs, primary))
    sections.append(_full_table(table))
    for name in _focus(inputs):
        sections.append(_changes(inputs, name, primary))
    return f"{inputs.name}: {inputs.dataset}", sections, inputs.source


def document(title: str, sections: list[str], source: str) -> str:
    """A page: its sections, then the footer naming where it was read from (``source``), self-contained."""
    footer = (
        f"<footer>Written by abcompare{' from ' + escape(source) if source else ''}. "
        "Self-contained: no script, nothing loaded from the network.</footer>"
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(title)}</title><style>{_CSS}</style></head><body><main>"
        + "\n".join([*sections, footer])
        + "</main></body></html>\n"
    )


# ------------------------------------------------------------------------------------------ sections
def _header(inputs: ComparisonView, primary: str) -> str:
    description = f'<p class="lead">{escape(inputs.description)}</p>' if inputs.description else ""
    part_of = ""
    if inputs.part_of is not None:
        label, link = inputs.part_of
        part_of = (
            f'<p class="meta">One collection of <a href="{escape(link)}">{escape(label)}</a>: the comparison '
            "across collections, with the pooled verdict.</p>"
        )
    return (
        f"<h1>{escape(inputs.name)}</h1>{description}{part_of}"
        f'<p class="meta">Dataset <b>{escape(inputs.dataset)}</b>: {plural(inputs.n_queries, "query")}, '
        f"level {escape(inputs.level)}, convention {escape(inputs.convention)}; primary metric "
        f"<b>{escape(primary)}</b>.<br>{escape(settings_line(inputs.tested))}</p>"
    )


def _verdicts(inputs: ComparisonView) -> str:
    items: list[str] = []
    lines = verdicts.verdict_lines(
        inputs.tested, inputs.tuned_sentence, inputs.grid, inputs.attribution, inputs.notes,
        inputs.cost,
    )  # fmt: skip
    for line in lines:
        text = escape(line.text)
        if line.kind == "tuned":
            items.append(f'<p class="verdict tuned">{text}</p>')
        elif line.kind == "sweep":
            items.append(f"<p>{text}</p>")
        elif line.kind == "verdict":
            items.append(f'<p class="verdict" style="border-color:{verdict_colour(line.verdict)}">{text}</p>')
        else:  # the lines under a verdict belong to its paragraph (rows.UNDER_VERDICT)
            items[-1] = items[-1].removesuffix("</p>") + f'<br><span class="{line.kind}">{text}</span></p>'
    return "<section><h2>Verdict</h2>" + "".join(items) + "</section>"


def _stage_lines(inputs: ComparisonView | PooledView) -> str:
    """What a judge and the answers concluded (the console's lines under the verdicts)."""
    lines = "".join(f"<p>{escape(line)}</p>" for line in inputs.stage_lines)
    return f"<section><h2>Judged by a model</h2>{lines}</section>"


def _answer_changes(inputs: ComparisonView) -> str:
    """An answers: section's largest answer wins and losses per treatment, the two answers side by side."""
    parts = []
    for treatment in dict.fromkeys(str(r["treatment"]) for r in inputs.answer_changes):
        records = [r for r in inputs.answer_changes if r["treatment"] == treatment]
        metric = escape(str(records[0]["metric"]))
        parts.append(f"<h3>{escape(treatment)} vs control: the largest answer changes on {metric}</h3>")
        for label, kind in (("Largest wins", "win"), ("Largest losses", "loss")):
            shown = [r for r in records if r["change"] == kind]
            parts.append(f"<h4>{label}</h4>" + ("" if shown else "<p>none</p>"))
            parts += [_answer_pair(r) for r in shown]
    return "<section><h2>Answers: the largest wins and losses</h2>" + "".join(parts) + "</section>"


def _answer_pair(record: Mapping[str, Any]) -> str:
    """One query's two answers, with their scores, the delta and whether the hits they came from changed."""
    delta = float(record["delta"])
    colour = VERDICT_COLOURS[BETTER] if delta > 0 else VERDICT_COLOURS[WORSE]
    hits = "top-k hits changed" if record["top_k_changed"] else "same top-k hits"
    head = (
        f'<div class="query"><p><b>{escape(str(record["query_id"]))}</b> “{escape(str(record["question"]))}” '
        f"— control {record['control_score']:.3f}, {escape(str(record['treatment']))} "
        f'{record["treatment_score"]:.3f} (<span style="color:{colour};font-weight:600">{delta:+.3f}</span>; '
        f'{hits})</p><div class="side">'
    )
    columns = []
    for name, side in (("control", "control"), (str(record["treatment"]), "treatment")):
        cited = ", ".join(map(str, record[f"{side}_cited_ids"])) or "nothing"
        columns.append(
            f"<div><h4>{escape(name)}</h4><p>{escape(str(record[f'{side}_answer']))}</p>"
            f'<p class="meta">cites {escape(cited)}</p></div>'
        )
    return head + "".join(columns) + "</div></div>"


def _cost(inputs: ComparisonView) -> str:
    """Each retrieved variant's cost (a sweep's candidates are in its grid), then each judge's and answer
    generator's (calls, tokens, seconds, cache hits)."""
    if inputs.cost is None or inputs.cost.empty:
        return ""
    cost, work = variant_rows(inputs.cost), inputs.cost.drop(index=variant_rows(inputs.cost).index)
    if cost.empty or (inputs.grid is not None and len(cost) > TREATMENTS_DETAILED + 1):
        return _work_cost(work)
    headers = ["variant", "encoding per 1,000 chunks", "ms per query", "p95", "rounds' IQR", "model", "index"]
    body = []
    for name, row in cost.iterrows():
        encoding = shared.format_duration(row["encode_seconds_per_1000_chunks"])
        if shared.is_missing(row["encode_seconds_per_1000_chunks"]):
            encoding = "cached" if row["embeddings"] in ("cached", "partly cached") else "none"
        spread = f"{shared.format_duration(row['seconds_per_query_low'])}–" + shared.format_duration(
            row["seconds_per_query_high"]
        )
        latency = [shared.format_duration(row[c]) for c in ("seconds_per_query", "seconds_per_query_p95")]
        sizes = [shared.format_bytes(row[c]) for c in ("model_bytes", "index_bytes")]
        cells = [escape(str(name)), encoding, *latency, spread, *sizes]
        body.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    return (
        "<section><h2>Cost</h2><p>Latency: each query's median over interleaved timed rounds, averaged; "
        "two latencies differ only beyond the noise (the cost line under each verdict says which).</p>"
        f'<table class="cost"><thead><tr>{"".join(f"<th>{escape(h)}</th>" for h in headers)}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table>{_work_cost(work, heading=False)}</section>"
    )


def _work_cost(work: pd.DataFrame, heading: bool = True) -> str:
    """The judges' and answer generators' rows of the cost table (none: nothing)."""
    if work.empty:
        return ""
    headers = ["judge or generator", "calls", "prompt tokens", "completion tokens", "time", "cache hits"]
    body = []
    for name, row in work.iterrows():
        counts = [f"{int(row[c]):,}" for c in ("calls", "prompt_tokens", "completion_tokens")]
        cells = [
            escape(str(name)),
            *counts,
            shared.format_duration(row["seconds"]),
            f"{int(row['cache_hits']):,}",
        ]
        body.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    table = (
        f'<table class="cost"><thead><tr>{"".join(f"<th>{escape(h)}</th>" for h in headers)}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table>"
    )
    return f"<section><h2>Cost</h2>{table}</section>" if heading else table


def _judgments(inputs: ComparisonView) -> str:
    if not inputs.judged and not inputs.judgment_warnings:
        return ""
    parts = []
    if inputs.judged:
        parts.append(f"<p>{escape(shared.judged_line(inputs.judged, inputs.judgments_relevant_only))}</p>")
    for note in inputs.judgment_warnings:
        parts.append(f'<p class="warning">warning: {escape(note)}</p>')
    return "<section><h2>Judgments</h2>" + "".join(parts) + "</section>"


def forest_figure(inputs: ComparisonView) -> str:
    """The forest of differences (``plots/deltas.svg``): every treatment and metric, the primary metric
    first; for a sweep, every candidate on the primary metric, best first. The title names the comparison
    and the primary metric."""
    table = inputs.comparison
    primary = inputs.primary_metric
    if inputs.grid is not None and not inputs.grid.empty:
        rows = table[table["role"] == PRIMARY].sort_values("delta", ascending=False, kind="stable")
        rows = rows.assign(label=rows["treatment"])
        title = f"{inputs.name}: every candidate vs the control on {primary}"
    else:
        rows = shared.primary_first(table)
        rows = rows.assign(
            label=[f"{t} · {m}" for t, m in zip(rows["treatment"], rows["metric"], strict=True)]
        )
        names = ", ".join(treatments(table))
        title = f"{names} vs control ({inputs.name}): primary metric {primary} first"
    subtitle = "★ and filled: significant after correction; hollow: not significant"
    return forest_svg(rows, title, subtitle=subtitle)


def _forest(inputs: ComparisonView) -> str:
    return f"<section><h2>Differences</h2>{forest_figure(inputs)}</section>"


#: How many queries are named for each part of a treatment's change.
QUERIES_PER_PART = 3


def _attribution(inputs: ComparisonView, primary: str) -> str:
    """Where each treatment's change on the primary metric comes from: a stacked bar per treatment (its
    parts, and the net delta), then for the detailed treatments the sentence and the queries that carry
    most of each part."""
    table = inputs.attribution
    if table is None or table.empty:
        return ""
    rows = table[table["metric"] == primary]
    if rows.empty:
        return ""
    title = f"{inputs.name}: where the change on {primary} comes from"
    parts = [
        "<section><h2>Where the change comes from</h2>",
        f"<p>Each treatment's mean difference on {escape(primary)} split into parts that add up to it: "
        "relevant hits new to its top k, relevant hits it lost, relevant hits both lists hold at other ranks "
        "(reordering), and the change of the normaliser itself (the ideal DCG or the depth, when the lists' "
        "lengths differ). MRR and F1 put each query's whole change in the class of that change.</p>",
        attribution_svg(rows, primary, title),
    ]
    for name in _focus(inputs):
        sentence = attribution_sentence(table, name, primary)
        if sentence:
            parts.append(f"<h3>{escape(name)}</h3><p>{escape(sentence)}</p>")
            parts.append(_carrying_queries(inputs, name, primary))
    parts.append("</section>")
    return "".join(parts)


def _carrying_queries(inputs: ComparisonView, treatment: str, metric: str) -> str:
    """A table of the queries that carry most of each part of one treatment's change (largest share of
    the part, in its direction), with their text and their share of the mean (part / number of queries)."""
    per_query = inputs.attribution_per_query
    if per_query is None or per_query.empty:
        return ""
    rows = per_query[(per_query["treatment"] == treatment) & (per_query["metric"] == metric)]
    body = []
    for part in ATTRIBUTION_PARTS:
        values = rows[part].to_numpy(dtype=float)
        total = float(values.sum())
        if total == 0:
            continue
        order = np.argsort(-values * np.sign(total), kind="stable")[:QUERIES_PER_PART]
        for i in order:
            if values[i] == 0 or np.sign(values[i]) != np.sign(total):
                continue
            query_id = str(rows["query_id"].iloc[i])
            text = ""
            if query_id in inputs.queries.index:
                text = str(inputs.queries.loc[query_id].get("text", ""))
            body.append(
                f"<tr><td>{escape(PART_LABELS[part])}</td><td>{escape(query_id)}</td>"
                f"<td>{escape(text[:120])}</td><td>{values[i]:+.4f}</td>"
                f"<td>{values[i] / len(rows):+.4f}</td></tr>"
            )
    if not body:
        return ""
    return (
        '<table class="parts"><thead><tr><th>part</th><th>query</th><th>text</th><th>per query</th>'
        f"<th>of the mean</th></tr></thead><tbody>{''.join(body)}</tbody></table>"
    )


def _grid(inputs: ComparisonView, primary: str) -> str:
    grid = inputs.grid
    assert grid is not None
    settings = inputs.grid_settings
    headers = shared.grid_headers(settings)
    named = max(len(settings), 1)
    body = []
    for row in grid.to_dict(orient="records"):
        cells = [escape(cell) for cell in shared.grid_cells(row, settings)]
        cells[named + 1] = _delta_cell(row["delta"], row["verdict"])
        cells[named + 4] = _verdict_cell(row["verdict"])
        mark = ' class="significant"' if row["verdict"] in SIGNIFICANT else ""
        body.append(f"<tr{mark}>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    pareto = ""
    if "efficiency.seconds_per_query" in grid:
        pareto = pareto_svg(grid, primary, inputs.control_seconds_per_query)
    return (
        f"<section><h2>Sweep: {len(grid)} candidates, best first</h2>"
        "<p>Sorted by the difference on the primary metric; ★ rows differ significantly after the correction "
        "over the whole grid.</p>"
        f'<table class="grid"><thead><tr>{"".join(f"<th>{escape(h)}</th>" for h in headers)}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table>{pareto}</section>"
    )


_FULL_COLUMNS = (
    ("treatment", "treatment"), ("metric", "metric"), ("role", "role"), ("control", "control_mean"),
    ("treatment", "treatment_mean"), ("delta", "delta"), ("CI of delta", "ci"), ("p (raw)", "p_primary"),
    ("p adj.", "p_adjusted"), ("effect size", "effect_size"), ("wins/ties/losses", "wtl"), ("MDE", "mde"),
    ("verdict", "verdict"),
)  # fmt: skip


def _full_table(table: pd.DataFrame) -> str:
    rows = []
    for row in shared.primary_first(table).to_dict(orient="records"):
        cells = []
        for _, key in _FULL_COLUMNS:
            if key == "ci":
                cells.append(shared.format_interval(row["ci_low"], row["ci_high"]))
            elif key == "wtl":
                cells.append(f"{row.get('wins', '')}/{row.get('ties', '')}/{row.get('losses', '')}")
            elif key == "delta":
                cells.append(_delta_cell(row["delta"], row["verdict"]))
            elif key == "verdict":
                cells.append(_verdict_cell(row["verdict"]))
            elif key in ("p_primary", "p_adjusted"):
                cells.append(shared.format_p(row.get(key, float("nan")), shared.TABLE_DIGITS))
            elif key == "metric" and row.get("role") == PRIMARY:
                cells.append(f"<b>{escape(str(row['metric']))}</b>")
            else:
                value = row.get(key, "")
                cells.append(shared.format_number(value) if isinstance(value, float) else escape(str(value)))
        rows.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    headers = "".join(f"<th>{escape(title)}</th>" for title, _ in _FULL_COLUMNS)
    return (
        "<section><h2>Every comparison</h2><p>p adj.: adjusted within the row's family (the primary metric "
        "across the treatments; the secondary metrics together). MDE: the smallest difference this query set "
        "detects with the configured power at the level the test was held to.</p>"
        f'<table class="full"><thead><tr>{headers}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></section>"
    )


def _delta_cell(delta: float, verdict: str) -> str:
    colour = VERDICT_COLOURS.get(verdict) if verdict in SIGNIFICANT else None
    text = shared.format_delta(delta)
    return f'<span style="color:{colour};font-weight:600">{text}</span>' if colour else text


def _verdict_cell(verdict: str) -> str:
    return f'<span style="color:{verdict_colour(verdict)}">{escape(shared.verdict_label(verdict))}</span>'


# ------------------------------------------------------------------------------------------ wins/losses
def _focus(inputs: ComparisonView) -> list[str]:
    if inputs.focus:
        return [name for name in inputs.focus if name in inputs.per_query]
    names = treatments(inputs.comparison)
    return names if len(names) <= TREATMENTS_DETAILED else []


def _changes(inputs: ComparisonView, treatment: str, metric: str) -> str:
    control = inputs.per_query["control"][metric]
    other = inputs.per_query[treatment][metric]
    delta = (other - control).dropna()
    ordered = delta.sort_values(kind="mergesort")
    wins = ordered[ordered > 0].iloc[::-1].head(CHANGES_SHOWN)
    losses = ordered[ordered < 0].head(CHANGES_SHOWN)
    parts = [
        f"<section><h2>{escape(treatment)} vs control: the largest per-query changes on "
        f"{escape(metric)}</h2>",
        f"<p>{int((delta > 0).sum())} queries better, {int((delta < 0).sum())} worse, "
        f"{int((delta == 0).sum())} unchanged. Hits marked ✓ are annotated relevant "
        f"(grade ≥ {inputs.relevance_threshold:g}); ○ judged not relevant; unmarked: not judged. Both lists "
        f"run through the deepest rank within {escape(metric)}'s cutoff at which their relevant hits differ "
        f"(at least {HITS_SHOWN}), so the hit that decides the change is shown.</p>",
    ]
    for label, changes in (("Largest wins", wins), ("Largest losses", losses)):
        parts.append(f"<h3>{label}</h3>")
        if changes.empty:
            parts.append("<p>none</p>")
        for query_id, change in changes.items():
            parts.append(_query_block(inputs, treatment, str(query_id), float(change), control, other))
    parts.append("</section>")
    return "".join(parts)


def _query_block(
    inputs: ComparisonView, treatment: str, query_id: str, change: float, control: pd.Series, other: pd.Series
) -> str:
    text = ""
    if query_id in inputs.queries.index:
        text = str(inputs.queries.loc[query_id].get("text", ""))
    colour = VERDICT_COLOURS[BETTER] if change > 0 else VERDICT_COLOURS[WORSE]
    head = (
        f'<div class="query"><p><b>{escape(query_id)}</b> “{escape(text)}” — control '
        f"{control.get(query_id, math.nan):.3f}, {escape(treatment)} {other.get(query_id, math.nan):.3f} "
        f'(<span style="color:{colour};font-weight:600">{change:+.3f}</span>)</p><div class="side">'
    )
    lists = {name: _query_hits(inputs, name, query_id) for name in ("control", treatment)}
    depth = deciding_depth(*lists.values(), parse_metric(inputs.primary_metric)[1],
                           inputs.relevance_threshold)  # fmt: skip
    columns = [_hits_list(inputs, name, hits, depth) for name, hits in lists.items()]
    return head + "".join(columns) + "</div></div>"


def _query_hits(inputs: ComparisonView, variant: str, query_id: str) -> pd.DataFrame | None:
    """One variant's hits for one query, by rank (None when its hits were not recorded)."""
    run = inputs.hits.get(variant)
    if run is None or run.empty:
        return None
    return run[run["query_id"].astype(str) == query_id].sort_values("rank")


def _relevant_at(hits: pd.DataFrame | None, cutoff: int, threshold: float) -> dict[int, str]:
    """rank -> key of the annotated-relevant hits in the top ``cutoff``."""
    if hits is None or "grade" not in hits:
        return {}
    top = hits[(hits["rank"] <= cutoff) & (hits["grade"] >= threshold)]
    return dict(zip(top["rank"].astype(int), top["key"].astype(str), strict=True))


def deciding_depth(
    control: pd.DataFrame | None, treatment: pd.DataFrame | None, cutoff: int, threshold: float
) -> int:
    """How many hits a per-query change needs shown: through the deepest rank, within the metric's
    ``cutoff``, at which the two lists' relevant hits differ (a relevant hit in one list and not at that
    rank in the other), at least :data:`HITS_SHOWN`, at most ``cutoff``."""
    ours, theirs = _relevant_at(control, cutoff, threshold), _relevant_at(treatment, cutoff, threshold)
    differing = [rank for rank in set(ours) | set(theirs) if ours.get(rank) != theirs.get(rank)]
    return max(HITS_SHOWN, min(max(differing, default=0), cutoff))


def _hits_list(inputs: ComparisonView, variant: str, hits: pd.DataFrame | None, depth: int) -> str:
    if hits is None:
        return f"<div><h4>{escape(variant)}</h4><p>hits not recorded</p></div>"
    items = []
    for hit in hits.head(depth).to_dict(orient="records"):
        mark = relevance_mark(hit.get("grade"), inputs.relevance_threshold)
        content = str(hit.get("content") or "")
        snippet = escape(content[:180] + ("…" if len(content) > 180 else ""))
        css = {"✓": "relevant", "○": "judged"}.get(mark, "")
        items.append(
            f'<li class="{css}"><span class="mark">{mark or "&nbsp;"}</span>'
            f'<span class="rank">{int(hit["rank"])}</span>'
            f'<code>{escape(str(hit.get("key", "")))}</code> <span class="snippet">{snippet}</span></li>'
        )
    return f"<div><h4>{escape(variant)}</h4><ol>{''.join(items)}</ol></div>"


_CSS = """
body{margin:0;background:#fafafa;color:#222;font:15px/1.45 system-ui,Helvetica,Arial,sans-serif}
main{max-width:1180px;margin:0 auto;padding:24px 28px 48px;background:white}
h1{margin:0 0 4px;font-size:26px}
h2{margin:28px 0 8px;font-size:19px;border-bottom:1px solid #ddd;padding-bottom:4px}
h3{margin:16px 0 6px;font-size:16px}
h4{margin:4px 0;font-size:14px}
.lead{color:#444;margin:2px 0 6px}
.meta{color:#555;font-size:13px}
.verdict{border-left:5px solid #888;padding:8px 12px;background:#f5f5f5;margin:8px 0;font-weight:600}
.verdict .secondary,.verdict .non_inferiority,.verdict .attribution,.verdict .cost{font-weight:400;color:#444}
.verdict .note{font-weight:400;color:#555;font-size:13.5px}
.tuned{border-color:#4477aa}
.warning{color:#a15c00;background:#fff6e0;padding:6px 10px}
table{border-collapse:collapse;font-size:13px;margin:8px 0}
th,td{border:1px solid #ddd;padding:3px 8px;text-align:right;white-space:nowrap}
th{background:#f0f0f0}
td:nth-child(-n+3){text-align:left}
table.parts td:nth-child(3){white-space:normal;max-width:520px}
tr.significant td{background:#f1f8ee}
tbody tr:nth-child(even){background:#fbfbfb}
.query{border:1px solid #e3e3e3;border-radius:6px;padding:6px 10px;margin:8px 0}
.side{display:grid;grid-template-columns:1fr 1fr;gap:14px}
ol{list-style:none;padding:0;margin:0}
li{padding:2px 4px;font-size:12.5px;border-bottom:1px solid #f0f0f0}
li.relevant{background:#e8f5e3}
li .mark{display:inline-block;width:16px;color:#228833;font-weight:700}
li .rank{display:inline-block;width:22px;color:#777}
li code{font-size:11.5px;color:#333}
.snippet{color:#555}
svg{max-width:100%;height:auto;display:block;margin:8px 0}
footer{margin-top:32px;color:#777;font-size:12px}
"""


# ------------------------------------------------------------------------------------------ collections
#: The per-collection table's columns (one table per treatment, the pooled row last), as the console's.
PER_COLLECTION_HEADERS = ("collection", "queries", "delta", "CI of delta", "p adj.", "verdict")
_PER_COLLECTION_RIGHT = (False, True, True, True, True, False)


def per_collection_rows(
    per_collection: pd.DataFrame, pooled: pd.DataFrame, treatment: str
) -> list[dict[str, Any]]:
    """One treatment's rows of the per-collection table, in the table's order, then its pooled row (its
    ``collection`` named ``pooled (<weighting>)``): ``collection, n_queries, delta, ci_low, ci_high,
    p_adjusted, verdict`` and ``pooled`` (True on the last)."""
    fields = ("collection", "n_queries", "delta", "ci_low", "ci_high", "p_adjusted", "verdict")
    rows = [
        {**{f: row[f] for f in fields}, "pooled": False}
        for row in per_collection[per_collection["treatment"] == treatment].to_dict(orient="records")
    ]
    for row in pooled[pooled["treatment"] == treatment].to_dict(orient="records"):
        name = f"pooled ({str(row['weighting']).replace('_', ' ')})"
        rows.append({**{f: row[f] for f in fields if f != "collection"}, "collection": name, "pooled": True})
    return rows


def per_collection_cells(row: Mapping[str, Any]) -> list[str]:
    """One row's cells (:data:`PER_COLLECTION_HEADERS`) in ``outcome.rows``' formats, as the console's."""
    return [
        str(row["collection"]),
        f"{int(row['n_queries']):,}",
        shared.format_delta(float(row["delta"])),
        shared.format_interval(row["ci_low"], row["ci_high"]),
        shared.format_p(row["p_adjusted"], shared.TABLE_DIGITS),
        shared.verdict_label(str(row["verdict"])),
    ]


def per_collection_markdown(per_collection: pd.DataFrame, pooled: pd.DataFrame, treatment: str) -> str:
    """One treatment's per-collection table, its pooled row last, as markdown (the top run's description)."""

    cells = [per_collection_cells(row) for row in per_collection_rows(per_collection, pooled, treatment)]
    return _markdown(PER_COLLECTION_HEADERS, cells, _PER_COLLECTION_RIGHT)


def collections_forest(inputs: PooledView) -> str:
    """The forest of the collections (``plots/collections_forest.svg``): each collection's delta and
    interval, the pooled and the random-effects diamonds (``outcome.svg.collections_forest_svg``)."""

    return collections_forest_svg(inputs.pooled, inputs.per_collection, inputs.name)


def _pooled_part(inputs: PooledView) -> _Part:
    """The pooled section across several collections: the pooled verdicts with the random-effects line,
    the forest, and per treatment the per-collection table (each collection's name a link to its own
    comparison run, which has its own report.html), its pooled row last."""

    weighting = "equal weight per collection" if inputs.weighting == "collection" else "weighted by queries"
    collections = list(dict.fromkeys(inputs.per_collection["collection"]))
    description = f'<p class="lead">{escape(inputs.description)}</p>' if inputs.description else ""
    header = (
        f"<h1>{escape(inputs.name)}</h1>{description}"
        f'<p class="meta">{plural(len(collections), "collection")} '
        f"({escape(', '.join(collections))}), primary metric <b>{escape(inputs.primary_metric)}</b>, "
        f"pooled with {weighting}.</p>"
    )
    verdicts = []
    for row in inputs.pooled.to_dict(orient="records"):
        name = str(row["treatment"])
        sentence = inputs.sentences.get(name, "")
        notes = [random_effects_line(row), inputs.non_inferiority.get(name, "")]
        verdicts.append(
            f'<div class="verdict" style="border-color:{verdict_colour(str(row["verdict"]))}">'
            f"{escape(sentence)}"
            + "".join(f'<div class="note">{escape(note)}</div>' for note in notes if note)
            + "</div>"
        )
    tables = [_per_collection_table(inputs, str(name)) for name in inputs.pooled["treatment"]]
    sections = [
        header,
        f"<section><h2>Pooled verdict</h2>{''.join(verdicts)}</section>",
        *([_stage_lines(inputs)] if inputs.stage_lines else []),
        f"<section><h2>Collections</h2>{collections_forest(inputs)}</section>",
        "<section><h2>Per collection</h2><p>Each collection's own comparison (its verdict, tables and "
        "per-query wins and losses) is its run, linked; p adjusted over every collection's primary tests."
        f"</p>{''.join(tables)}</section>",
    ]
    return f"{inputs.name}: across collections", sections, inputs.source


def _per_collection_table(inputs: PooledView, treatment: str) -> str:
    """One treatment's per-collection table: collection names linked to their runs, the pooled row last."""
    body = []
    for row in per_collection_rows(inputs.per_collection, inputs.pooled, treatment):
        cells = [escape(c) for c in per_collection_cells(row)]
        verdict = str(row["verdict"])
        link = None if row["pooled"] else inputs.links.get(str(row["collection"]))
        if link:
            cells[0] = f'<a href="{escape(link)}">{cells[0]}</a>'
        if row["pooled"]:
            cells[0] = f"<b>{cells[0]}</b>"
        cells[2], cells[5] = _delta_cell(float(row["delta"]), verdict), _verdict_cell(verdict)
        css = ' class="significant"' if verdict in SIGNIFICANT else ""
        body.append(f"<tr{css}>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    headers = "".join(f"<th>{escape(h)}</th>" for h in PER_COLLECTION_HEADERS)
    return (
        f"<h3>{escape(treatment)} vs control on {escape(inputs.primary_metric)}</h3>"
        f'<table class="full"><thead><tr>{headers}</tr></thead><tbody>{"".join(body)}</tbody></table>'
    )
