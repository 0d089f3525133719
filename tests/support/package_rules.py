"""The package's own shape, read off ``abcompare/``'s source with ``ast`` (nothing is imported), so that
``tests/test_architecture_modules.py`` can name the module, function and line that breaks a rule:

- the import graph between abcompare's modules: every ``import`` and ``from ... import`` of its own
  modules, at module top or inside a function (an import inside a function still ties two modules
  together; hiding an edge there only moves the failure to run time), except under ``if TYPE_CHECKING:``;
- its cycles (strongly connected components of more than one module, or a module importing itself);
- imports of abcompare's own modules inside a function (each ``import`` statement counts once);
- parameters annotated exactly ``Any`` (``typing.Any``; ``dict[str, Any]`` is a typed container, not counted);
- each function's code lines (not blank, not only a comment, not its docstring).
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "abcompare"
ROOT = "abcompare"


@dataclass(frozen=True)
class Finding:
    """One place in the package: its module, the function (or ``""`` at module level), the line, a note."""

    module: str
    function: str
    line: int
    note: str = ""

    def __str__(self) -> str:
        where = f"{self.module}:{self.line}"
        return f"{where} {self.function} {self.note}".strip()


def module_name(path: Path, package: Path = PACKAGE) -> str:
    """``.../abcompare/data/levels.py`` -> ``abcompare.data.levels``; a package's ``__init__`` is the
    package."""
    relative = path.relative_to(package.parent).with_suffix("")
    return ".".join(part for part in relative.parts if part != "__init__")


@cache
def sources(package: Path = PACKAGE) -> dict[str, tuple[Path, ast.Module, str]]:
    """Every module of the package: its name -> (path, parsed tree, text)."""
    found = {}
    for path in sorted(package.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        found[module_name(path, package)] = (path, ast.parse(text), text)
    return found


def _is_type_checking(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
        or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")
    )


def _walk(node: ast.AST, function: str = "") -> Iterator[tuple[ast.AST, str]]:
    """Each node with the name of the innermost function around it (``""`` outside any), skipping the
    bodies of ``if TYPE_CHECKING:`` (a type named for checkers ties nothing together at run time)."""
    for child in ast.iter_child_nodes(node):
        if _is_type_checking(child):
            for other in child.orelse:
                yield other, function
                yield from _walk(other, function)
            continue
        inner = child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else function
        yield child, function
        yield from _walk(child, inner)


def _absolute(module: str, node: ast.ImportFrom, is_package: bool) -> str:
    """The absolute module a ``from`` import names (relative imports resolved against ``module``)."""
    if node.level == 0:
        return node.module or ""
    base = module.split(".")
    if not is_package:
        base = base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _targets(module: str, node: ast.AST, known: set[str], is_package: bool) -> list[str]:
    """The package's modules one import statement loads (a ``from`` of a submodule names the submodule)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names if alias.name.split(".")[0] == ROOT]
    if not isinstance(node, ast.ImportFrom):
        return []
    base = _absolute(module, node, is_package)
    if base.split(".")[0] != ROOT:
        return []
    targets = []
    for alias in node.names:
        sub = f"{base}.{alias.name}"
        targets.append(sub if sub in known else base)
    return targets


@dataclass(frozen=True)
class Edge:
    """``source`` imports ``target`` at ``line``, inside ``function`` (``""``: at module top)."""

    source: str
    target: str
    line: int
    function: str


@cache
def edges(package: Path = PACKAGE) -> tuple[Edge, ...]:
    """Every import of one of the package's modules by another (or by itself), runtime imports only."""
    found = sources(package)
    known = set(found)
    result = []
    for module, (path, tree, _) in found.items():
        is_package = path.name == "__init__.py"
        for node, function in _walk(tree):
            for target in _targets(module, node, known, is_package):
                # ``import abcompare.x.y`` with y unknown (an attribute): the nearest known module
                while target not in known and "." in target:
                    target = target.rsplit(".", 1)[0]
                result.append(Edge(module, target, node.lineno, function))
    return tuple(result)


def _strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components, iteratively (no recursion limit)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    components = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    components.append(sorted(component))
    return components


def import_cycles(package: Path = PACKAGE, *, in_functions: bool = True) -> list[list[str]]:
    """Each set of modules that import one another in a circle (sorted), module-level and (by default)
    in-function imports counted as edges. A package importing its own submodules is not a circle by itself:
    a submodule importing names back from its package ``__init__`` is."""
    graph: dict[str, set[str]] = {}
    for edge in edges(package):
        if edge.function and not in_functions:
            continue
        graph.setdefault(edge.source, set()).add(edge.target)
    cycles = [c for c in _strongly_connected(graph) if len(c) > 1]
    cycles += [[m] for m, targets in graph.items() if m in targets]
    return sorted(cycles)


