"""The README as the source of expected figures: its sections, sentences read with a pattern, and a number
shown with exactly the digits the README prints, so that a test and the README cannot drift apart."""

from __future__ import annotations

import re
import shlex
from fractions import Fraction
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def readme_text() -> str:
    """The whole README, with every run of whitespace (line breaks included) folded to one space."""
    return " ".join(README.read_text(encoding="utf-8").split())


def readme_section(heading: str) -> str:
    """The body of the section ``## heading`` up to the next ``## `` heading, line breaks kept."""
    text = README.read_text(encoding="utf-8")
    found = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    assert found, f"README has a section '## {heading}'"
    return found.group(1)


def readme_run_command() -> list[str]:
    """The README's main command ("Two commands", after the install), split as a shell splits it."""
    block = re.search(r"## Two commands.*?```bash\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    assert block, "README has a 'Two commands' section with a bash block"
    line = next(line for line in block.group(1).splitlines() if "abcompare run" in line)
    return shlex.split(line.split("&&", 1)[1])


def readme_match(pattern: str, text: str | None = None) -> re.Match[str]:
    """The one match of ``pattern`` in the whitespace-folded README (or ``text``); fails unless one."""
    haystack = readme_text() if text is None else " ".join(text.split())
    found = list(re.finditer(pattern, haystack))
    assert len(found) == 1, f"README should state exactly once: {pattern!r} (found {len(found)})"
    return found[0]


def as_printed(value: float, printed: str) -> str:
    """``value`` written the way ``printed`` is: the same decimals and, when ``printed`` has one, the sign;
    a fraction such as ``2/3`` is matched exactly (``value`` must equal it to 1e-12) and returned as is."""
    if "/" in printed:
        return printed if abs(value - float(Fraction(printed))) <= 1e-12 else repr(value)
    decimals = len(printed.partition(".")[2])
    sign = "+" if printed.startswith("+") else ""
    return f"{value:{sign}.{decimals}f}"


def shows(expected: str, output: str) -> bool:
    """Whether ``output`` says ``expected`` (a line the README shows under a command), where the README's
    ``...`` stands for any text and any run of whitespace for any other."""
    pattern = ".*?".join(re.escape(" ".join(part.split())) for part in expected.split("..."))
    return re.search(pattern, " ".join(output.split())) is not None
