"""The import rules of docs/architecture.md, checked on the code: data flows one way, stages stay apart.

Every ``import`` and ``from ... import`` of abcompare's own modules is read from the source (function-level
imports included; ``support/package_rules.py`` reads them), so a stage that reaches into another fails here,
not in a review. The rules between modules (no circle, imports at module top) are in
``test_architecture_modules.py``.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest
from support.package_rules import edges

PACKAGE = Path(__file__).resolve().parents[1] / "abcompare"

#: The package every other one may import: rules and names, importing only itself.
SHARED = {"core"}

#: What each part may import besides itself and ``core``.
ALLOWED: dict[str, set[str]] = {
    "core": set(),
    # the config composes each stage's settings models, and its significance section is checked by the
    # statistics stage's own checker (one place for the rules between the test settings)
    "config": {"retrieval", "examples", "stats"},
    "data": {"examples"},
    "examples": {"retrieval"},  # the example's builder chunks its documents to write chunk-level qrels
    "retrieval": set(),
    "evaluation": set(),
    # the relevance judge: a file of model-made labels is read by data's annotations reader
    # and its stage pools and scores with data's and evaluation's functions, then stats' agreement and PPI
    "judging": {"data", "evaluation", "stats"},
    # answers: generated from the hits, scored by the judge (judging), tested by the paired tests (stats);
    # its answers and ratings files read by data's one JSONL rule
    "answers": {"judging", "stats", "data"},
    "stats": set(),
    "outcome": {"stats"},  # every way a person reads a comparison, from the statistics' tables
    # MLflow writes what outcome renders (the description, the figures) and each variant's run file in
    # data's TREC format (data.runs.write_run, the one writer of that format)
    "tracking": {"outcome", "data"},
    # the retrieval stage's executor: a variant's run from its run file (data) or retrieved (retrieval),
    # here or on Ray; it reads its settings' type (config); on Ray it also scores a large run in blocks of
    # queries with the evaluation stage's own functions (issue 38), in this process otherwise
    "execution": {"config", "data", "retrieval", "evaluation"},
    "cli": {"config", "runner", "outcome", "tracking", "starter"},
    # `abcompare init`: reads a dataset and its runs (data) and writes a config that loads (config)
    "starter": {"config", "data", "examples"},
}

#: The stages whose order only the runner knows.
STAGES = {"data", "retrieval", "evaluation", "stats", "outcome", "tracking"}


#: Top-level modules that belong to another: the runner's input checks (run before any run opens), the
#: command line's shared options.
BELONGS_TO = {"inputs": "runner", "cli_options": "cli"}


def _part(module: str) -> str:
    """``abcompare.data.runs`` -> ``data``; ``abcompare.core.errors`` -> ``errors``; ``abcompare.inputs``
    (the runner's input checks) -> ``runner`` (:data:`BELONGS_TO`)."""
    parts = module.split(".")
    part = parts[1] if len(parts) > 1 else "abcompare"
    return BELONGS_TO.get(part, part)


def imports_by_part() -> dict[str, set[str]]:
    """Which part imports which, from the module graph of ``support.package_rules`` (runtime imports at
    module top or in a function; ``if TYPE_CHECKING:`` imports are types for checkers, not dependencies)."""
    graph: dict[str, set[str]] = defaultdict(set)
    for edge in edges():
        # ``import abcompare`` (the package, e.g. for its path) is no stage's dependency
        if edge.target != "abcompare" and _part(edge.target) != _part(edge.source):
            graph[_part(edge.source)].add(_part(edge.target))
    return graph


GRAPH = imports_by_part()


def test_core_imports_nothing_but_itself():
    assert GRAPH.get("core", set()) == set(), GRAPH.get("core")


@pytest.mark.parametrize("part", sorted(ALLOWED))
def test_each_stage_imports_only_what_the_architecture_allows(part):
    assert GRAPH.get(part, set()) <= SHARED | ALLOWED[part], sorted(
        GRAPH.get(part, set()) - SHARED - ALLOWED[part]
    )


def test_only_the_runner_knows_the_order_of_the_stages():
    knowing = {part for part, imported in GRAPH.items() if len(imported & STAGES) > 1}
    # execution produces one stage's output (each variant's run) from a run file or by retrieving it;
    # tracking stores what the others made (it writes, it never calls a stage); the CLI prints a result
    # (outcome) and reads a logged one back (tracking) without calling a stage
    # the config reads the settings models and the checker of the stages it configures, calling none;
    # the judge's one stage pools (data), scores (evaluation) and tests (stats) its own labels, called
    # once by the runner after the paired tests; the answers' one stage likewise reads its answers and
    # ratings files by data's JSONL rule and tests (stats) its scores
    assert knowing <= {"runner", "execution", "tracking", "cli", "config", "judging", "answers"}, knowing
    assert GRAPH["config"] & STAGES <= {"retrieval", "stats"}
    assert GRAPH["cli"] & STAGES <= {"outcome", "tracking"}
    assert GRAPH["tracking"] & STAGES <= {"outcome", "data"}


def test_every_module_is_covered_by_a_rule():
    modules = [p.relative_to(PACKAGE.parent).with_suffix("").parts for p in PACKAGE.rglob("*.py")]
    parts = {_part(".".join(m for m in module if m != "__init__")) for module in modules}
    ruled = set(ALLOWED) | {"runner", "abcompare"}
    assert parts <= ruled, sorted(parts - ruled)


def test_the_top_level_holds_at_most_eight_modules_beside_the_packages():
    modules = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(modules) <= 8, modules


def test_the_tests_mirror_the_packages():
    """Each package's tests live in ``tests/<package>/``, so a newcomer finds them where the code is."""
    packages = sorted(p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file())
    tests = PACKAGE.parent / "tests"
    assert [name for name in packages if not (tests / name).is_dir()] == []
