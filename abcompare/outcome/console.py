"""What a person sees on the console: the verdict tables, the sentences, a sweep's grid, and ``--json``.

Consumes tables only (the comparison table, a sweep's grid) and the result's plain fields; knows nothing of
retrieval or MLflow: where a result was recorded arrives as lines of text (``result.recorded``), written by
the tracking side. The figures are :mod:`abcompare.outcome.svg`'s, the HTML report
:mod:`abcompare.outcome.html`'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from abcompare.core.progress import plain_text
from abcompare.core.vocabulary import BETTER, INCONCLUSIVE, NO_DIFFERENCE, PRIMARY, SIGNIFICANT, WORSE, plural
from abcompare.outcome import rows as shared
from abcompare.outcome import verdicts
from abcompare.outcome.pooled_sentences import pooled_non_inferiority_sentence, pooled_sentence
from abcompare.outcome.sentences import (
    _p_clause,
    as_json,
    attribution_json,
    cost_json,
    queries_needed_sentence,
    robustness_sentence,
    settings_line,
    tuned_sentence,
    verdict_notes,
)

if TYPE_CHECKING:
    from abcompare.outcome.results import Comparison, ComparisonResult, Recorded


VERDICT_STYLE = {BETTER: "bold green", WORSE: "bold red", NO_DIFFERENCE: "yellow", INCONCLUSIVE: "magenta"}


# ------------------------------------------------------------------------------------------ console
def verdict_table(comparison: pd.DataFrame, treatment: str, primary: str) -> Any:
    """A rich table for one treatment: the primary metric first, then the secondary metrics, with
    control, treatment, delta, CI, the p-value adjusted within the row's family, and the verdict."""
    from rich.table import Table

    family = f"[dim](p adj.: {primary} test, adjusted within the row's family)[/]"
    title = f"{plain_text(treatment)} vs control  {family}"
    table = Table(title=title, title_justify="left", header_style="bold")
    for column in ("metric", "role", "control", "treatment", "delta", "CI of delta", "p adj.", "verdict"):
        left = column in {"metric", "role", "verdict"}
        table.add_column(column, justify="left" if left else "right", no_wrap=True)
    rows = shared.primary_first(comparison[comparison["treatment"] == treatment])
    for row in rows.itertuples(index=False):
        metric = f"[bold]{row.metric}[/]" if row.role == PRIMARY else row.metric
        table.add_row(
            metric,
            row.role,
            shared.format_number(row.control_mean),
            shared.format_number(row.treatment_mean),
            _styled(shared.format_delta(row.delta), row.verdict),
            shared.format_interval(row.ci_low, row.ci_high),
            shared.format_p(row.p_adjusted, shared.TABLE_DIGITS),
            _styled(row.verdict, row.verdict),
        )
        if row.role == PRIMARY and len(rows) > 1:
            table.add_section()
    return table


def _styled(text: str, verdict: str) -> str:
    """``text`` in the verdict's colour (rich markup)."""
    style = VERDICT_STYLE.get(verdict, "")
    return f"[{style}]{text}[/]" if style else text


def print_report(result: ComparisonResult, console: Any | None = None) -> None:
    """The final report: alignment lines, one verdict table per treatment (a sweep: its grid, best first),
    the verdict sentences (from :mod:`abcompare.outcome.sentences`), and where the result was recorded; a
    comparison across collections: :func:`print_collections_report`'s.

    Piped (not a terminal), sentences are not wrapped and no line ends in spaces, so the text greps and diffs
    cleanly; on a terminal rich wraps them at its width.
    """
    import sys

    from rich.console import Console

    if console is not None:
        _print_report(result, console)
        return
    console = Console()
    if console.is_terminal:
        _print_report(result, console)
        return
    from io import StringIO

    buffer = Console(file=StringIO(), width=240, soft_wrap=True, color_system=None, highlight=False)
    _print_report(result, buffer)
    text = buffer.file.getvalue()
    sys.stdout.write("".join(line.rstrip() + "\n" for line in text.splitlines()))
    sys.stdout.flush()