def in_function_imports(package: Path = PACKAGE) -> list[Finding]:
    """Each ``import`` statement of the package's own modules inside a function (one per statement)."""
    seen = {}
    for edge in edges(package):
        if edge.function:
            seen.setdefault(
                (edge.source, edge.line), Finding(edge.source, edge.function, edge.line, edge.target)
            )
    return sorted(seen.values(), key=lambda f: (f.module, f.line))


def _is_any(annotation: ast.expr | None) -> bool:
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        return annotation.value.strip() in {"Any", "typing.Any"}
    if isinstance(annotation, ast.Name):
        return annotation.id == "Any"
    return isinstance(annotation, ast.Attribute) and annotation.attr == "Any"


def any_parameters(package: Path = PACKAGE) -> list[Finding]:
    """Each parameter (``*args`` and ``**kwargs`` included) annotated exactly ``Any``."""
    found = []
    for module, (_, tree, _) in sources(package).items():
        for node in ast.walk(tree):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            arguments = node.args
            every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
            every += [a for a in (arguments.vararg, arguments.kwarg) if a is not None]
            found += [Finding(module, node.name, a.lineno, a.arg) for a in every if _is_any(a.annotation)]
    return sorted(found, key=lambda f: (f.module, f.line))


def _code_lines(text: str) -> set[int]:
    """The lines of a module that hold a token of code (not blank, not only a comment, not a docstring's
    continuation: a string's lines are counted by its first line only)."""
    lines: set[int] = set()
    skip = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT}
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type in skip or token.type == tokenize.ENDMARKER:
            continue
        lines.update(range(token.start[0], token.end[0] + 1))
    return lines


def function_lengths(package: Path = PACKAGE) -> list[Finding]:
    """Each function's code lines (its docstring excluded; nested functions counted in their parent too),
    as ``Finding``s whose note is the count."""
    found = []
    for module, (_, tree, text) in sources(package).items():
        code = _code_lines(text)
        for node in ast.walk(tree):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            span = set(range(node.lineno, (node.end_lineno or node.lineno) + 1))
            first = node.body[0] if node.body else None
            docstring = isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
            if docstring and isinstance(first.value.value, str):
                span -= set(range(first.lineno, (first.end_lineno or first.lineno) + 1))
            # decorators sit above ``lineno`` and are not counted
            found.append(Finding(module, node.name, node.lineno, str(len(span & code))))
    return sorted(found, key=lambda f: (f.module, f.line))


def functions_over(lines: int, package: Path = PACKAGE) -> list[Finding]:
    """The functions with more than ``lines`` code lines."""
    return [f for f in function_lengths(package) if int(f.note) > lines]


#: What tells one collection from several in code: the pooled section (or the per-collection table, or the
#: top run) present or absent, the config's spelling (``dataset`` / ``datasets``) asked, a count of
#: collections compared with one, a ``several`` flag, a collection's label asked whether it is empty.
SHAPE_BRANCH = re.compile(
    r"\b(pooled|per_collection|datasets|self\.top)\s+is\s+(not\s+)?None"
    r"|\b(config|self|settings)\.dataset\s+is\s+(not\s+)?None"
    r"|\blen\([\w.]*(collections|parts|compared|held)\)\s*(==|!=|>|<|>=|<=)\s*[12]\b"
    r"|\bseveral\b|\b(self|config)\.datasets\s+or\b"
    r"|\bif\s+(not\s+)?(name|label)\s*(:|else\b)"
    r"|\bisinstance\([^)]*Collection"
    r"|\brole\s+(not\s+)?in\s*\(ROLE_"
)


def _code_text(text: str) -> dict[int, str]:
    """Each line's code alone: comments dropped, each string (a docstring, a message) read as ``""``."""
    lines = text.splitlines()
    masked: dict[int, str] = {}
    drop = {tokenize.COMMENT, tokenize.STRING}
    spans = []
    opened: list[tuple[int, int]] = []  # Python 3.12 splits an f-string: FSTRING_START ... FSTRING_END
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        name = tokenize.tok_name[token.type]
        if name == "FSTRING_START":
            opened.append(token.start)
        elif name == "FSTRING_END":
            start = opened.pop()
            if not opened:
                spans.append((start, token.end))
        elif token.type in drop and not opened:
            spans.append((token.start, token.end))
    keep = [list(line) for line in lines]
    for (row, col), (end_row, end_col) in spans:
        for r in range(row, end_row + 1):
            start = col if r == row else 0
            stop = end_col if r == end_row else len(keep[r - 1])
            keep[r - 1][start:stop] = [" "] * (stop - start)
    for number, chars in enumerate(keep, start=1):
        code = "".join(chars).strip()
        if code:
            masked[number] = code
    return masked


def shape_branches(package: Path = PACKAGE) -> list[Finding]:
    """Each line of code that decides "one collection or several" (:data:`SHAPE_BRANCH`), as a ``Finding``
    whose note is the code; ``docs/architecture.md`` says why each that is left stays."""
    found = []
    for module, (_, _, text) in sources(package).items():
        for line, code in sorted(_code_text(text).items()):
            if SHAPE_BRANCH.search(code):
                found.append(Finding(module, "", line, code))
    return found
