"""The command line: parses arguments, calls the runner, renders errors once. Nothing else lives here."""

from __future__ import annotations

import json
import os
import shlex
import signal
import sys
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from abcompare.cli_options import (
    GATE_FAILED_EXIT,
    ConfigArg,
    ExampleOpt,
    ExperimentOpt,
    FailOnOpt,
    OptionalConfigArg,
    PlainCommand,
    PlainGroup,
    ReportFormatOpt,
    ReportOutputOpt,
    RunIdArg,
    SetOpt,
    TrackingUriOpt,
    check_run_id,
)
from abcompare.core.errors import AbcompareError, ConfigError, TrackingLostError, disk_full, one_line
from abcompare.core.progress import ConsoleReporter
from abcompare.core.vocabulary import plural

if TYPE_CHECKING:
    import pandas as pd

    from abcompare.config import ExperimentConfig
    from abcompare.outcome.gate import GatedTable


app = typer.Typer(
    name="abcompare",
    help="Did a retrieval change really help? Paired A/B comparison of retrieval variants, logged to MLflow.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    cls=PlainGroup,
)
#: The arguments :func:`main` was given (after the program name): what ``init`` writes into its config's
#: header and what a usage error names. Unset when the app is called some other way: then ``sys.argv``.
_ARGUMENTS: ContextVar[tuple[str, ...] | None] = ContextVar("abcompare_arguments", default=None)


def given_arguments() -> tuple[str, ...]:
    """The command's arguments as typed (after ``abcompare``)."""
    given = _ARGUMENTS.get()
    return tuple(sys.argv[1:]) if given is None else given


def _version(value: bool) -> None:
    """``--version``: ``abcompare <version>`` on stdout, then exit 0 before any command runs."""
    if value:
        from abcompare import __version__

        typer.echo(f"abcompare {__version__}")
        raise typer.Exit()


@app.callback()
def _main_options(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit."),
    ] = False,
) -> None:
    """Did a retrieval change really help? Paired A/B comparison of retrieval variants, logged to MLflow."""


class Interrupted(Exception):
    """Ctrl-C, with what it left behind (said on the one ``interrupted`` line; exit 130)."""

    exit_code = 130


def check_output(path: Path, example: str, option: str = "--output") -> None:
    """The one rule for a file a command writes, checked before any work: not a folder, in a folder that
    exists (nothing is created for it) and that can be written. A problem is a ``ConfigError`` at
    ``option`` (exit 2)."""

    def refuse(message: str, hint: str | None = None) -> ConfigError:
        return ConfigError(f"{path}: {message}", field=option, hint=hint)

    if path.is_dir():
        raise refuse("is a folder", hint=f"give a file name, e.g. {path / example}")
    folder = path.absolute().parent
    if not folder.exists():
        raise refuse(f"the folder {folder} does not exist", hint="create it first, or write elsewhere")
    if not folder.is_dir():
        raise refuse(f"{folder} is not a folder")
    if path.exists() and not os.access(path, os.W_OK):
        raise refuse("cannot write the file: permission denied")
    if not path.exists() and not os.access(folder, os.W_OK | os.X_OK):
        raise refuse(f"cannot write into {folder}: permission denied")


def _route_warnings(stderr) -> None:
    """Show our warnings as one readable line each instead of Python's file:line format."""

    from rich.markup import escape

    def show(message, category, filename, lineno, file=None, line=None):  # noqa: ANN001 - stdlib hook signature
        stderr.print(f"[bold yellow]warning:[/] {escape(one_line(str(message)))}", soft_wrap=True)

    warnings.showwarning = show


def _catch_interrupts(reporter) -> None:
    """Ctrl-C raises KeyboardInterrupt and is remembered, so the runner acts on it even if a library
    swallowed the first one; open runs are then marked KILLED (``tracking.lifecycle.closing_runs``)."""

    def on_interrupt(signum, frame):  # noqa: ANN001 - signal handler signature
        reporter.interrupted = True
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, on_interrupt)
    default_hook = sys.unraisablehook

    def unraisable(info):  # noqa: ANN001 - sys.unraisablehook signature
        if not isinstance(info.exc_value, KeyboardInterrupt):  # swallowed Ctrl-C: already remembered
            default_hook(info)

    sys.unraisablehook = unraisable