def _print_report(result: ComparisonResult, console: Any) -> None:
    if result.pooled is None:
        _print_comparison(next(iter(result.collections.values())), console, result.recorded)
    else:
        _print_collections(result, console)


def _print_comparison(result: Comparison, console: Any, recorded: list[str]) -> None:

    cfg = result.config
    console.print()
    console.print(
        f"[bold]{plain_text(cfg.name)}[/]  dataset [bold]{plain_text(result.dataset_name)}[/] "
        f"({plural(result.n_queries, 'query')}, "
        f"level {cfg.dataset.level}, convention {cfg.evaluation.convention})"
    )
    alignment = list(result.alignment.items())
    for name, report in alignment if len(alignment) <= 4 else alignment[:1]:
        summary = report.summary().removeprefix("alignment: ")
        console.print(f"  alignment of {plain_text(name)}: {plain_text(summary)}")
    if len(alignment) > 4:
        console.print(f"  {plain_text(treatments_alignment(alignment[1:]))}")
    if result.judged:
        judged = {name: asdict(coverage) for name, coverage in result.judged.items()}
        line = shared.judged_line(judged, result.judgments_relevant_only)
        console.print(f"  {plain_text(line)}")
    for note in result.judgment_warnings:
        console.print(f"[bold yellow]warning:[/] {plain_text(note)}")
    swept = set(result.grid["candidate"]) if result.grid is not None else set()
    for name in cfg.treatments:
        if name not in swept:
            console.print()
            console.print(verdict_table(result.comparison, name, cfg.significance.primary))
    if result.grid is not None:
        console.print()
        console.print(grid_table(result.grid, result.primary_metric, cfg.sweep_plan.swept_settings))
    console.print()
    tuned = tuned_sentence(result.tuned) if result.tuned is not None else None
    notes = verdict_notes(result.comparison, result.robustness, result.queries_needed)
    lines = verdicts.verdict_lines(
        result.comparison, tuned, result.grid, result.attribution, notes, result.cost
    )
    for line in lines:
        text = f"  {line.text}" if line.kind in verdicts.UNDER_VERDICT else line.text
        console.print(text, markup=False, highlight=False)
    for line in result.judge.lines() if result.judge is not None else []:
        console.print(f"  {line}", markup=False, highlight=False)
    for line in result.answers.lines() if result.answers is not None else []:
        console.print(f"  {line}", markup=False, highlight=False)
    console.print(f"[dim]{plain_text(settings_line(result.comparison))}[/]", highlight=False)
    for line in recorded:
        console.print(plain_text(line), highlight=False)


def treatments_alignment(reports: list[tuple[str, Any]]) -> str:
    """Many treatments' alignment in one line: ``all`` when every one finds every annotated id, else the
    lowest share and whose it is."""
    name, worst = min(reports, key=lambda item: item[1].fraction_in_run)
    if worst.fraction_in_run >= 1:
        return f"alignment of {len(reports)} treatments: all annotated ids appear among hit keys"
    return (
        f"alignment of {len(reports)} treatments: at least {worst.fraction_in_run:.0%} of annotated ids "
        f"appear among hit keys (lowest: {name})"
    )


def grid_table(grid: pd.DataFrame, metric: str, settings: list[str] | None = None) -> Any:
    """A sweep's candidates on the primary metric as a rich table, best first (the cells are
    :func:`abcompare.outcome.rows.grid_cells`'); significant candidates are starred (★) and in bold."""
    from rich.table import Table

    settings = settings or []
    table = Table(title=f"sweep: {len(grid)} candidates vs control on {metric}, best first (★ significant)",
                  title_justify="left", header_style="bold")  # fmt: skip
    for column, numeric in zip(shared.grid_headers(settings), shared.grid_numeric(settings), strict=True):
        table.add_column(column, justify="right" if numeric else "left", no_wrap=True)
    named = max(len(settings), 1)
    for row in grid.to_dict(orient="records"):
        cells = [plain_text(cell) for cell in shared.grid_cells(row, settings)]
        if row["verdict"] in SIGNIFICANT:
            cells[:named] = [f"[bold]{cell}[/]" for cell in cells[:named]]
        delta, verdict = named + 1, named + 4  # the styled columns of GRID_COLUMNS
        cells[delta] = _styled(cells[delta], row["verdict"])
        cells[verdict] = _styled(cells[verdict], row["verdict"])
        table.add_row(*cells)
    return table


