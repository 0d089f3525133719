"""The figures people read, as SVG text: the forest of differences, per-query score histograms, the paired
scatter, and a sweep's quality-versus-latency plane with its Pareto front.

Consumes tables only. SVG because every place a figure is shown renders it natively (MLflow's artifact
viewer and compare view, a browser, the self-contained ``report.html``, inline), it stays sharp at any zoom,
and writing it costs about a millisecond: matplotlib took 0.3 s to import and 0.1-0.3 s per figure here,
which in a 24-point sweep was more than the whole tracking budget. The notebook keeps matplotlib for
interactive work.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape
from typing import Any

import numpy as np
import pandas as pd

from abcompare.core.vocabulary import BETTER, INCONCLUSIVE, NO_DIFFERENCE, SIGNIFICANT, WORSE
from abcompare.stats.cost import FRONT_COLUMN

#: One colour per verdict, the same in every figure and in the report (colour-blind safe, Paul Tol's).
VERDICT_COLOURS = {BETTER: "#228833", WORSE: "#cc3311", INCONCLUSIVE: "#aa3377", NO_DIFFERENCE: "#888888"}
BLUE = "#4477aa"
FONT = "font-family:system-ui,-apple-system,'Segoe UI',Helvetica,Arial,sans-serif"


def verdict_colour(verdict: str) -> str:
    return VERDICT_COLOURS.get(verdict, VERDICT_COLOURS[NO_DIFFERENCE])


# ------------------------------------------------------------------------------------------ axes
def nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """About ``count`` round tick values covering [low, high] (steps of 1, 2 or 5 times a power of ten)."""
    if not (math.isfinite(low) and math.isfinite(high)):
        return [0.0]
    if high <= low:
        high = low + 1.0 if low == 0 else low + abs(low) * 0.1
    raw = (high - low) / max(count, 1)
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    first = math.floor(low / step) * step
    ticks, value = [round(first, 12)], first
    while value < high - step * 1e-9:
        value += step
        ticks.append(round(value, 12))
    return ticks


def _fmt_tick(value: float) -> str:
    text = f"{value:.6g}"
    return "0" if text in ("-0", "0") else text.replace("-", "−")


@dataclass
class _Scale:
    """A linear map from data to pixels."""

    d0: float
    d1: float
    p0: float
    p1: float

    def __call__(self, value: float) -> float:
        if self.d1 == self.d0:
            return (self.p0 + self.p1) / 2
        return self.p0 + (value - self.d0) * (self.p1 - self.p0) / (self.d1 - self.d0)


def _svg(width: float, height: float, body: list[str], title: str) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
        f'viewBox="0 0 {width:.0f} {height:.0f}" role="img" aria-label="{escape(title)}" style="{FONT}">'
        f"<title>{escape(title)}</title>"
        f'<rect width="100%" height="100%" fill="white"/>' + "".join(body) + "</svg>"
    )


def _text(
    x: float,
    y: float,
    text: str,
    *,
    size: int = 12,
    anchor: str = "start",
    weight: str = "normal",
    fill: str = "#222",
    rotate: float | None = None,
) -> str:
    transform = f' transform="rotate({rotate} {x:.1f} {y:.1f})"' if rotate is not None else ""
    return (
        f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" font-weight="{weight}" '
        f'fill="{fill}"{transform}>{escape(text)}</text>'
    )


def _line(
    x1: float,
    y1: float,
    x2: float,
    y2: float,
    *,
    stroke: str = "#222",
    width: float = 1,
    dash: str | None = None,
) -> str:
    dashed = f' stroke-dasharray="{dash}"' if dash else ""
    return (
        f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="{stroke}" '
        f'stroke-width="{width}"{dashed}/>'
    )


def _x_axis(
    scale: _Scale, ticks: Sequence[float], y: float, top: float, label: str, grid: bool = True
) -> list[str]:
    parts = [_line(scale.p0, y, scale.p1, y, stroke="#444")]
    for tick in ticks:
        x = scale(tick)
        if grid:
            parts.append(_line(x, top, x, y, stroke="#e6e6e6"))
        parts += [
            _line(x, y, x, y + 4, stroke="#444"),
            _text(x, y + 16, _fmt_tick(tick), size=11, anchor="middle"),
        ]
    parts.append(_text((scale.p0 + scale.p1) / 2, y + 34, label, size=12, anchor="middle"))
    return parts


def _y_axis(scale: _Scale, ticks: Sequence[float], x: float, right: float, label: str) -> list[str]:
    parts = [_line(x, scale.p0, x, scale.p1, stroke="#444")]
    for tick in ticks:
        y = scale(tick)
        parts += [
            _line(x, y, right, y, stroke="#e6e6e6"),
            _line(x - 4, y, x, y, stroke="#444"),
            _text(x - 7, y + 4, _fmt_tick(tick), size=11, anchor="end"),
        ]
    middle = (scale.p0 + scale.p1) / 2
    parts.append(_text(x - 44, middle, label, size=12, anchor="middle", rotate=-90))
    return parts


def _circle(cx: float, cy: float, r: float, fill: str, stroke: str, tooltip: str | None = None) -> str:
    tip = f"<title>{escape(tooltip)}</title>" if tooltip else ""
    return (
        f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="{r}" fill="{fill}" stroke="{stroke}" stroke-width="2">'
        f"{tip}</circle>"
    )


def _legend(items: Sequence[tuple[str, str, bool]], x: float, y: float) -> list[str]:
    """A one-line legend: (label, colour, filled) markers."""
    parts = []
    for label, colour, filled in items:
        fill = colour if filled else "white"
        parts.append(_circle(x + 5, y - 4, 5, fill, colour))
        parts.append(_text(x + 14, y, label, size=11))
        x += 22 + 6.2 * len(label)
    return parts


# ------------------------------------------------------------------------------------------ figures
#: The forest's legend: what a filled, a hollow marker says.
FOREST_LEGEND = (
    ("better (significant)", VERDICT_COLOURS[BETTER], True),
    ("worse (significant)", VERDICT_COLOURS[WORSE], True),
    ("not significant", VERDICT_COLOURS[NO_DIFFERENCE], False),
)


@dataclass(frozen=True)
class ForestStyle:
    """How a forest looks beyond its rows: every other row shaded, room for the star in the labels, and
    the figure widened to its legend."""

    stripes: bool = True
    star_room: int = 0  # characters
    fit_legend: bool = False


#: A comparison's forest (``plots/deltas.svg``), and the forest across collections.
COMPARISON_FOREST = ForestStyle()
COLLECTIONS_FOREST = ForestStyle(stripes=False, star_room=2, fit_legend=True)


def forest_svg(
    rows: pd.DataFrame,
    title: str,
    *,
    subtitle: str = "",
    label_column: str = "label",
    style: ForestStyle = COMPARISON_FOREST,
) -> str:
    """Each row's mean difference (treatment − control) with its confidence interval, coloured by verdict;
    significant rows (better or worse) are filled and starred, the others hollow.

    ``rows`` has ``delta, ci_low, ci_high, verdict`` and ``label_column``, in display order (top first);
    optionally ``kind`` (``row``, the default; ``heading``: a bold line of text; ``pooled``: a diamond in
    the verdict's colour under a rule; ``meta``: a blue diamond) and ``tip`` (a marker's tooltip).
    """
    rows = rows.reset_index(drop=True)
    labels = [str(v) for v in rows[label_column]]
    kinds = list(rows["kind"]) if "kind" in rows else ["row"] * len(rows)
    label_width = min(320, 12 + 6.6 * (style.star_room + max((len(t) for t in labels), default=10)))
    left, right, top, row_h = label_width + 20, 30, 62 if subtitle else 46, 22
    legend = list(FOREST_LEGEND)
    if (rows["verdict"] == INCONCLUSIVE).any():
        legend.append(("inconclusive", VERDICT_COLOURS[INCONCLUSIVE], False))
    if "meta" in kinds:
        legend.append(("random effects", BLUE, True))
    legend_width = sum(22 + 6.2 * len(item[0]) for item in legend)
    width = max(640, left + 420, left + legend_width + right if style.fit_legend else 0)
    height = top + row_h * len(rows) + 60
    values = rows[["delta", "ci_low", "ci_high"]].to_numpy(dtype=float).ravel()
    finite = np.concatenate([values[np.isfinite(values)], [0.0]])
    ticks = nice_ticks(float(finite.min()), float(finite.max()))
    x = _Scale(ticks[0], ticks[-1], left, width - right)
    bottom = top + row_h * len(rows) + 4
    body = [_text(12, 22, title, size=15, weight="bold")]
    if subtitle:
        body.append(_text(12, 40, subtitle, size=12, fill="#555"))
    body += _x_axis(
        x, ticks, bottom, top - 6, "difference, treatment − control (mean with its confidence interval)"
    )
    body.append(_line(x(0), top - 6, x(0), bottom, stroke="#222", width=1.2))
    for i, row in enumerate(rows.to_dict(orient="records")):
        y = top + row_h * i + row_h / 2
        if style.stripes and i % 2 == 0:
            body.append(
                f'<rect x="0" y="{y - row_h / 2:.1f}" width="{width}" height="{row_h}" fill="#f7f7f7"/>'
            )
        if kinds[i] == "pooled":
            body.append(_line(left - 6, y - row_h / 2, width - right, y - row_h / 2, stroke="#bbb"))
        body += _forest_row({**row, "kind": kinds[i], "label": labels[i]}, x, y, left)
    body += _legend(legend, left, height - 8)
    return _svg(width, height, body, title)


def _forest_row(row: Mapping[str, Any], x: _Scale, y: float, left: float) -> list[str]:
    """One line of the forest at height ``y``: its label, then its interval and marker, or its diamond."""
    kind, label, tip, verdict = row["kind"], row["label"], str(row.get("tip") or ""), str(row["verdict"])
    significant = verdict in SIGNIFICANT
    if kind == "heading":
        return [_text(12, y + 4, label, size=12, weight="bold")]
    body = []
    star = "★ " if significant else ""
    bold = "bold" if significant or kind == "pooled" else "normal"
    body.append(_text(left - 10, y + 4, star + label, size=12, anchor="end", weight=bold))
    low, high, delta = float(row["ci_low"]), float(row["ci_high"]), float(row["delta"])
    colour = BLUE if kind == "meta" else verdict_colour(verdict)
    if kind in ("pooled", "meta"):
        if all(math.isfinite(v) for v in (low, delta, high)):
            body.append(_diamond(x(low), x(delta), x(high), y, colour, tip))
        return body
    if math.isfinite(low) and math.isfinite(high):
        body.append(_line(x(low), y, x(high), y, stroke=colour, width=2.5))
        body += [
            _line(x(low), y - 5, x(low), y + 5, stroke=colour, width=2),
            _line(x(high), y - 5, x(high), y + 5, stroke=colour, width=2),
        ]
    if math.isfinite(delta):
        body.append(_circle(x(delta), y, 5, colour if significant else "white", colour, tip))
    return body


def histogram_svg(per_query: pd.DataFrame, metrics: Sequence[str], title: str) -> str:
    """One histogram of per-query scores per metric (score on x, number of queries on y), with the mean."""
    panel_w, panel_h, gap = 230, 170, 70
    width = 60 + len(metrics) * (panel_w + gap)
    height = panel_h + 110
    body = [_text(12, 22, title, size=15, weight="bold")]
    edges = np.linspace(0, 1, 21)
    for i, metric in enumerate(metrics):
        values = per_query[metric].to_numpy(dtype=float)
        values = values[np.isfinite(values)]
        counts, _ = np.histogram(np.clip(values, 0, 1), bins=edges)
        left = 70 + i * (panel_w + gap)
        top, bottom = 50, 50 + panel_h
        x = _Scale(0, 1, left, left + panel_w)
        y_ticks = nice_ticks(0, max(1, int(counts.max()) if len(counts) else 1), 4)
        y = _Scale(0, y_ticks[-1], bottom, top)
        body += _y_axis(y, y_ticks, left, left + panel_w, "queries")
        body += _x_axis(x, [0, 0.25, 0.5, 0.75, 1], bottom, top, f"{metric} per query", grid=False)
        for count, lo, hi in zip(counts, edges[:-1], edges[1:], strict=True):
            if count:
                body.append(
                    f'<rect x="{x(lo) + 0.5:.1f}" y="{y(count):.1f}" width="{x(hi) - x(lo) - 1:.1f}" '
                    f'height="{bottom - y(count):.1f}" fill="{BLUE}"/>'
                )
        if len(values):
            mean = float(values.mean())
            body.append(_line(x(mean), top, x(mean), bottom, stroke="#cc3311", width=2, dash="5 3"))
            body.append(
                _text(left + panel_w, top - 6, f"mean {mean:.3f}", size=11, anchor="end", fill="#cc3311")
            )
        body.append(_text(left, top - 6, metric, size=12, weight="bold"))
    return _svg(width, height, body, title)


def scatter_svg(control: pd.Series, treatment: pd.Series, metric: str, name: str) -> str:
    """Each query's control score (x) against the treatment's (y); above the diagonal: queries it won."""
    joined = pd.concat([control.rename("c"), treatment.rename("t")], axis=1).dropna()
    size, margin = 360, 62
    width, height = size + margin + 20, size + margin + 50
    top = 40
    x = _Scale(0, 1, margin, margin + size)
    y = _Scale(0, 1, top + size, top)
    won = int((joined["t"] > joined["c"]).sum())
    lost = int((joined["t"] < joined["c"]).sum())
    title = f"{name} vs control on {metric}: {won} queries better, {lost} worse"
    body = [_text(12, 22, title, size=14, weight="bold")]
    ticks = [0, 0.25, 0.5, 0.75, 1]
    body += _y_axis(y, ticks, margin, margin + size, f"{name} {metric}")
    body += _x_axis(x, ticks, top + size, top, f"control {metric}")
    body.append(_line(x(0), y(0), x(1), y(1), stroke="#222", width=1))
    for c, t in joined.itertuples(index=False):
        colour = VERDICT_COLOURS[BETTER] if t > c else VERDICT_COLOURS[WORSE] if t < c else "#888888"
        body.append(f'<circle cx="{x(c):.1f}" cy="{y(t):.1f}" r="3.5" fill="{colour}" fill-opacity="0.55"/>')
    return _svg(width, height, body, title)


def pareto_front(cost: Sequence[float], quality: Sequence[float]) -> list[int]:
    """Indices of the points no other point beats on both axes (lower cost and at least as good quality,
    or equal cost and better quality), ordered by cost."""
    order = sorted(range(len(cost)), key=lambda i: (cost[i], -quality[i]))
    front, best = [], -math.inf
    for i in order:
        if math.isfinite(cost[i]) and quality[i] > best:
            front.append(i)
            best = quality[i]
    return front


def pareto_svg(grid: pd.DataFrame, metric: str, control_cost: float | None = None) -> str:
    """A sweep's candidates on quality (delta on the primary metric) against latency (ms per query), the
    Pareto front joined, significant candidates filled; the control is the cross at zero.

    The front is the grid's ``pareto_front`` column when it has one (``stats.cost.on_front``: a candidate
    dominates another only when faster by more than the noise); when nothing is dominated, no candidate is
    faster than another beyond the noise, and no line is drawn."""

    cost = (1000 * grid["efficiency.seconds_per_query"].astype(float)).to_list()
    quality = grid["delta"].astype(float).to_list()
    front, note = _drawn_front(grid, cost, quality)
    width, height, left, right, top, bottom = 720, 440, 80, 30, 54, 380
    xs = [c for c in cost if math.isfinite(c)] + ([1000 * control_cost] if control_cost else [])
    x_ticks = nice_ticks(min(xs + [0.0]), max(xs + [0.001]))
    y_ticks = nice_ticks(min(quality + [0.0]), max(quality + [0.0]))
    x = _Scale(x_ticks[0], x_ticks[-1], left, width - right)
    y = _Scale(y_ticks[0], y_ticks[-1], bottom, top)
    title = f"Quality vs latency: {len(grid)} candidates, {metric}"
    body = [
        _text(12, 22, title, size=15, weight="bold"),
        _text(
            12,
            40,
            f"up: better than the control; left: faster; {note}",
            size=12,
            fill="#555",
        ),
    ]
    body += _y_axis(y, y_ticks, left, width - right, f"difference in {metric}")
    body += _x_axis(x, x_ticks, bottom, top, "retrieval latency (ms per query)")
    body.append(_line(left, y(0), width - right, y(0), stroke="#222", width=1.2))
    points = " ".join(f"{x(cost[i]):.1f},{y(quality[i]):.1f}" for i in front)
    if len(front) > 1:
        body.append(
            f'<polyline points="{points}" fill="none" stroke="#222" stroke-width="1.5" '
            'stroke-dasharray="6 3"/>'
        )
    for i, row in enumerate(grid.itertuples(index=False)):
        if math.isfinite(cost[i]):
            body += _candidate(str(row.candidate), str(row.verdict), x(cost[i]), y(quality[i]), i in front,
                               f"{row.candidate}: {quality[i]:+.4f}, {cost[i]:.2f} ms")  # fmt: skip
    if control_cost:
        cx, cy = x(1000 * control_cost), y(0)
        body += [
            _line(cx - 6, cy - 6, cx + 6, cy + 6, width=2),
            _line(cx - 6, cy + 6, cx + 6, cy - 6, width=2),
            _text(cx + 8, cy + 16, "control", size=11),
        ]
    body += _legend(FOREST_LEGEND, left, height - 8)
    return _svg(width, height, body, title)


def _drawn_front(grid: pd.DataFrame, cost: list[float], quality: list[float]) -> tuple[list[int], str]:
    """The candidates the front's line joins, cheapest first, and the subtitle's note on it."""
    if FRONT_COLUMN not in grid:
        front = pareto_front(cost, quality)
        return front, "the line joins the Pareto front (no candidate is both faster and better)"
    marked = [i for i, on in enumerate(grid[FRONT_COLUMN].astype(bool)) if on and math.isfinite(cost[i])]
    front = sorted(marked, key=lambda i: (cost[i], -quality[i]))
    if len(front) == sum(math.isfinite(c) for c in cost) and len(front) > 1:  # nothing dominated
        return [], "no candidate is faster than another by more than the noise, so no front is drawn"
    return front, "the line joins the Pareto front (none is better and faster by more than the noise)"


def _candidate(name: str, verdict: str, cx: float, cy: float, on_front: bool, tooltip: str) -> list[str]:
    """One candidate's marker (filled when significant, larger and named on the front)."""
    colour = verdict_colour(verdict)
    fill = colour if verdict in SIGNIFICANT else "white"
    marker = [_circle(cx, cy, 6 if on_front else 4.5, fill, colour, tooltip=tooltip)]
    return marker + ([_text(cx + 8, cy - 6, name, size=10, fill="#333")] if on_front else [])


