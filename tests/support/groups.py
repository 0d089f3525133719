"""What runs together on one pytest-xdist worker, and in what order the groups are handed out (pyproject's
pytest settings run ``-n 2 --dist loadgroup --no-loadscope-reorder``; ``tests/conftest.py`` applies this
at collection).

Every test is in one xdist group: a named group below, else its module (so a module's fixtures are set up
once, on one worker). The named groups keep on one worker what must not run twice at once:

- ``models``: the README's SciFact rows of the two model configs (fp32 vs L3, fp32 vs int8). It encodes
  its treatments' models first (the int8 export and L3, which no other group uses), then reads the fp32
  vectors the ``collections`` group has cached by then, so on a cold embedding cache the two workers
  encode different models at once instead of one worker encoding all three in turn;
- ``collections``: the other runs on the real collections with the fp32 MiniLM (SciFact, the four
  collections). With a cold embedding cache they encode the same texts with the same model; on one
  worker the first encodes and the others read the cache, where two workers would encode everything twice
  on the same two cores;
- ``ray``: the tests that start Ray (in the test process, or a head node), one Ray at a time on the
  machine;
- ``server``: the tests of the comparisons logged to the session's tracking server (one per worker), so
  they are run once, against one server.

Order: the named groups first (the longest), then the modules with ``e2e`` or ``docs`` tests, then the
rest, so the many short modules fill in while the long ones finish. Without xdist nothing is reordered.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from support.tiers import ALL, DOCS, E2E, TESTS, in_tier
from support.workers import worker_name

GROUPS: dict[str, dict[str, tuple[str, ...]]] = {
    "models": {
        "runner/test_runner_scifact_models.py": ALL,
    },
    "collections": {
        "runner/test_runner_scifact.py": ALL,
        "retrieval/test_retrieval_scifact.py": ALL,
        "runner/test_runner_collections_readme.py": ALL,
    },
    "ray": {
        "execution/test_execution_ray.py": ALL,
        "execution/test_execution_ray_evaluation.py": ALL,
        "execution/test_execution_cluster.py": ALL,
        "runner/test_runner_collections.py": ALL,
    },
    "server": {
        "runner/test_browser.py": ALL,
        "runner/test_runner_server.py": ALL,
        "runner/test_runner_e2e.py": ALL,
    },
}


def _where(item: pytest.Item) -> tuple[str, str] | None:
    """The module path under tests/ and the top-level name (function or class) of a collected test."""
    try:
        path = Path(str(item.path)).resolve().relative_to(TESTS).as_posix()
    except ValueError:  # collected outside tests/
        return None
    cls = item.getparent(pytest.Class)
    return path, cls.name if cls is not None else getattr(item, "originalname", item.name)


def group_of(path: str, name: str) -> str:
    """The xdist group of the top-level test ``name`` of module ``path``: a named group, else the module."""
    return next((group for group, listed in GROUPS.items() if in_tier(listed, path, name)), path)


def _rank(path: str, group: str) -> int:
    if group in GROUPS:
        return list(GROUPS).index(group)
    in_a_tier = path in E2E or path in DOCS
    return len(GROUPS) + (0 if in_a_tier else 1)


def mark(items: list[pytest.Item]) -> None:
    """Give each collected test its ``xdist_group`` marker and, on an xdist worker, put the groups in the
    order they are handed out (stable: within a group, the collection order)."""
    ranks: dict[int, int] = {}
    for item in items:
        where = _where(item)
        if where is None:
            ranks[id(item)] = len(GROUPS) + 1
            continue
        group = group_of(*where)
        item.add_marker(pytest.mark.xdist_group(group))
        ranks[id(item)] = _rank(where[0], group)
    if worker_name() is not None:
        items.sort(key=lambda item: ranks[id(item)])