def result_as_json(result: ComparisonResult) -> dict[str, Any]:
    """The comparison as plain JSON for scripts and CI gates (``abcompare run --json``): one collection's
    comparison as :func:`comparison_json` writes it, several as :func:`collections_as_json`."""
    if result.pooled is None:
        ((name, only),) = result.collections.items()
        return comparison_json(only, result.where, name, result.timings)
    return collections_as_json(result)


def comparison_json(
    result: Comparison, where: Recorded | None, name: str, timings: Mapping[str, float]
) -> dict[str, Any]:
    """One collection's comparison as plain JSON, with where it was recorded (``where``: its parent run
    is ``where.collection_run_ids[name]``)."""

    comparison = shared.primary_first(result.comparison).replace({np.nan: None})  # the one reading order
    return {
        "name": result.config.name,
        "dataset": result.dataset_name,
        "n_queries": result.n_queries,
        "primary_metric": result.primary_metric,
        "verdicts": as_json(result.comparison),
        "settings": settings_line(result.comparison),
        "tracking_uri": where.uri if where is not None else None,
        "experiment": result.config.tracking.experiment,
        "parent_run_id": where.collection_run_ids.get(name) if where is not None else None,
        "variant_run_ids": dict(where.variant_run_ids.get(name, {})) if where is not None else {},
        "means": {name: _plain(means) for name, means in result.means.items()},
        "efficiency": {name: _plain(o.efficiency) for name, o in result.variants.items() if o.efficiency},
        "cost": cost_json(result.cost),
        "alignment": {name: report.to_dict() for name, report in result.alignment.items()},
        "comparison": comparison.to_dict(orient="records"),
        "judged": {name: asdict(cov) for name, cov in result.judged.items()},
        "attribution": attribution_json(result.attribution),
        "judgments_relevant_only": result.judgments_relevant_only,
        "judgment_warnings": list(result.judgment_warnings),
        "robustness": _robustness_json(result),
        "queries_needed": _queries_needed_json(result),
        "tuned": _tuned_json(result.tuned),
        "grid": None
        if result.grid is None
        else result.grid.replace({np.nan: None}).to_dict(orient="records"),
        "timings": dict(timings),
        **({} if result.judge is None else {"judge": result.judge.as_json()}),  # only with a judge: section
        **({} if result.answers is None else {"answers": result.answers.as_json()}),  # only with answers:
    }


def _robustness_json(result: Comparison) -> dict[str, Any]:
    """Per treatment: the range of the primary delta the unjudged hits allow, whether the verdict holds over
    it (else the fewest judgments found that flip it, and to what), and the sentence."""

    if result.robustness is None:
        return {}
    return {
        str(row["treatment"]): {**_finite(row), "sentence": robustness_sentence(row)}
        for row in result.robustness.to_dict(orient="records")
    }


def _queries_needed_json(result: Comparison) -> dict[str, Any]:
    """Per treatment: the queries needed to detect min_effect (or the observed delta), with the range from
    the bootstrap of sd(d), and the sentence (``null`` counts: no change to detect)."""

    if result.queries_needed is None:
        return {}
    return {
        str(row["treatment"]): {**_finite(row), "sentence": queries_needed_sentence(row)}
        for row in result.queries_needed.to_dict(orient="records")
    }


def _finite(row: Mapping[str, Any]) -> dict[str, Any]:
    """A table row as JSON values: numpy scalars as Python numbers, NaN and infinities as None."""
    out = {}
    for key, value in row.items():
        if isinstance(value, (np.integer, np.bool_)):
            value = value.item()
        if isinstance(value, (float, np.floating)):
            value = float(value) if np.isfinite(value) else None
        out[key] = value
    return out