#: The colours of a delta's parts (colour-blind safe, Paul Tol's), in the order the bars stack them.
PART_COLOURS = {"new": "#228833", "lost": "#cc3311", "reorder": "#4477aa", "ideal": "#ccbb44"}
PART_LABELS = {"new": "new relevant hits", "lost": "lost relevant hits", "reorder": "reordering",
               "ideal": "normaliser (ideal)"}  # fmt: skip


def attribution_svg(rows: pd.DataFrame, metric: str, title: str) -> str:
    """Where each treatment's change on ``metric`` comes from: one stacked bar per treatment, its positive
    parts stacked right of 0 and its negative parts left of it (new, lost, reorder, ideal), with a black
    tick at the net delta (their sum).

    ``rows`` has ``treatment``, ``delta`` and one column per part of :data:`PART_COLOURS`, top first.
    """
    rows = rows.reset_index(drop=True)
    labels = [str(v) for v in rows["treatment"]]
    label_width = min(260, 12 + 6.6 * max((len(t) for t in labels), default=10))
    left, right, top, row_h = label_width + 20, 30, 46, 28
    width = max(640, left + 420)
    height = top + row_h * len(rows) + 62
    parts = [p for p in PART_COLOURS if p in rows]
    values = rows[parts].to_numpy(dtype=float) if len(rows) else np.zeros((0, len(parts)))
    low = float(np.minimum(values, 0).sum(axis=1).min(initial=0.0))
    high = float(np.maximum(values, 0).sum(axis=1).max(initial=0.0))
    ticks = nice_ticks(low, high if high > low else low + 1e-3)
    x = _Scale(ticks[0], ticks[-1], left, width - right)
    bottom = top + row_h * len(rows) + 4
    body = [_text(12, 22, title, size=15, weight="bold")]
    body += _x_axis(x, ticks, bottom, top - 6, f"{metric}: treatment − control, split into its parts")
    body.append(_line(x(0), top - 6, x(0), bottom, stroke="#222", width=1.2))
    for i, row in enumerate(rows.to_dict(orient="records")):
        y = top + row_h * i + row_h / 2
        body.append(_text(left - 10, y + 4, labels[i], size=12, anchor="end"))
        ends = {True: 0.0, False: 0.0}  # the stack's end on each side of 0
        for part in parts:
            value = float(row[part])
            if value == 0 or not math.isfinite(value):
                continue
            start = ends[value > 0]
            ends[value > 0] = start + value
            x0, x1 = sorted((x(start), x(start + value)))
            tip = escape(f"{PART_LABELS[part]}: {value:+.4f}")
            body.append(
                f'<rect x="{x0:.1f}" y="{y - 8:.1f}" width="{max(x1 - x0, 0.5):.1f}" height="16" '
                f'fill="{PART_COLOURS[part]}"><title>{tip}</title></rect>'
            )
        delta = float(row["delta"])
        body.append(_line(x(delta), y - 12, x(delta), y + 12, stroke="#111", width=2.5))
        body.append(_text(width - right, y - 10, f"{delta:+.4f}", size=11, anchor="end", fill="#333"))
    legend_x = left
    for part in parts:
        colour = PART_COLOURS[part]
        body.append(
            f'<rect x="{legend_x:.1f}" y="{height - 17:.1f}" width="11" height="11" fill="{colour}"/>'
        )
        body.append(_text(legend_x + 15, height - 8, PART_LABELS[part], size=11))
        legend_x += 30 + 6.2 * len(PART_LABELS[part])
    body.append(_line(legend_x, height - 18, legend_x, height - 6, stroke="#111", width=2.5))
    body.append(_text(legend_x + 6, height - 8, "net delta", size=11))
    return _svg(width, height, body, title)


