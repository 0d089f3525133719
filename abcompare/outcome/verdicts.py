"""The verdict section in its one order (a sweep's tuned sentence, then per treatment its verdict and the
lines under it), as the console, ``report.html``, the Markdown job summary and the MLflow description
(:func:`description_markdown`) lay it out; the sentences are :mod:`abcompare.outcome.sentences`'."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pandas as pd

from abcompare.core.vocabulary import PRIMARY
from abcompare.outcome.attribution_sentences import attribution_sentence
from abcompare.outcome.cost_sentences import cost_sentence
from abcompare.outcome.sentences import (
    grid_markdown_table,
    markdown_table,
    non_inferiority_sentence,
    primary_verdict,
    secondary_summary,
    sentence_treatments,
    settings_line,
    sweep_sentence,
    verdict_parts,
)

if TYPE_CHECKING:
    from abcompare.core.settings import PairedComparison

# ------------------------------------------------------------------------------------------ verdicts
#: The kinds of line that sit under a treatment's verdict line (indented in the console, in its paragraph
#: elsewhere), in the order ``verdict_lines`` gives them.
UNDER_VERDICT = ("non_inferiority", "secondary", "attribution", "note", "cost")


@dataclass(frozen=True)
class VerdictLine:
    """One line of the verdict section: ``kind`` is ``tuned``, ``sweep``, ``verdict``, or one of
    ``UNDER_VERDICT`` (the lines under a treatment's verdict, in this order: ``non_inferiority``,
    ``secondary``, ``attribution``: where the primary metric's change comes from, ``note``: what the
    unjudged hits could do and the queries needed, ``cost``); ``verdict`` is the primary verdict of a
    ``verdict`` line (for its colour), the non-inferiority verdict of a ``non_inferiority`` line."""

    kind: str
    text: str
    verdict: str = ""
    head: str = ""  # a ``verdict`` line's verdict itself (its text's start), which views may set in bold


def verdict_lines(
    tested: PairedComparison,
    tuned_sentence: str | None,
    grid: pd.DataFrame | None,
    attribution: pd.DataFrame | None = None,
    notes: Mapping[str, Sequence[str]] | None = None,
    cost: pd.DataFrame | None = None,
) -> list[VerdictLine]:
    """The verdict section in its one order: a sweep's tuned sentence and its count, then per treatment
    (a sweep: only the candidates that differ) its verdict sentence, its non-inferiority line, its
    secondary line, where its primary metric's change comes from (``attribution``: the attribution
    summary, when there is one), its ``notes`` (``outcome.sentences.verdict_notes``) and its cost line
    (from the ``cost`` table, when the treatment retrieved)."""
    table = tested.table
    lines: list[VerdictLine] = []
    if tuned_sentence:
        lines.append(VerdictLine("tuned", tuned_sentence))
    if grid is not None:
        lines.append(VerdictLine("sweep", sweep_sentence(grid, tested)))
    for name in sentence_treatments(table, grid):
        head, rest = verdict_parts(tested, name)
        lines.append(VerdictLine("verdict", head + rest, primary_verdict(table, name), head))
        non_inferiority = non_inferiority_sentence(tested, name)
        if non_inferiority:
            verdict = str(table.loc[(table["treatment"] == name) & (table["role"] == PRIMARY),
                                    "non_inferiority"].iloc[0])  # fmt: skip
            lines.append(VerdictLine("non_inferiority", non_inferiority, verdict))
        secondary = secondary_summary(tested, name)
        if secondary:
            lines.append(VerdictLine("secondary", secondary))
        primary = table.loc[(table["treatment"] == name) & (table["role"] == PRIMARY), "metric"]
        attributed = attribution_sentence(attribution, name, str(primary.iloc[0])) if len(primary) else ""
        if attributed:
            lines.append(VerdictLine("attribution", attributed))
        lines.extend(VerdictLine("note", note) for note in (notes or {}).get(name, ()))
        if cost is not None and name in cost.index and "control" in cost.index:
            lines.append(VerdictLine("cost", cost_sentence(cost, name)))
    return lines


def description_markdown(
    tested: PairedComparison,
    *,
    context: str,
    tuned: str | None = None,
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
    that differ, and tabulates the grid (best first) instead of every row; ``tuned`` is its sentence
    (``outcome.sentences.tuned_sentence``).
    """
    paragraphs: list[str] = []
    for line in verdict_lines(tested, tuned, grid, attribution, notes, cost):
        if line.kind == "tuned":
            paragraphs.append(f"**{line.text}**")
        elif line.kind == "verdict" and tuned is None and line.text.startswith(line.head):
            # the verdict itself in bold, short enough to stay above MLflow's "Show more" fade
            paragraphs.append(f"**{line.head}**{line.text[len(line.head) :]}")
        else:
            paragraphs.append(line.text)
    body = grid_markdown_table(grid, grid_settings) if grid is not None else markdown_table(tested.table)
    paragraphs.append(body)
    paragraphs.append(context)
    paragraphs.append(f"_{settings_line(tested)}_")
    return "\n\n".join(paragraphs) + "\n"