@app.command(cls=PlainCommand)
def run(
    config: OptionalConfigArg = None,
    set_: SetOpt = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the result as JSON on stdout (progress stays on stderr).")
    ] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress output.")] = False,
    fail_on: FailOnOpt = None,
    example: ExampleOpt = None,
) -> None:
    """Run the control and every treatment, test the differences, log to MLflow and print the verdict."""

    from abcompare.config import load_config
    from abcompare.outcome.console import print_report
    from abcompare.outcome.gate import check_gate, check_gate_settings, gated_table
    from abcompare.outcome.json_output import result_as_json
    from abcompare.runner import run_comparison

    gate = check_gate(fail_on)
    reporter = ConsoleReporter(quiet=quiet)  # --json too reports progress: on stderr, stdout stays JSON
    _route_warnings(reporter.console)
    _catch_interrupts(reporter)
    config = config_or_example(config, example)
    settings = load_config(config, set_ or [])
    check_gate_settings(gate, settings, config)
    try:
        result = run_comparison(settings, config_path=config, reporter=reporter, background_tracking=True)
    except TrackingLostError as lost:  # computed but not recorded: show the result, then the error (exit 3)
        if lost.result is not None:
            _show(lost.result, as_json, result_as_json, print_report)
        raise
    except KeyboardInterrupt as stop:
        raise Interrupted(_left_behind(stop, settings.tracking.enabled)) from None
    _show(result, as_json, result_as_json, print_report)
    if gate is not None:
        _apply_gate(gated_table(result), gate)


def _apply_gate(gated: GatedTable, gate: str) -> None:
    """The gate's one line on stderr; exit :data:`GATE_FAILED_EXIT` when a treatment fails it."""
    from abcompare.outcome.gate import failing_treatments
    from abcompare.outcome.sentences import gate_sentence

    failing = failing_treatments(gated.table, gate)
    line = gate_sentence(gated.table, gate, failing, metric=gated.metric, margin=gated.margin)
    typer.echo(one_line(line), err=True)
    if failing:
        raise typer.Exit(GATE_FAILED_EXIT)


def _left_behind(stop: KeyboardInterrupt, tracking: bool) -> str:
    """What an interrupted ``run`` left in MLflow: the runs it had open, now KILLED, or none open (not yet
    opened, or already finished: an interrupt outside ``closing_runs``)."""
    if not tracking:
        return "tracking is off: no MLflow run was opened"
    if getattr(stop, "runs_ended", None) == "KILLED":
        return "the open MLflow runs were marked KILLED"
    return "no MLflow run was open"


def _show(result, as_json: bool, result_as_json, print_report) -> None:  # noqa: ANN001 - late imports
    if as_json:
        typer.echo(json.dumps(result_as_json(result), indent=2, default=str))
    else:
        print_report(result)


