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


def test_the_paired_tests_bar_shows_one_total_from_its_first_frame() -> None:
    """The bar of ``paired tests`` starts with the count the tests will report (one permutation pass of
    B sign flips over every column, then per treatment a bootstrap of B resamples and one step for its
    table rows: 300 + 2 x (300 + 1) = 902 for two treatments), never another total first."""
    import numpy as np
    import pandas as pd

    from abcompare.stats.comparison import paired_comparison

    ids = pd.Index([f"q{i}" for i in range(12)], name="query_id")
    control = pd.DataFrame({"ndcg@10": np.linspace(0, 1, 12)}, index=ids)
    treatments = {"a": control + 0.05, "b": control - 0.02}
    reporter, _ = _reporter(terminal=True)
    shown: list[tuple[float, float | None]] = []  # (completed, total) as the bar has them after each report
    with reporter.progress("paired tests") as advance:
        bar = _the_bar(reporter)

        def watched(step: int, total: int | None = None) -> None:
            advance(step, total)
            shown.append((bar.tasks[0].completed, bar.tasks[0].total))

        paired_comparison(control, treatments, n_resamples=300, tests=["permutation", "bootstrap"],
                          progress=watched)  # fmt: skip
        completed = bar.tasks[0].completed
    assert shown[0] == (0, 902)  # before the first resample: the whole count
    assert {total for _, total in shown} == {902} and completed == 902
