"""The suite's own rules, read off each test module's source (``ast``), so that ``tests/test_suite_rules.py``
can name the file and line that breaks one:

- a test reads a clock only through ``support/clock.py`` (a ticking clock, or a hang guard): no
  ``time.time``/``perf_counter``/``monotonic``/``sleep``..., ``datetime.now``/``utcnow``/``today`` or
  ``timeit`` anywhere else;
- no test asserts an order on a timing value (``assert elapsed < 5``, ``assert a_seconds <= b_seconds``):
  what a machine's load makes of a timing is no test's business. ``> 0`` (the figure was measured) is
  allowed, and so is a line that says why it is not the machine's load (``# timing-ok: <why>``);
- a test that starts a process (a subprocess, a server, a browser, Ray, a kernel), itself, through a helper
  or through a fixture, is in the ``e2e`` tier (``support/tiers.py``), and every ``e2e`` entry starts one.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
REPO = TESTS.parent
#: The modules through which a test may read a clock (paths relative to ``tests/``).
CLOCK_MODULES = frozenset({"support/clock.py"})

_TIME_READS = (
    "time", "time_ns", "perf_counter", "perf_counter_ns", "monotonic", "monotonic_ns", "process_time",
    "process_time_ns", "thread_time", "thread_time_ns", "clock_gettime", "clock_gettime_ns", "sleep",
    "localtime", "gmtime", "ctime", "asctime", "strftime",
)  # fmt: skip
CLOCK_READS = frozenset(
    {f"time.{name}" for name in _TIME_READS}
    | {f"datetime.datetime.{name}" for name in ("now", "utcnow", "today")}
    | {"datetime.date.today"}
    | {f"pandas.Timestamp.{name}" for name in ("now", "utcnow", "today")}
)
CLOCK_MODULE_NAMES = frozenset({"timeit"})  # every use of these reads a clock

#: A name or key that holds a timing (``elapsed``, ``wall_seconds``, ``"efficiency.seconds_per_query"``).
TIMING_WORD = re.compile(
    r"(?:^|[^a-z])(elapsed|seconds|secs|duration|latency|took|wall|timings?)(?:$|[^a-z])", re.I
)
ORDER = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)
TIMING_OK = re.compile(r"#\s*timing-ok:\s*\S")

#: Functions that import a module by name (their result is an alias of it).
IMPORTERS = frozenset({"require_module", "import_module", "importorskip"})

#: Calls that start another process: a subprocess (the CLI, a server, PostgreSQL, Chromium, pip), a notebook
#: kernel, a Ray cluster (``ray.init`` starts its GCS, raylet and workers). The ``e2e`` tier's mark.
PROCESS_STARTS = frozenset(
    {f"subprocess.{name}" for name in ("run", "Popen", "call", "check_call", "check_output")}
    | {f"os.{name}" for name in ("system", "popen", "fork", "forkpty", "posix_spawn", "execv", "execvp")}
    | {"multiprocessing.Process", "pty.spawn", "pty.fork", "ray.init", "asyncio.create_subprocess_exec"}
    | {"nbclient.NotebookClient", "nbclient.execute", "nbclient.client.NotebookClient"}
)


@dataclass(frozen=True)
class Finding:
    path: str
    line: int
    what: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.what}"


def module_sources() -> Iterator[tuple[str, str]]:
    """Every Python file under ``tests/`` as (path relative to ``tests/``, source)."""
    for path in sorted(TESTS.rglob("*.py")):
        if "__pycache__" not in path.parts:
            yield path.relative_to(TESTS).as_posix(), path.read_text(encoding="utf-8")


def helper_sources() -> Iterator[tuple[str, str]]:
    """The benchmarks' modules a test calls (``benchmarks/harness.py``: a fresh process per measurement),
    as (path relative to the checkout, source): where a test may start a process without a call of its own."""
    for path in sorted((REPO / "benchmarks").glob("*.py")):
        yield path.relative_to(REPO).as_posix(), path.read_text(encoding="utf-8")


def _aliases(tree: ast.AST) -> dict[str, str]:
    """Local name -> the dotted name it stands for, from the module's imports (at any depth)."""
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    names[alias.asname] = alias.name
                else:
                    top = alias.name.split(".")[0]
                    names[top] = top
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        elif (  # ray = require_module("ray"), importlib.import_module("ray"), pytest.importorskip("ray")
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Call)
            and _callee(node.value.func) in IMPORTERS
            and node.value.args
            and isinstance(node.value.args[0], ast.Constant)
            and isinstance(node.value.args[0].value, str)
        ):
            names[node.targets[0].id] = node.value.args[0].value
    return names


