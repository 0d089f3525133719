"""What a person sees on the console: the verdict tables, the sentences, a sweep's grid, and ``--json``.

Consumes tables only (the comparison table, a sweep's grid) and the result's plain fields; knows nothing of
retrieval or MLflow: where a result was recorded arrives as lines of text (``result.recorded``), written by
the tracking side. The figures are :mod:`abcompare.outcome.svg`'s, the HTML report
:mod:`abcompare.outcome.html`'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import pandas as pd

from abcompare.core.progress import plain_text
from abcompare.core.vocabulary import BETTER, INCONCLUSIVE, NO_DIFFERENCE, PRIMARY, SIGNIFICANT, WORSE, plural
from abcompare.outcome import rows as shared
from abcompare.outcome import verdicts
from abcompare.outcome.json_output import result_as_json  # noqa: F401 - `abcompare run --json`'s, read from here too
from abcompare.outcome.pooled_sentences import pooled_settings_line
from abcompare.outcome.sentences import _p_clause, settings_line, treatments
from abcompare.outcome.view import ComparisonView, ExperimentView, PooledView

if TYPE_CHECKING:
    from rich.console import Console

    from abcompare.core.settings import FamilySettings
    from abcompare.data.alignment import AlignmentReport
    from abcompare.outcome.results import ComparisonResult


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


def _print_report(result: ComparisonResult, console: Console) -> None:
    """The report of the result's view (:class:`~abcompare.outcome.view.ExperimentView`), then where it
    was recorded; what the view does not hold (the alignment) read off the result."""
    view = ExperimentView.from_result(result)
    for pooled in view.sections:
        _print_collections(view.collections, pooled, console)
    for name, alone in view.alone.items():
        _print_comparison(alone, result.collections[name].alignment, console)
    for line in result.recorded:
        console.print(plain_text(line), highlight=False)


def _print_comparison(
    view: ComparisonView, alignment: Mapping[str, AlignmentReport], console: Console
) -> None:
    """One collection's comparison: what was compared and how its hits align with the judgments, a verdict
    table per treatment (a sweep: its grid), the verdict lines, the judge's and the answers' lines and the
    settings."""
    console.print()
    console.print(
        f"[bold]{plain_text(view.name)}[/]  dataset [bold]{plain_text(view.dataset)}[/] "
        f"({plural(view.n_queries, 'query')}, level {view.level}, convention {view.convention})"
    )
    _print_alignment(list(alignment.items()), console)
    if view.judged:
        line = shared.judged_line(view.judged, view.judgments_relevant_only)
        console.print(f"  {plain_text(line)}")
    for note in view.judgment_warnings:
        console.print(f"[bold yellow]warning:[/] {plain_text(note)}")
    swept = set(view.grid["candidate"]) if view.grid is not None else set()
    test = view.settings.primary
    for name in treatments(view.comparison):
        if name not in swept:
            console.print()
            console.print(verdict_table(view.comparison, name, test))
    if view.grid is not None:
        console.print()
        console.print(grid_table(view.grid, view.primary_metric, list(view.grid_settings)))
    console.print()
    lines = verdicts.verdict_lines(
        view.tested, view.tuned_sentence, view.grid, view.attribution, view.notes, view.cost
    )
    for line in lines:
        text = f"  {line.text}" if line.kind in verdicts.UNDER_VERDICT else line.text
        console.print(text, markup=False, highlight=False)
    for line in view.stage_lines:
        console.print(f"  {line}", markup=False, highlight=False)
    console.print(f"[dim]{plain_text(settings_line(view.tested))}[/]", highlight=False)


def _print_alignment(alignment: list[tuple[str, AlignmentReport]], console: Console) -> None:
    """Each variant's alignment line; beyond four, the control's and one line for the treatments."""
    for name, report in alignment if len(alignment) <= 4 else alignment[:1]:
        summary = report.summary().removeprefix("alignment: ")
        console.print(f"  alignment of {plain_text(name)}: {plain_text(summary)}")
    if len(alignment) > 4:
        console.print(f"  {plain_text(treatments_alignment(alignment[1:]))}")


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


# ------------------------------------------------------------------------------------------ collections
def _print_collections(
    collections: Mapping[str, ComparisonView], pooled: PooledView, console: Console
) -> None:
    """A comparison across collections: each collection's verdict lines under a heading naming it, then the
    pooled verdict sentence per treatment, the per-collection table, the random-effects line (the
    heterogeneity) and the settings."""

    console.print()
    sizes = ", ".join(f"{plain_text(name)} ({c.n_queries:,})" for name, c in collections.items())
    convention = next(iter(collections.values())).convention
    console.print(
        f"[bold]{plain_text(pooled.name)}[/]  across {plural(len(collections), 'collection')} "
        f"(queries: {sizes}), convention {convention}"
    )
    for name, collection in collections.items():
        console.print()
        size = plural(collection.n_queries, "query")
        heading = f"({size}, level {collection.level}; {COLLECTION_ALONE})"
        console.print(f"[bold]collection {plain_text(name)}[/]  {heading}")
        lines = verdicts.verdict_lines(
            collection.tested, None, None, collection.attribution, collection.notes, None
        )
        for line in lines:
            text = f"    {line.text}" if line.kind in verdicts.UNDER_VERDICT else f"  {line.text}"
            console.print(text, markup=False, highlight=False)
        for line in collection.stage_lines:  # this collection's judge and answers lines
            console.print(f"    {line}", markup=False, highlight=False)
    console.print()
    console.print(f"[bold]pooled across {plural(len(collections), 'collection')}[/]")
    for row in pooled.pooled.to_dict(orient="records"):
        treatment = str(row["treatment"])
        console.print(pooled.sentences[treatment], markup=False, highlight=False)
        console.print(f"  {random_effects_line(row)}", markup=False, highlight=False)
        if treatment in pooled.non_inferiority:
            console.print(f"  {pooled.non_inferiority[treatment]}", markup=False, highlight=False)
    for line in pooled.stage_lines:  # the judge's corrected verdict pooled across the collections
        console.print(line, markup=False, highlight=False)
    for treatment in pooled.pooled["treatment"]:
        console.print()
        table = per_collection_table(pooled.per_collection, str(treatment), pooled.pooled, pooled.family)
        console.print(table)
    settings = pooled_settings_line(pooled.settings, pooled.family, pooled.weighting)
    console.print(f"[dim]{plain_text(settings)}[/]", highlight=False)


#: What a collection's own p-values and intervals are, beside the per-collection table's adjusted ones.
COLLECTION_ALONE = "p and interval in this collection alone; the table below adjusts them over collections"


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
    line = (
        f"random effects: {effect} {interval}, {_p_clause(row['meta_p_value'])}; heterogeneity "
        f"tau² = {tau2}, I² = {i2}, Q = {q} ({q_p})"
    )
    heaviest, share = row.get("meta_heaviest"), row.get("meta_heaviest_weight")
    if heaviest and not shared.is_missing(share):  # why it differs from the pooled delta: the weights
        pooled = "each collection equally" if row.get("weighting") == "collection" else "each query equally"
        line += (
            f"; it weights each collection by 1/(variance + tau²), {share:.0%} on {heaviest}, where the "
            f"pooled {shared.format_delta(row['delta'], 3)} weights {pooled}"
        )
    return line


def per_collection_table(
    per_collection: pd.DataFrame, treatment: str, pooled: pd.DataFrame, family: FamilySettings
) -> Any:
    """One treatment's primary metric per collection (queries, delta, interval, p adjusted over every
    collection's primary test, as ``family`` says, verdict), and the pooled row last."""
    from rich.table import Table

    rows = per_collection[per_collection["treatment"] == treatment]
    metric = rows["metric"].iloc[0] if len(rows) else family.metric
    correction = family.correction
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
