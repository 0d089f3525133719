"""Print the "Layout" block of docs/architecture.md from the package itself: one line per top-level module and
package, in the order the data flows, each with the first sentence of its own docstring (so the page cannot
drift from the code: ``tests/test_readme.py`` compares the two).

    python scripts/readme_layout.py
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "abcompare"

#: The rooms in the order a comparison passes through them (the public face and the two doors first).
ORDER = (
    "__init__.py", "cli.py", "cli_options.py", "runner.py", "inputs.py", "starter", "config", "core", "data",
    "execution", "retrieval", "evaluation", "stats", "judging", "answers", "outcome", "tracking", "examples",
)  # fmt: skip


def first_sentence(path: Path) -> str:
    """The first sentence of a module's docstring, on one line."""
    docstring = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    text = " ".join(docstring.split())
    match = re.match(r"(.+?[.!?])(\s|$)", text)
    return match.group(1) if match else text


def layout_lines() -> list[str]:
    """``abcompare/<room>`` and its first sentence, for every room of :data:`ORDER`, aligned."""
    rooms = sorted(p.name for p in PACKAGE.iterdir() if p.suffix == ".py" or (p / "__init__.py").is_file())
    missing = sorted(set(rooms) - set(ORDER))
    if missing:
        raise SystemExit(f"rooms not in ORDER: {missing}")
    entries = []
    for room in ORDER:
        path = PACKAGE / room
        source = path / "__init__.py" if path.is_dir() else path
        shown = f"abcompare/{room}/" if path.is_dir() else f"abcompare/{room}"
        entries.append((shown, first_sentence(source)))
    width = max(len(shown) for shown, _ in entries) + 2
    return [f"{shown:<{width}}{text}" for shown, text in entries]


if __name__ == "__main__":
    print("\n".join(layout_lines()))