def _callee(func: ast.AST) -> str | None:
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None


def dotted(node: ast.AST, aliases: dict[str, str]) -> str | None:
    """``a.b.c`` for a chain of attributes on a name, with the name resolved through the imports."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    head = aliases.get(node.id)
    if head is None:
        return None
    return ".".join([head, *reversed(parts)])


def _outermost(tree: ast.AST) -> Iterator[ast.expr]:
    """Every name and outermost attribute chain (``time.perf_counter``, not also ``time``)."""
    inner: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            inner.add(id(node.value))
    for node in ast.walk(tree):
        if isinstance(node, ast.Name | ast.Attribute) and id(node) not in inner:
            yield node


def clock_reads(path: str, source: str) -> list[Finding]:
    """Every direct clock read of a module (none allowed outside :data:`CLOCK_MODULES`)."""
    if path in CLOCK_MODULES:
        return []
    tree = ast.parse(source, filename=path)
    aliases = _aliases(tree)
    found = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.ImportFrom)
            and node.module == "time"
            and any(a.name == "*" for a in node.names)
        ):
            found.append(Finding(path, node.lineno, "from time import *"))
    for node in _outermost(tree):
        name = dotted(node, aliases)
        if name is None:
            continue
        if name in CLOCK_READS or name.split(".")[0] in CLOCK_MODULE_NAMES:
            found.append(Finding(path, node.lineno, f"reads a clock: {name} (use support.clock)"))
    return sorted(set(found), key=lambda f: f.line)


def _is_timing(node: ast.AST) -> bool:
    if isinstance(node, ast.Call) and _callee(node.func) == "len":
        return False  # how many timings, not how long
    for part in ast.walk(node):
        text = None
        if isinstance(part, ast.Name):
            text = part.id
        elif isinstance(part, ast.Attribute):
            text = part.attr
        elif isinstance(part, ast.Constant) and isinstance(part.value, str):
            text = part.value
        if text is not None and TIMING_WORD.search(text):
            return True
    return False


def _is_collection(node: ast.AST) -> bool:
    if isinstance(node, ast.Set | ast.SetComp | ast.Dict | ast.DictComp):
        return True
    return isinstance(node, ast.Call) and _callee(node.func) in {"set", "frozenset", "dict"}


def _is_zero(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and not isinstance(node.value, bool) and node.value == 0


def timing_asserts(path: str, source: str) -> list[Finding]:
    """Every ``assert`` that orders a timing value (``<``, ``<=``, ``>``, ``>=``) other than ``> 0``, unless
    its lines say why (``# timing-ok: ...``)."""
    if path in CLOCK_MODULES:
        return []
    lines = source.splitlines()
    found = []
    for node in ast.walk(ast.parse(source, filename=path)):
        if not isinstance(node, ast.Assert):
            continue
        span = lines[node.lineno - 1 : (node.end_lineno or node.lineno)]
        above = lines[node.lineno - 2].strip() if node.lineno > 1 else ""
        if above.startswith("#"):  # a comment line just above the assert may say why, too
            span.append(above)
        if any(TIMING_OK.search(line) for line in span):
            continue
        for compare in (n for n in ast.walk(node.test) if isinstance(n, ast.Compare)):
            operands = [compare.left, *compare.comparators]
            for op, left, right in zip(compare.ops, operands[:-1], operands[1:], strict=True):
                if not isinstance(op, ORDER) or _is_collection(left) or _is_collection(right):
                    continue  # ``<=`` of two sets is a subset, not an order
                if not (_is_timing(left) or _is_timing(right)):
                    continue
                measured = isinstance(op, ast.Gt | ast.GtE) and _is_zero(right)
                measured |= isinstance(op, ast.Lt | ast.LtE) and _is_zero(left)
                if not measured:
                    segment = ast.get_source_segment(source, compare) or ast.dump(compare)
                    found.append(Finding(path, compare.lineno, f"asserts on a timing: {segment}"))
    return found


# ------------------------------------------------------------------------------- who starts a process
@dataclass(frozen=True)
class Unit:
    """A top-level function or class of a module under ``tests/`` (a class: all its methods at once)."""

    path: str
    name: str
    line: int
    node: ast.AST

    @property
    def is_test(self) -> bool:
        return self.path.rsplit("/", 1)[-1].startswith("test_") and self.name.startswith(("test_", "Test"))


def _module_names(path: str) -> set[str]:
    """The names a module under ``tests/`` is imported by: ``support.cli``, or a sibling's bare stem."""
    dotted_path = path[: -len(".py")].replace("/", ".")
    return {dotted_path, dotted_path.rsplit(".", 1)[-1]}


def _fixture_args(node: ast.AST) -> set[str]:
    """The fixtures a unit asks for: its parameters, ``@pytest.mark.usefixtures(...)`` and
    ``request.getfixturevalue("name")`` calls (a class: those of its methods)."""
    names: set[str] = set()
    for part in ast.walk(node):
        if isinstance(part, ast.FunctionDef | ast.AsyncFunctionDef):
            names |= {a.arg for a in [*part.args.posonlyargs, *part.args.args, *part.args.kwonlyargs]}
        elif isinstance(part, ast.Call) and _callee(part.func) in {"getfixturevalue", "usefixtures"}:
            names |= {a.value for a in part.args if isinstance(a, ast.Constant) and isinstance(a.value, str)}
    return names


def _is_fixture(node: ast.AST) -> bool:
    for decorator in getattr(node, "decorator_list", []):
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        if isinstance(target, ast.Attribute) and target.attr == "fixture":
            return True
        if isinstance(target, ast.Name) and target.id == "fixture":
            return True
    return False


def process_starters(sources: dict[str, str]) -> dict[tuple[str, str], str]:
    """(path, unit name) -> why, for every unit that starts a process: by a call in
    :data:`PROCESS_STARTS`, by calling a unit that does (through the imports), or by requesting a fixture
    that does (fixtures are matched by name, over every module)."""
    units: dict[tuple[str, str], Unit] = {}
    calls: dict[tuple[str, str], list[tuple[str, int]]] = {}
    by_name: dict[str, tuple[str, str]] = {}
    fixtures: dict[str, list[tuple[str, str]]] = {}
    for path, source in sources.items():
        tree = ast.parse(source, filename=path)
        aliases = _aliases(tree)
        local = {
            node.name
            for node in tree.body
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
        }
        for node in tree.body:
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                continue
            key = (path, node.name)
            units[key] = Unit(path, node.name, node.lineno, node)
            for module in _module_names(path):
                by_name[f"{module}.{node.name}"] = key
            if _is_fixture(node):
                fixtures.setdefault(node.name, []).append(key)
            found = []
            for call in (n for n in ast.walk(node) if isinstance(n, ast.Call)):
                func = call.func
                if isinstance(func, ast.Name) and func.id in local and func.id not in aliases:
                    found.append((f"{path}::{func.id}", call.lineno))
                else:
                    name = dotted(func, aliases)
                    if name is not None:
                        found.append((name, call.lineno))
            calls[key] = found
    starts: dict[tuple[str, str], str] = {}
    changed = True
    while changed:
        changed = False
        for key, unit in units.items():
            if key in starts:
                continue
            why = None
            for name, line in calls[key]:
                target = by_name.get(name) or (
                    tuple(name.split("::", 1)) if "::" in name else None
                )  # a unit of the same module
                if name in PROCESS_STARTS:
                    why = f"line {line}: {name}"
                elif target in starts:
                    why = f"line {line}: {target[1]} ({starts[target]})"
                if why:
                    break
            if why is None:
                for arg in sorted(_fixture_args(unit.node)):
                    started = [f for f in fixtures.get(arg, []) if f in starts and f != key]
                    if started:
                        why = f"fixture {arg} ({starts[started[0]]})"
                        break
            if why is not None:
                starts[key] = why
                changed = True
    return starts


def units_of_tests(sources: dict[str, str]) -> list[Unit]:
    """Every top-level test function and test class of the test modules."""
    found = []
    for path, source in sources.items():
        for node in ast.parse(source, filename=path).body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                unit = Unit(path, node.name, node.lineno, node)
                if unit.is_test:
                    found.append(unit)
    return found
