"""The command line: parses arguments, calls the runner, renders errors once. Nothing else lives here."""

from __future__ import annotations

import json
import os
import signal
import sys
import warnings
from pathlib import Path
from typing import Annotated

import typer

app = typer.Typer(
    name="abcompare",
    help="Did a retrieval change really help? Paired A/B comparison of retrieval variants, logged to MLflow.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)

ConfigArg = Annotated[Path, typer.Argument(help="The experiment config (YAML).", show_default=False)]
SetOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--set", "-s", help="Override a config value: key.path=value (repeatable).", show_default=False
    ),
]


def _route_warnings(stderr) -> None:
    """Show our warnings as one readable line each instead of Python's file:line format."""

    from rich.markup import escape

    from abcompare.core.errors import one_line

    def show(message, category, filename, lineno, file=None, line=None):  # noqa: ANN001 - stdlib hook signature
        stderr.print(f"[bold yellow]warning:[/] {escape(one_line(str(message)))}", soft_wrap=True)

    warnings.showwarning = show


def _catch_interrupts(reporter) -> None:
    """Ctrl-C raises KeyboardInterrupt and is remembered, so the runner acts on it even if a library
    swallowed the first one; the runs are then marked KILLED."""

    def on_interrupt(signum, frame):  # noqa: ANN001 - signal handler signature
        reporter.interrupted = True
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, on_interrupt)
    default_hook = sys.unraisablehook

    def unraisable(info):  # noqa: ANN001 - sys.unraisablehook signature
        if not isinstance(info.exc_value, KeyboardInterrupt):  # swallowed Ctrl-C: already remembered
            default_hook(info)

    sys.unraisablehook = unraisable


@app.command()
def run(
    config: ConfigArg,
    set_: SetOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON on stdout.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress output.")] = False,
) -> None:
    """Run the control and every treatment, test the differences, log to MLflow and print the verdict."""

    from abcompare.config import load_config
    from abcompare.core.errors import TrackingLostError
    from abcompare.core.progress import ConsoleReporter
    from abcompare.outcome.console import print_report, result_as_json
    from abcompare.runner import run_comparison

    reporter = ConsoleReporter(quiet=quiet or as_json)
    _route_warnings(reporter.console)
    _catch_interrupts(reporter)
    settings = load_config(config, set_ or [])
    try:
        result = run_comparison(settings, config_path=config, reporter=reporter, background_tracking=True)
    except TrackingLostError as lost:  # computed but not recorded: show the result, then the error (exit 3)
        if lost.result is not None:
            _show(lost.result, as_json, result_as_json, print_report)
        raise
    _show(result, as_json, result_as_json, print_report)


def _show(result, as_json: bool, result_as_json, print_report) -> None:  # noqa: ANN001 - late imports
    if as_json:
        typer.echo(json.dumps(result_as_json(result), indent=2, default=str))
    else:
        print_report(result)


@app.command()
def pool(
    config: ConfigArg,
    depth: Annotated[int, typer.Option("--depth", "-d", min=1, max=1000, help="Hits per variant.")] = 10,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="The pool file (default: <name>-pool.csv).")
    ] = None,
    fmt: Annotated[
        str | None, typer.Option("--format", help="csv or jsonl (default: from the file name, else csv).")
    ] = None,
    set_: SetOpt = None,
) -> None:
    """Write every variant's unjudged top hits for annotators; the filled file is more annotations."""
    from rich.console import Console

    from abcompare.config import load_config
    from abcompare.core.progress import ConsoleReporter
    from abcompare.runner import pool_to_file

    reporter = ConsoleReporter()
    _route_warnings(reporter.console)
    _catch_interrupts(reporter)
    settings = load_config(config, set_ or [])
    path = output or Path(f"{settings.name}-pool.csv")
    chosen = fmt or ("jsonl" if path.suffix.lower() in (".jsonl", ".json", ".ndjson") else "csv")
    table = pool_to_file(settings, path, fmt=chosen, depth=depth, reporter=reporter)
    queries = table["query_id"].nunique()
    Console(stderr=True).print(
        f"pooled {len(table)} unjudged hits of {queries} queries (top {depth} of "
        f"{len(settings.variants())} variants) into {path}: fill in 'grade' (0 = not relevant) and add the "
        "file to dataset.annotations (a list: the original judgments, then the pool)"
    )