def _tuned_json(tuned: Any) -> dict[str, Any] | None:
    """A sweep's tuned comparison as plain data (the per-query held-out table stays in MLflow)."""
    if tuned is None:
        return None

    return {
        "metric": tuned.metric,
        "delta": tuned.delta,
        "ci_low": tuned.ci_low,
        "ci_high": tuned.ci_high,
        "p_value": tuned.p_value,
        "choices": list(tuned.choices),
        "most_chosen": tuned.most_chosen,
        "folds": tuned.folds,
        "sentence": tuned_sentence(tuned),
    }


def _plain(values: Mapping[str, Any]) -> dict[str, Any]:
    return {
        k: (float(v) if isinstance(v, (np.floating, float, int, np.integer)) else v)
        for k, v in values.items()
    }


# ------------------------------------------------------------------------------------------ collections
def _print_collections(result: ComparisonResult, console: Any) -> None:
    """A comparison across collections: each collection's verdict lines under a heading naming it, then the
    pooled verdict sentence per treatment, the per-collection table, the random-effects line (the
    heterogeneity), the settings and where it was recorded."""

    cfg = result.config
    console.print()
    sizes = ", ".join(f"{plain_text(name)} ({c.n_queries:,})" for name, c in result.collections.items())
    console.print(
        f"[bold]{plain_text(cfg.name)}[/]  across {plural(len(result.collections), 'collection')} "
        f"(queries: {sizes}), convention {cfg.evaluation.convention}"
    )
    for name, collection in result.collections.items():
        console.print()
        level = collection.config.dataset.level
        size = plural(collection.n_queries, "query")
        console.print(f"[bold]collection {plain_text(name)}[/]  ({size}, level {level})")
        notes = verdict_notes(collection.comparison, collection.robustness, collection.queries_needed)
        lines = verdicts.verdict_lines(collection.comparison, None, None, collection.attribution, notes, None)
        for line in lines:
            text = f"    {line.text}" if line.kind in verdicts.UNDER_VERDICT else f"  {line.text}"
            console.print(text, markup=False, highlight=False)
    console.print()
    console.print(f"[bold]pooled across {plural(len(result.collections), 'collection')}[/]")
    for row in result.pooled.to_dict(orient="records"):
        treatment = str(row["treatment"])
        console.print(
            pooled_sentence(result.pooled, result.per_collection, treatment), markup=False, highlight=False
        )
        console.print(f"  {random_effects_line(row)}", markup=False, highlight=False)
        non_inferiority = pooled_non_inferiority_sentence(result.pooled, treatment)
        if non_inferiority:
            console.print(f"  {non_inferiority}", markup=False, highlight=False)
    for treatment in result.pooled["treatment"]:
        console.print()
        console.print(per_collection_table(result.per_collection, str(treatment), result.pooled))
    console.print(f"[dim]{plain_text(pooled_settings_line(result))}[/]", highlight=False)
    for line in result.recorded:
        console.print(plain_text(line), highlight=False)


def random_effects_line(row: Mapping[str, Any]) -> str:
    """The random-effects meta-analysis of one treatment's per-collection deltas, and the heterogeneity,
    in the verdict sentences' formats: ``random effects: +0.041 [0.026, 0.056], p < 0.0001; heterogeneity
    tau² = 4.7e-05, I² = 18%, Q = 3.65 (p = 0.302)``."""

    if shared.is_missing(row["meta_effect"]):
        return "random effects: not computed (some collection's per-query deltas do not vary)"
    effect = shared.format_delta(row["meta_effect"], 3)
    interval = shared.format_interval(row["meta_ci_low"], row["meta_ci_high"], 3)
    i2 = shared.MISSING if shared.is_missing(row["i2"]) else f"{row['i2']:.0%}"
    q = shared.MISSING if shared.is_missing(row["q"]) else f"{row['q']:.2f}"
    tau2 = shared.MISSING if shared.is_missing(row["tau2"]) else f"{row['tau2']:.2g}"
    q_p = shared.MISSING if shared.is_missing(row["q_p_value"]) else _p_clause(row["q_p_value"])
    return (
        f"random effects: {effect} {interval}, {_p_clause(row['meta_p_value'])}; heterogeneity "
        f"tau² = {tau2}, I² = {i2}, Q = {q} ({q_p})"
    )


