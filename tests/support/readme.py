"""The README and the documentation pages as the source of expected figures: their sections, sentences read
with a pattern, and a number shown with exactly the digits a page prints, so that a test and the page cannot
drift apart.

A page is named by its path in the checkout: ``README.md`` (the default) or ``docs/<page>.md``. The
``readme_*`` helpers are the same functions with the README as their page.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from fractions import Fraction
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
DOCS = REPO / "docs"

_FENCE = re.compile(r"^\s*(```|~~~)")
_HEADING = re.compile(r"^(#{1,6}) (.+?)\s*$")


def doc_path(page: str = "README.md") -> Path:
    """The file of ``page`` (``README.md`` or ``docs/<page>.md``); fails when there is none."""
    path = REPO / page
    assert path.is_file(), f"no documentation page {page}"
    return path


def doc_raw(page: str = "README.md") -> str:
    """The page as written, line breaks kept."""
    return doc_path(page).read_text(encoding="utf-8")


def doc_text(page: str = "README.md") -> str:
    """The whole page, with every run of whitespace (line breaks included) folded to one space."""
    return " ".join(doc_raw(page).split())


def _headings(lines: list[str]) -> list[tuple[int, int, str]]:
    """(line index, level, title) of every markdown heading outside fenced code blocks (where ``# ...`` is a
    shell comment)."""
    found, fenced = [], False
    for index, line in enumerate(lines):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        heading = None if fenced else _HEADING.match(line)
        if heading:
            found.append((index, len(heading.group(1)), heading.group(2)))
    return found


def doc_section(page: str, heading: str) -> str:
    """The body of the section titled ``heading`` (at any level) on ``page``, up to the next heading of the
    same or a higher level (its subsections included), line breaks kept."""
    lines = doc_raw(page).splitlines(keepends=True)
    headings = _headings(lines)
    starts = [(index, level) for index, level, title in headings if title == heading]
    assert len(starts) == 1, f"{page} has one section '{heading}' (found {len(starts)})"
    start, level = starts[0]
    end = next((index for index, other, _ in headings if index > start and other <= level), len(lines))
    return "".join(lines[start + 1 : end])


def doc_match(pattern: str, text: str | None = None, page: str = "README.md") -> re.Match[str]:
    """The one match of ``pattern`` in the whitespace-folded ``page`` (or ``text``); fails unless one."""
    haystack = doc_text(page) if text is None else " ".join(text.split())
    found = list(re.finditer(pattern, haystack))
    where = page if text is None else "the text"
    assert len(found) == 1, f"{where} should state exactly once: {pattern!r} (found {len(found)})"
    return found[0]


def readme_text() -> str:
    """The whole README, whitespace folded (:func:`doc_text` of ``README.md``)."""
    return doc_text("README.md")


def readme_section(heading: str) -> str:
    """The body of the README's section ``heading`` (:func:`doc_section` of ``README.md``)."""
    return doc_section("README.md", heading)


def readme_match(pattern: str, text: str | None = None) -> re.Match[str]:
    """The one match of ``pattern`` in the whitespace-folded README (or ``text``): :func:`doc_match`."""
    return doc_match(pattern, text)


def readme_run_command() -> list[str]:
    """The README's main command ("Two commands", after the install), split as a shell splits it."""
    block = re.search(r"```bash\n(.*?)```", readme_section("Two commands"), re.S)
    assert block, "README has a 'Two commands' section with a bash block"
    line = next(line for line in block.group(1).splitlines() if "abcompare run" in line)
    return shlex.split(line.split("&&", 1)[1])


def shell_words(command: str, **variables: str) -> list[str]:
    """The arguments bash passes for ``command`` (one simple command, as a page writes it, ``$NAME``s and
    a trailing ``# comment`` allowed) with ``variables`` set in its environment: bash itself expands and
    splits the line, so a test runs the text as written, not a copy with its placeholders replaced."""
    done = subprocess.run(
        ["bash", "-c", f"set -- {command}\nprintf '%s\\0' \"$@\""], env={**os.environ, **variables},
        capture_output=True, text=True, check=True, timeout=30,
    )  # fmt: skip
    return done.stdout.split("\0")[:-1]


def as_printed(value: float, printed: str) -> str:
    """``value`` written the way ``printed`` is: the same decimals and, when ``printed`` has one, the sign;
    a fraction such as ``2/3`` is matched exactly (``value`` must equal it to 1e-12) and returned as is."""
    if "/" in printed:
        return printed if abs(value - float(Fraction(printed))) <= 1e-12 else repr(value)
    decimals = len(printed.partition(".")[2])
    sign = "+" if printed.startswith("+") else ""
    return f"{value:{sign}.{decimals}f}"


def shows(expected: str, output: str) -> bool:
    """Whether ``output`` says ``expected`` (a line a page shows under a command), where the page's
    ``...`` stands for any text and any run of whitespace for any other."""
    pattern = ".*?".join(re.escape(" ".join(part.split())) for part in expected.split("..."))
    return re.search(pattern, " ".join(output.split())) is not None


def commands_and_output(block: str) -> list[tuple[str, list[str]]]:
    """A shell block's commands, each with the output lines shown under it as ``# ...`` comments."""
    steps: list[tuple[str, list[str]]] = []
    for line in block.splitlines():
        if line.startswith("#"):
            steps[-1][1].append(line.lstrip("#").strip())
        elif line.strip():
            steps.append((line, []))
    return steps