# ------------------------------------------------------------------------------------------ collections
def _diamond(low: float, centre: float, high: float, y: float, fill: str, tooltip: str) -> str:
    """A meta-analysis diamond: its width the interval, its centre the estimate."""
    points = f"{low:.1f},{y:.1f} {centre:.1f},{y - 7:.1f} {high:.1f},{y:.1f} {centre:.1f},{y + 7:.1f}"
    return (
        f'<polygon points="{points}" fill="{fill}" stroke="{fill}"><title>{escape(tooltip)}</title></polygon>'
    )


def collections_forest_svg(pooled: pd.DataFrame, per_collection: pd.DataFrame, title: str) -> str:
    """The forest of a comparison across collections (``stats.pooled.pooled_comparison``'s two tables): per
    treatment, one row per collection (its delta and interval, coloured by its verdict, filled and starred
    when significant), then the pooled diamond (its interval at the verdict's level, coloured by the pooled
    verdict) and the random-effects diamond (its interval, blue), with a line at zero: :func:`forest_svg`
    of :func:`collections_forest_rows`.
    """
    metric = str(pooled["metric"].iloc[0]) if len(pooled) else ""  # every row's: the pooled metric
    subtitle = f"{metric}: each collection, the pooled delta and the random effects"
    rows = collections_forest_rows(pooled, per_collection)
    return forest_svg(rows, title, subtitle=subtitle, style=COLLECTIONS_FOREST)