def per_collection_table(per_collection: pd.DataFrame, treatment: str, pooled: pd.DataFrame) -> Any:
    """One treatment's primary metric per collection (queries, delta, interval, p adjusted over every
    collection's primary test, verdict), and the pooled row last."""
    from rich.table import Table

    rows = per_collection[per_collection["treatment"] == treatment]
    metric = rows["metric"].iloc[0] if len(rows) else pooled.attrs.get("metric", "")
    correction = per_collection.attrs.get("correction", "")
    family = f"[dim](p adj.: every collection's primary test, {correction})[/]"
    title = f"{plain_text(treatment)} vs control on {plain_text(str(metric))}, per collection  {family}"
    table = Table(title=title, title_justify="left", header_style="bold")
    for column in ("collection", "queries", "delta", "CI of delta", "p adj.", "verdict"):
        table.add_column(
            column, justify="left" if column in {"collection", "verdict"} else "right", no_wrap=True
        )
    for row in rows.itertuples(index=False):
        table.add_row(
            plain_text(str(row.collection)),
            f"{int(row.n_queries):,}",
            _styled(shared.format_delta(row.delta), row.verdict),
            shared.format_interval(row.ci_low, row.ci_high),
            shared.format_p(row.p_adjusted, shared.TABLE_DIGITS),
            _styled(row.verdict, row.verdict),
        )
    for row in pooled[pooled["treatment"] == treatment].itertuples(index=False):
        table.add_section()
        table.add_row(
            f"[bold]pooled[/] ({row.weighting.replace('_', ' ')})",
            f"{int(row.n_queries):,}",
            _styled(shared.format_delta(row.delta), row.verdict),
            shared.format_interval(row.ci_low, row.ci_high),
            shared.format_p(row.p_adjusted, shared.TABLE_DIGITS),
            _styled(row.verdict, row.verdict),
        )
    return table


def pooled_settings_line(result: ComparisonResult) -> str:
    """How the pooled figures were made: the weighting, the test, the interval, the correction."""
    attrs = result.pooled.attrs
    weighting = "equal weight per collection" if result.weighting == "collection" else "each query equally"
    methods = sorted(set(attrs.get("ci_method") or [])) or ["percentile"]
    note = result.per_collection.attrs.get("correction_note") or ""
    return (
        f"pooled: {weighting}; {attrs.get('test', 'stratified permutation')} test, "
        f"{attrs.get('n_resamples', '')} resamples, seed {attrs.get('seed', '')}; "
        f"stratified bootstrap interval ({', '.join(methods)}), alpha {attrs.get('alpha', '')}; "
        f"p adjusted over the treatments ({attrs.get('correction', '')}); random effects "
        f"{attrs.get('meta_method', '')}" + (f"; {note}" if note else "")
    )


def collections_as_json(result: ComparisonResult) -> dict[str, Any]:
    """A comparison across collections as plain JSON (``abcompare run --json``): the pooled rows with their
    sentence, the per-collection rows, and each collection's own comparison as :func:`result_as_json`
    writes a one-collection one."""

    pooled = [
        {
            **_finite(row),
            "sentence": pooled_sentence(result.pooled, result.per_collection, str(row["treatment"])),
        }
        for row in result.pooled.to_dict(orient="records")
    ]
    margin = result.pooled.attrs.get("non_inferiority_margin")
    for row in pooled:
        if margin is not None and "non_inferiority" in row:
            row["non_inferiority_margin"] = margin
            row["non_inferiority_sentence"] = pooled_non_inferiority_sentence(result.pooled, row["treatment"])
    return {
        "name": result.config.name,
        "primary_metric": result.primary_metric,
        "weighting": result.weighting,
        "collections": {
            name: comparison_json(c, result.where, name, c.timings) for name, c in result.collections.items()
        },
        "pooled": pooled,
        "per_collection": [_finite(row) for row in result.per_collection.to_dict(orient="records")],
        "pooled_settings": pooled_settings_line(result),
        "tracking_uri": result.tracking_uri,
        "experiment": result.config.tracking.experiment,
        "parent_run_id": result.parent_run_id,
        "collection_run_ids": result.collection_run_ids,
        "timings": result.timings,
    }