@app.command(cls=PlainCommand)
def pool(
    config: ConfigArg,
    depth: Annotated[
        int, typer.Option("--depth", "-d", min=1, max=1000, metavar="N", help="Hits per variant.")
    ] = 10,
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", metavar="FILE", help="The pool file (default: <name>-pool.csv)."),
    ] = None,
    fmt: Annotated[
        str | None,
        typer.Option(
            "--format", metavar="csv|jsonl", help="csv or jsonl (default: from the file name, else csv)."
        ),
    ] = None,
    order: Annotated[
        str,
        typer.Option(
            "--order",
            metavar="decisive|stable",
            help="decisive: the hits whose judgment can move the primary delta most first; stable: query by "
            "query, by best rank.",
        ),
    ] = "decisive",
    set_: SetOpt = None,
) -> None:
    """Write every variant's unjudged top hits for annotators; the filled file is more annotations."""
    from rich.console import Console

    from abcompare.config import load_config
    from abcompare.runner import pool_to_file

    if fmt is not None and fmt.strip().lower() not in POOL_FORMATS:
        raise ConfigError(f"unknown format {fmt!r} (csv or jsonl)", field="--format")
    order = order.strip().lower()
    if order not in POOL_ORDERS:
        raise ConfigError(f"unknown order {order!r} (decisive or stable)", field="--order")
    reporter = ConsoleReporter()
    _route_warnings(reporter.console)
    _catch_interrupts(reporter)
    settings = load_config(config, set_ or [])
    default = f"{_file_name(settings.name)}-pool.csv"
    path = output or Path(default)
    check_output(path, example=default)
    chosen = (fmt or "").strip().lower() or ("jsonl" if path.suffix.lower() in JSONL_SUFFIXES else "csv")
    table = pool_to_file(settings, path, fmt=chosen, depth=depth, order=order, reporter=reporter)
    queries = table["query_id"].nunique()
    Console(stderr=True).print(
        f"pooled {plural(len(table), 'unjudged hit')} of {plural(queries, 'query')} (top {depth} of "
        f"{plural(len(settings.variants()), 'variant')}) into {path}"
        + (", the hits whose judgment can move the primary delta most first" if order == "decisive" else "")
        + ": fill in 'grade' (0 = not relevant) and add the "
        "file to dataset.annotations (a list: the original judgments, then the pool)" + _judged_note(table)
    )


def _judged_note(table: pd.DataFrame) -> str:
    """What the judge did to the pool, when a ``judge:`` section graded part of it."""
    if "judged_by" not in table.columns:
        return ""
    asked, graded = int(table["judged_by"].notna().sum()), int(table["judge_grade"].notna().sum())
    return (
        f"; the judge graded {graded} of the {asked} it was asked (judge_grade, judged_by: for review, "
        "never read as people's grades)"
    )


POOL_FORMATS = ("csv", "jsonl")
REPORT_FORMATS = ("html", "markdown")
POOL_ORDERS = ("decisive", "stable")
JSONL_SUFFIXES = (".jsonl", ".json", ".ndjson")


def _file_name(name: str) -> str:
    """A comparison's name as a file name in this folder (a label may hold ``/``; a file name may not)."""
    return name.replace("/", "_").replace("\\", "_")


@app.command(cls=PlainCommand)
def report(
    run_id: RunIdArg = None,
    output: ReportOutputOpt = None,
    fmt: ReportFormatOpt = "html",
    tracking_uri: TrackingUriOpt = None,
    experiment: ExperimentOpt = None,
) -> None:
    """Write a logged comparison as report.html, or as Markdown for a CI job (--format markdown)."""
    from rich.console import Console

    from abcompare.tracking.reader import logged_markdown, logged_report

    chosen = fmt.strip().lower()
    if chosen not in REPORT_FORMATS:
        raise ConfigError(f"unknown format {fmt!r} (html or markdown)", field="--format")
    run_id = check_run_id(run_id)
    if chosen == "html" and output is None:
        output = Path("report.html")
    if output is not None:
        check_output(output, example="report.md" if chosen == "markdown" else "report.html")
    write = logged_markdown if chosen == "markdown" else logged_report
    text, loaded = write(run_id, tracking_uri=tracking_uri, experiment=experiment)
    if output is None:  # markdown to stdout, e.g. >> "$GITHUB_STEP_SUMMARY"
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    output.write_text(text, encoding="utf-8")
    Console(stderr=True).print(
        f"wrote {output} for comparison {loaded.name!r} "
        f"(run {loaded.parent_run_id} in {loaded.tracking_uri})",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )


@app.command(cls=PlainCommand)
def validate(config: ConfigArg, set_: SetOpt = None) -> None:
    """Check a config (keys, types, files) without running anything."""
    from rich.console import Console

    from abcompare.config import load_config

    console = Console(stderr=True)
    _route_warnings(console)
    settings = load_config(config, set_ or [])
    names = ", ".join(settings.treatments)
    from abcompare.runner import validate_inputs

    validate_inputs(settings, config)  # what run refuses about the inputs, validate refuses
    if settings.datasets is not None:
        where = f"{len(settings.datasets)} collections ({', '.join(e.name for e in settings.datasets)})"
    else:
        where = str(settings.dataset.name or settings.dataset.path)
    typer.echo(f"{config}: valid — control vs {names} on {where}")
    _python_note(settings)


