"""The command line's shared words: the arguments and options several commands take, and help that reads
as plain words (an argument's name in capitals, a flag without a value)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperArgument, TyperCommand, TyperGroup, TyperOption

from abcompare.core.errors import ConfigError


def plain_params(params: list[Any]) -> list[Any]:
    """Help in plain words: an argument is its name in capitals (``CONFIG``, ``[RUN_ID]``), never a Python
    type (``<path>``) or braces (``{config}``); a flag shows no value (no ``<bool>``)."""
    for param in params:
        if isinstance(param, TyperArgument):
            name = (param.name or "").upper()
            param.metavar = name
            param.display_type_rich = lambda ctx: None
            param._usage_display_name = lambda name=name, param=param: name if param.required else f"[{name}]"
        elif isinstance(param, TyperOption) and param.is_flag:
            param.metavar = ""
    return params


class PlainCommand(TyperCommand):
    """A command whose help reads as plain words (:func:`plain_params`)."""

    def get_params(self, ctx: Any) -> list[Any]:
        return plain_params(super().get_params(ctx))


class PlainGroup(TyperGroup):
    """The command group, with the same plain help (its ``--version`` and ``--help`` show no type)."""

    def get_params(self, ctx: Any) -> list[Any]:
        return plain_params(super().get_params(ctx))


ConfigArg = Annotated[Path, typer.Argument(help="The experiment config (YAML).", show_default=False)]
SetOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--set",
        "-s",
        metavar="KEY=VALUE",
        help="Override a config value: key.path=value (repeatable).",
        show_default=False,
    ),
]
#: The exit code of a comparison that ran, was logged and printed, and failed ``--fail-on`` (a CI gate).
GATE_FAILED_EXIT = 4
FailOnOpt = Annotated[
    str | None,
    typer.Option(
        "--fail-on",
        metavar="worse|not-better|inferior",
        help=f"A CI gate: exit {GATE_FAILED_EXIT} when a treatment's primary verdict is worse, not better "
        "(by at least significance.min_effect, when set), or not shown non-inferior (inferior needs the "
        "non-inferiority margin of the config's significance section); the comparison is logged and printed "
        "first.",
        show_default=False,
    ),
]
OptionalConfigArg = Annotated[
    Path | None,
    typer.Argument(help="The experiment config (YAML); or --example NAME.", show_default=False),
]
ExampleOpt = Annotated[
    str | None,
    typer.Option(
        "--example",
        metavar="NAME",
        help="Run a config shipped with abcompare instead (`abcompare examples` lists them).",
        show_default=False,
    ),
]


#: MLflow's own rule for a run id (``mlflow.utils.validation``): a letter or digit, then up to 255 of
#: letters, digits, ``_`` and ``-``.
RUN_ID = re.compile(r"[a-zA-Z0-9][\w\-]{0,255}")


def check_run_id(run_id: str | None) -> str | None:
    """A run id as typed (surrounding blanks dropped), or a located error (exit 2) when it cannot be one,
    before any store is opened."""

    if run_id is None:
        return None
    if not RUN_ID.fullmatch(run_id.strip()):
        raise ConfigError(
            f"{run_id!r} is not an MLflow run id (a letter or digit, then letters, digits, '_' or '-')",
            field="RUN_ID",
            hint="give the comparison's parent run id that `abcompare run` printed, or none for the latest",
        )
    return run_id.strip()


# the options of `abcompare report`
RunIdArg = Annotated[
    str | None,
    typer.Argument(help="The comparison's parent run id (default: the latest).", show_default=False),
]
ReportOutputOpt = Annotated[
    Path | None,
    typer.Option(
        "--output",
        "-o",
        metavar="FILE",
        help="Where to write it (default: report.html for html, stdout for markdown).",
        show_default=False,
    ),
]
ReportFormatOpt = Annotated[
    str,
    typer.Option(
        "--format",
        metavar="html|markdown",
        help="html: the self-contained page (verdicts, plots, tables, per-query wins and losses); "
        "markdown: verdicts, the compact table and the settings as GitHub-flavoured Markdown, for a CI "
        "job summary.",
    ),
]
TrackingUriOpt = Annotated[
    str | None,
    typer.Option(
        "--tracking-uri",
        metavar="URI",
        help="The MLflow store (default: $MLFLOW_TRACKING_URI, else the nearest mlflow.db here or above).",
        show_default=False,
    ),
]
ExperimentOpt = Annotated[
    str | None,
    typer.Option(
        "--experiment",
        metavar="NAME",
        help="The latest comparison of this experiment.",
        show_default=False,
    ),
]
