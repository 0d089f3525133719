"""What the console shows while a comparison runs: stage lines, and progress bars only on a terminal, where
an encoding pass is labelled and counted as encoding (its texts), then the bar counts queries again."""

from __future__ import annotations

import io

from rich.console import Console

from abcompare.core.progress import ConsoleReporter


def _reporter(terminal: bool) -> tuple[ConsoleReporter, io.StringIO]:
    reporter = ConsoleReporter()
    out = io.StringIO()
    reporter.console = Console(file=out, force_terminal=terminal, width=100, color_system=None)
    return reporter, out


def test_piped_output_has_one_line_per_stage_and_no_bar_residue() -> None:
    reporter, out = _reporter(terminal=False)
    reporter.stage("control")
    with reporter.progress("control: retrieving", total=124) as advance:
        advance(0, 231)
        advance(231)
        advance(124)
    reporter.stage("treatment dbsf")
    assert out.getvalue() == "• control\n• treatment dbsf\n"


def test_an_encoding_pass_is_labelled_and_counted_as_encoding_then_queries() -> None:
    reporter, out = _reporter(terminal=True)
    seen: list[tuple[str, float | None, float]] = []
    with reporter.progress("control: retrieving", total=124) as advance:
        advance(0, 231)
        bar = _the_bar(reporter)
        seen.append((bar.tasks[0].description, bar.tasks[0].total, bar.tasks[0].completed))
        advance(100)
        seen.append((bar.tasks[0].description, bar.tasks[0].total, bar.tasks[0].completed))
        advance(231)
        seen.append((bar.tasks[0].description, bar.tasks[0].total, bar.tasks[0].completed))
        advance(7)
        seen.append((bar.tasks[0].description, bar.tasks[0].total, bar.tasks[0].completed))
    assert seen == [
        ("control: encoding", 231, 0),
        ("control: encoding", 231, 100),
        ("control: retrieving", 124, 0),
        ("control: retrieving", 124, 7),
    ]
    assert "control: retrieving" in out.getvalue()


def _the_bar(reporter: ConsoleReporter):
    """The rich Progress behind the live display (rich keeps it as the Live's renderable source)."""
    live = reporter.console._live_stack[-1]  # noqa: SLF001
    return live._get_renderable.__self__  # noqa: SLF001