def _python_note(settings: ExperimentConfig) -> None:
    """A config whose variants are Python retrievers is valid, but runs only from Python: say so."""
    from abcompare.config.loading import python_retrievers

    named = sorted(set(python_retrievers(settings).values()))
    if named:
        typer.echo(
            f"note: it names Python retrievers ({', '.join(map(repr, named))}): run it from Python with "
            "run_comparison(config, retrievers={NAME: fn}); the command line cannot hand them over"
        )


@app.command(cls=PlainCommand)
def schema() -> None:
    """Print the JSON schema of the experiment config."""
    from abcompare.config import config_schema

    typer.echo(json.dumps(config_schema(), indent=2))


# ------------------------------------------------------------------ starting out: examples and init
def config_or_example(config: Path | None, example: str | None) -> Path:
    """The config a command runs: the file given, or the shipped example named by ``--example`` (from the
    installed package, so it runs from any folder). Exactly one of them: else a usage error (exit 2)."""
    from typer._click.exceptions import MissingParameter, UsageError
    from typer._click.globals import get_current_context

    from abcompare.config.examples import example_config

    if config is not None and example is not None:
        raise UsageError("give a CONFIG or --example NAME, not both", ctx=get_current_context())
    if example is not None:
        return example_config(example)
    if config is None:
        raise MissingParameter(
            "Give a config file, or --example NAME.",
            ctx=get_current_context(),
            param_hint="'CONFIG'",
            param_type="argument",
        )
    return config


@app.command(cls=PlainCommand)
def examples() -> None:
    """List the example configs shipped with abcompare and the question each answers."""
    from abcompare.config.examples import example_configs

    found = example_configs()
    width = max((len(example.name) for example in found), default=0)
    for example in found:
        typer.echo(f"{example.name:<{width}}  {example.question}")
    typer.echo("\nrun one from any folder: abcompare run --example NAME")


@app.command(cls=PlainCommand)
def init(
    dataset: Annotated[
        str | None,
        typer.Option(
            "--dataset",
            metavar="PATH",
            help="A BEIR folder (corpus.jsonl, queries.jsonl, qrels/<split>.tsv), or an example (hr-docs).",
            show_default=False,
        ),
    ] = None,
    runs: Annotated[
        list[str] | None,
        typer.Option(
            "--run",
            metavar="NAME=FILE",
            help="A run file to compare (repeatable; the first is the control). None: BM25 vs hybrid.",
            show_default=False,
        ),
    ] = None,
    queries: Annotated[
        Path | None,
        typer.Option(
            "--queries",
            metavar="FILE",
            help="The queries file (instead of the folder's).",
            show_default=False,
        ),
    ] = None,
    qrels: Annotated[
        Path | None,
        typer.Option(
            "--qrels",
            metavar="FILE",
            help="The judgments file (instead of the folder's).",
            show_default=False,
        ),
    ] = None,
    output: Annotated[
        Path, typer.Option("--output", "-o", metavar="FILE", help="Where to write the config.")
    ] = Path("config.yaml"),
    force: Annotated[bool, typer.Option("--force", help="Overwrite the output file if it exists.")] = False,
) -> None:
    """Write a commented config from what a dataset and its run files hold, after their alignment report."""
    from abcompare.starter.init import write_initial_config

    check_output(output, example="config.yaml")
    if output.exists() and not force:
        raise ConfigError(f"{output}: the file exists", field="--output", hint="use --force to overwrite it")
    arguments = given_arguments()
    given = list(arguments[1:]) if arguments[:1] == ("init",) else []
    command = shlex.join(["abcompare", "init", *given])
    summary = write_initial_config(
        output,
        dataset=dataset,
        runs=runs or [],
        queries=queries,
        qrels=qrels,
        command=command,
        echo=typer.echo,
    )
    typer.echo(f"wrote {output}: {summary}")
    typer.echo(f"next: abcompare validate {output} && abcompare run {output}")


