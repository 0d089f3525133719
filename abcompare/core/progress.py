"""Progress as the stages report it: the silent :class:`Reporter` (library and tests) and the console's
:class:`ConsoleReporter` (stage lines and bars on stderr, so stdout stays clean for ``--json``)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from abcompare.core.errors import one_line


class Reporter:
    """Receives the runner's progress; this base class stays silent (library and test use).

    It is also where an interrupt is noticed: a Ctrl-C that Python swallowed (it can land inside a
    library's garbage-collection callback) is raised again at the next stage or progress step.
    """

    interrupted: bool = False

    def checkpoint(self) -> None:
        """Raise ``KeyboardInterrupt`` if an interrupt was requested and not yet acted on."""
        if self.interrupted:
            raise KeyboardInterrupt

    def stage(self, message: str) -> None:
        """A new step has started."""
        self.checkpoint()

    def warn(self, message: str) -> None:
        """Something the user should know about, that does not stop the run."""

    @contextmanager
    def progress(self, description: str, total: int | None = None) -> Iterator[Any]:
        """A progress context yielding ``advance(step, total)``; silent here."""
        yield lambda step, total=None: self.checkpoint()


class ConsoleReporter(Reporter):
    """Progress bars and stage lines on stderr with rich, so stdout stays clean for ``--json``."""

    def __init__(self, quiet: bool = False) -> None:
        from rich.console import Console

        self.console = Console(stderr=True)
        self.quiet = quiet

    def stage(self, message: str) -> None:
        self.checkpoint()
        if not self.quiet:
            self.console.print(f"[bold cyan]•[/] {plain_text(message)}")

    def warn(self, message: str) -> None:
        self.console.print(f"[bold yellow]warning:[/] {plain_text(message)}")

    @contextmanager
    def progress(self, description: str, total: int | None = None) -> Iterator[Any]:
        """A bar for ``description``. A pass that starts at step 0 with its own total (the embedding cache's
        encoding of chunks or queries, before a variant retrieves) is labelled and counted as encoding:
        ``control: encoding 0/231``, then ``control: retrieving 0/124``."""
        if self.quiet or not self.console.is_terminal:
            # piped or redirected: a bar would leave only blank lines behind (the stage lines say enough)
            yield lambda step, total=None: self.checkpoint()
            return
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        columns = (TextColumn("  {task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
        subject, _, verb = description.rpartition(": ")
        encoding = f"{subject}: encoding" if subject and verb == "retrieving" else None
        with Progress(*columns, console=self.console, transient=True) as bar:
            task = bar.add_task(description, total=total)
            state = {"encoding": False}

            def advance(step: int, new_total: int | None = None) -> None:
                self.checkpoint()
                if encoding is not None and step == 0 and new_total is not None:
                    state["encoding"] = True  # an encoding pass starts: count its texts, not the queries
                    bar.update(task, description=encoding, total=new_total, completed=0)
                    return
                if state["encoding"] and step == bar.tasks[0].total:
                    state["encoding"] = False  # the pass is done; the next steps are queries again
                    bar.update(task, completed=step)
                    bar.update(task, description=description, total=total, completed=0)
                    return
                if new_total is not None and not state["encoding"]:
                    bar.update(task, total=new_total)
                bar.update(task, completed=step)

            yield advance


def plain_text(text: object) -> str:
    """User-given text (names, ids, paths) for a rich console: square brackets are not markup, and control
    characters cannot move the cursor."""
    from rich.markup import escape

    return escape(one_line(str(text)))