@app.command()
def report(
    run_id: Annotated[
        str | None,
        typer.Argument(help="The comparison's parent run id (default: the latest).", show_default=False),
    ] = None,
    output: Annotated[Path, typer.Option("--output", "-o", help="Where to write the page.")] = Path(
        "report.html"
    ),
    tracking_uri: Annotated[
        str | None,
        typer.Option(
            "--tracking-uri",
            help="The MLflow store (default: $MLFLOW_TRACKING_URI, else the nearest "
            "mlflow.db here or above).",
            show_default=False,
        ),
    ] = None,
    experiment: Annotated[
        str | None,
        typer.Option("--experiment", help="The latest comparison of this experiment.", show_default=False),
    ] = None,
) -> None:
    """Write report.html for a logged comparison: verdicts, plots, tables, per-query wins and losses."""
    from rich.console import Console

    from abcompare.tracking.reader import logged_report

    html, loaded = logged_report(run_id, tracking_uri=tracking_uri, experiment=experiment)
    output.write_text(html, encoding="utf-8")
    Console(stderr=True).print(
        f"wrote {output} for comparison {loaded.name!r} "
        f"(run {loaded.parent_run_id} in {loaded.tracking_uri})",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )


@app.command()
def validate(config: ConfigArg, set_: SetOpt = None) -> None:
    """Check a config (keys, types, files) without running anything."""
    from rich.console import Console

    from abcompare.config import load_config

    console = Console(stderr=True)
    _route_warnings(console)
    settings = load_config(config, set_ or [])
    names = ", ".join(settings.treatments)
    typer.echo(f"{config}: valid — control vs {names} on {settings.dataset.name or settings.dataset.path}")


@app.command()
def schema() -> None:
    """Print the JSON schema of the experiment config."""
    from abcompare.config import config_schema

    typer.echo(json.dumps(config_schema(), indent=2))


def main() -> None:
    """Entry point: every failure is one line on stderr, and the exit code says what kind it is.

    0 success; 2 bad input (config, data, runs, annotations, an unusable tracking store); 3 the comparison
    was computed but the tracking server stopped answering, so it is not recorded (the result is printed
    with --json and saved to a local file); 1 any other failure (a full disk says so); 130 Ctrl-C.
    """
    from abcompare.core.errors import AbcompareError, disk_full

    try:
        # without standalone mode, click returns the exit code (130 after Ctrl-C) instead of exiting
        code = app(standalone_mode=False)
        if isinstance(code, int) and code != 0:
            if code == 130:
                typer.echo("interrupted: the open MLflow runs were marked KILLED", err=True)
            sys.exit(code)
    except AbcompareError as exc:
        typer.echo(f"error: {exc}", err=True)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        typer.echo("interrupted", err=True)
        sys.exit(130)
    except (typer.Abort, typer.Exit) as exc:
        sys.exit(getattr(exc, "exit_code", 1))
    except Exception as exc:  # noqa: BLE001 - the one place unexpected failures are rendered
        if hasattr(exc, "show") and isinstance(getattr(exc, "exit_code", None), int):
            exc.show()  # a usage error (click's, as vendored by typer): missing argument, unknown option
            sys.exit(2)
        if os.environ.get("ABCOMPARE_DEBUG"):
            raise
        full = disk_full(exc)
        if full is not None:
            typer.echo(f"error: {full}", err=True)
            sys.exit(full.exit_code)
        from abcompare.core.errors import one_line

        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        message = f"error: unexpected failure: {type(exc).__name__}: {first}"
        typer.echo(one_line(f"{message} (ABCOMPARE_DEBUG=1 shows the traceback)"), err=True)
        sys.exit(1)
    sys.exit(0)


if __name__ == "__main__":
    main()
