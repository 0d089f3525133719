"""A comparison as GitHub-flavoured Markdown, for a CI job's summary (``abcompare report --format markdown``,
e.g. appended to ``$GITHUB_STEP_SUMMARY``): the verdict section, the compact table and the settings line.

The verdict section is :func:`abcompare.outcome.rows.verdict_lines` as the console prints it (each verdict
sentence a paragraph, the lines under it, such as the non-inferiority test, the secondary line or a cost
line, a list under it), the table :func:`abcompare.outcome.sentences.markdown_table` (a sweep: its grid).
Renders :class:`abcompare.outcome.view.ComparisonView`, as ``report.html`` does.
"""

from __future__ import annotations

from abcompare.core.vocabulary import plural
from abcompare.outcome import verdicts
from abcompare.outcome.html import per_collection_markdown
from abcompare.outcome.pooled_sentences import pooled_non_inferiority_sentence, pooled_sentence_parts
from abcompare.outcome.sentences import grid_markdown_table, markdown_table, settings_line
from abcompare.outcome.view import ComparisonView, ExperimentView, PooledView

#: The kinds of verdict line that stand as a paragraph; every other kind is a line under the verdict.
PARAGRAPHS = ("tuned", "sweep", "verdict")


def inline(text: str) -> str:
    """Free text (a name, a sentence) as Markdown that renders it as written: the characters that could
    start markup within a line (``\\ ` * _ | <``) are escaped; brackets without a link after them and
    ``>`` within a line are plain text already."""
    for char in "\\`*_|<":
        text = text.replace(char, "\\" + char)
    return text


def view_markdown(view: ExperimentView) -> str:
    """The view as Markdown (``abcompare report --format markdown``), one renderer for every shape: across
    several collections the pooled section first (the top run's description), then each collection the
    view details (its job summary)."""
    pooled = [pooled_markdown(section) for section in view.sections]
    return "".join([*pooled, *(summary_markdown(shown) for shown in view.alone.values())])


def summary_markdown(inputs: ComparisonView) -> str:
    """One collection's job summary: a heading naming the comparison, what was compared, the verdict
    section, the table (primary metric first) and how it was tested."""
    table = inputs.comparison
    primary = inputs.settings.primary_metric
    parts = [
        f"## abcompare: {inline(inputs.name)}",
        f"Dataset **{inline(inputs.dataset)}**: {plural(inputs.n_queries, 'query')}, "
        f"level {inline(inputs.level)}, convention {inline(inputs.convention)}; "
        f"primary metric **{inline(str(primary))}**.",
    ]
    under: list[str] = []
    lines = verdicts.verdict_lines(
        inputs.tested, inputs.tuned_sentence, inputs.grid, inputs.attribution, inputs.notes, inputs.cost
    )  # the lines the console prints under each verdict: unjudged hits, queries needed, cost
    for line in lines:
        if line.kind in PARAGRAPHS:
            if under:
                parts.append("\n".join(under))
                under = []
            parts.append(inline(line.text))
        else:
            under.append(f"- {inline(line.text)}")
    if under:
        parts.append("\n".join(under))
    if inputs.stage_lines:  # what a judge and the answers concluded
        parts.append("\n".join(f"- {inline(line)}" for line in inputs.stage_lines))
    if inputs.grid is not None and not inputs.grid.empty:
        parts.append(grid_markdown_table(inputs.grid, inputs.grid_settings))
    else:
        parts.append(markdown_table(table))
    parts.append(f"_{inline(settings_line(inputs.tested))}_")
    if inputs.source:
        parts.append(f"Recorded in MLflow: {inline(inputs.source)}.")
    return "\n\n".join(parts) + "\n"


def pooled_markdown(view: PooledView) -> str:
    """The top run's description across collections: each treatment's pooled sentence, what was compared,
    and the per-collection table (collection, queries, delta [interval], p adjusted, verdict)."""

    collections = list(dict.fromkeys(view.per_collection["collection"].astype(str)))
    names = ", ".join(f"`{name}`" for name in collections)
    weighting = "equal weight per collection" if view.weighting == "collection" else "weighted by queries"
    head = f"**{view.name}**: {view.description}".rstrip(": ")
    context = (
        f"{head}. Across {len(collections)} collections ({names}), primary metric "
        f"`{view.primary_metric}`, pooled with {weighting}."
    ).replace(".. ", ". ")
    # the verdicts first, as a comparison's description opens with its verdict: MLflow shows a description's
    # first lines and fades the rest behind "Show more"
    parts = []
    for name in view.pooled["treatment"]:
        treatment = str(name)
        verdict, rest = pooled_sentence_parts(view.pooled, view.per_collection, view.settings, treatment)
        parts.append(f"- **{verdict}**{rest}")  # the verdict in bold, as a comparison's description sets it
        non_inferiority = pooled_non_inferiority_sentence(view.pooled, view.settings, treatment)
        if non_inferiority:
            parts.append(f"  {non_inferiority}")
    parts += [f"- {inline(line)}" for line in view.stage_lines]  # the judge's pooled corrected verdict
    parts.append("")
    parts += [context, ""]
    for treatment in view.pooled["treatment"]:
        parts += [f"**{treatment}** vs control on `{view.primary_metric}`, per collection:", ""]
        parts += [per_collection_markdown(view.per_collection, view.pooled, str(treatment)), ""]
    return "\n".join(parts)


def view_description(view: ComparisonView, context: str) -> str:
    """A comparison's MLflow description (``summary.md``) from its view: the verdicts, the compact table or
    a sweep's grid, what was compared (``context``), how it was tested (``verdicts.description_markdown``)."""
    return verdicts.description_markdown(
        view.tested, context=context, tuned=view.tuned_sentence, grid=view.grid,
        grid_settings=view.grid_settings, attribution=view.attribution, notes=view.notes, cost=view.cost,
    )  # fmt: skip