def usage_line(exc: Any) -> str:
    """A usage error (click's, as vendored by typer) as one ``error:`` line: the command, the option or
    argument and what is wrong, and where the options are listed."""

    ctx = getattr(exc, "ctx", None)
    command_path = ctx.command_path if ctx is not None else "abcompare"
    commands = {info.name or info.callback.__name__ for info in app.registered_commands if info.callback}
    arguments = given_arguments()
    if command_path == "abcompare" and arguments[:1] and arguments[0] in commands:
        command_path = f"abcompare {arguments[0]}"  # an option's error, raised in the group's context
    return one_line(f"error: {command_path}: {exc.format_message()} (see '{command_path} --help')")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command ``argv`` (default: this process's arguments) and return its exit code; every failure
    is one line on stderr, and the exit code says what kind it is.

    0 success; 2 bad input (config, data, runs, annotations, an unusable tracking store, a bad option or
    argument, an output path that cannot be written); 3 the comparison was computed but the tracking server
    stopped answering, so it is not recorded (the result is printed with --json and saved to a local
    file); 4 the comparison ran, was logged and printed, and a treatment failed ``run --fail-on`` (the
    gate's line names it); 1 any other failure (a full disk says so); 130 Ctrl-C (the line says what it
    left behind).

    What a command sets for the process (the Ctrl-C handler, the warning display) is put back on return, so
    a caller may call it again in the same process (the tests do).
    """
    from typer._click.exceptions import ClickException, NoArgsIsHelpError, UsageError

    arguments = tuple(sys.argv[1:] if argv is None else argv)
    given = _ARGUMENTS.set(arguments)
    try:
        with _process_settings_restored():
            # without standalone mode, click returns the exit code (130 after Ctrl-C) instead of exiting
            code = app(args=list(arguments), prog_name="abcompare", standalone_mode=False)
        if isinstance(code, int) and code != 0:
            if code == 130:
                typer.echo("interrupted", err=True)
            return code
    except AbcompareError as exc:
        typer.echo(f"error: {exc}", err=True)
        return exc.exit_code
    except Interrupted as exc:
        typer.echo(f"interrupted: {exc}", err=True)
        return exc.exit_code
    except KeyboardInterrupt:
        typer.echo("interrupted", err=True)
        return 130
    except (typer.Abort, typer.Exit) as exc:
        return getattr(exc, "exit_code", 1)
    except NoArgsIsHelpError as exc:  # `abcompare` alone: the help, as asked
        exc.show()
        return 2
    except UsageError as exc:  # a bad option or argument: missing, unknown, out of range
        typer.echo(usage_line(exc), err=True)
        return 2
    except ClickException as exc:  # any other error the CLI framework raises (a file it cannot open)
        typer.echo(one_line(f"error: {exc.format_message()}"), err=True)
        return exc.exit_code
    except Exception as exc:  # noqa: BLE001 - the one place unexpected failures are rendered
        if os.environ.get("ABCOMPARE_DEBUG"):
            raise
        full = disk_full(exc)
        if full is not None:
            typer.echo(f"error: {full}", err=True)
            return full.exit_code

        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        message = f"error: unexpected failure: {type(exc).__name__}: {first}"
        typer.echo(one_line(f"{message} (ABCOMPARE_DEBUG=1 shows the traceback)"), err=True)
        return 1
    finally:
        _ARGUMENTS.reset(given)
    return 0


@contextmanager
def _process_settings_restored() -> Iterator[None]:
    """What a command sets for the whole process, put back afterwards: the SIGINT handler and the
    unraisable hook (:func:`_catch_interrupts`), the warning display (:func:`_route_warnings`)."""
    handler = signal.getsignal(signal.SIGINT)
    unraisable = sys.unraisablehook
    showwarning = warnings.showwarning
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, handler)
        sys.unraisablehook = unraisable
        warnings.showwarning = showwarning


if __name__ == "__main__":
    raise SystemExit(main())