def collections_forest_rows(pooled: pd.DataFrame, per_collection: pd.DataFrame) -> pd.DataFrame:
    """The forest's rows across collections, in :func:`forest_svg`'s columns (``kind``, ``tip``): per
    treatment a heading (when there are several), its collections, the pooled and the random-effects row."""
    weighting = str(pooled["weighting"].iloc[0]) if len(pooled) else ""  # every row's
    pooled_label = "pooled (" + ("equal weight" if weighting == "collection" else "per query") + ")"
    entries: list[tuple[str, str, float, float, float, str, str]] = []
    for row in pooled.to_dict(orient="records"):
        treatment = str(row["treatment"])
        if len(pooled) > 1:
            entries.append(("heading", f"{treatment} vs control", math.nan, math.nan, math.nan, "", ""))
        mine = per_collection[per_collection["treatment"] == treatment]
        for c in mine.to_dict(orient="records"):
            entries.append(
                ("row", str(c["collection"]), float(c["delta"]), float(c["ci_low"]), float(c["ci_high"]),
                 str(c["verdict"]), f"{c['collection']}: {float(c['delta']):+.4f} ({c['verdict']})")
            )  # fmt: skip
        entries.append(
            ("pooled", pooled_label, float(row["delta"]), float(row["ci_low"]), float(row["ci_high"]),
             str(row["verdict"]), f"pooled: {float(row['delta']):+.4f} ({row['verdict']})")
        )  # fmt: skip
        entries.append(
            ("meta", "random effects", float(row["meta_effect"]), float(row["meta_ci_low"]),
             float(row["meta_ci_high"]), "", f"random effects: {float(row['meta_effect']):+.4f}")
        )  # fmt: skip
    columns = ["kind", "label", "delta", "ci_low", "ci_high", "verdict", "tip"]
    return pd.DataFrame(entries, columns=columns)
