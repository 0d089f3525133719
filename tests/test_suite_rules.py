"""The suite's own rules, checked on every module under ``tests/`` (``support/suite_rules.py``), each failure
naming file and line: a clock is read only through ``support/clock.py``; no assert orders a timing value;
every test that starts a process is in the ``e2e`` tier, and every ``e2e`` entry still starts one. Each
checker is first shown to fail on a small source that breaks its rule."""

from __future__ import annotations

import textwrap
from functools import cache

import pytest
from support import tiers
from support.suite_rules import (
    clock_reads,
    helper_sources,
    module_sources,
    process_starters,
    timing_asserts,
    units_of_tests,
)


@cache
def sources() -> dict:
    """Every module under tests/ by path: parsed when a test first asks, not at collection (every worker
    collects this module; one runs its tests)."""
    return dict(module_sources())


def lines_of(findings) -> list[int]:
    return [finding.line for finding in findings]


# --------------------------------------------------------------------------------------------- clocks
@pytest.mark.parametrize(
    "source",
    [
        "import time\nstart = time.perf_counter()\n",
        "import time as t\nt.monotonic()\n",
        "from time import perf_counter as now\nnow()\n",
        "import time\nclock = time.time\n",  # handed over without a call: still a read
        "import time\ntime.sleep(0.1)\n",
        "import datetime\ndatetime.datetime.now()\n",
        "import datetime as dt\ndt.date.today()\n",
        "from datetime import datetime\ndatetime.utcnow()\n",
        "import pandas as pd\npd.Timestamp.now()\n",
        "import timeit\ntimeit.default_timer()\n",
        "def f():\n    import time\n    return time.process_time_ns()\n",
    ],
)
def test_the_clock_checker_finds_a_direct_read(source: str) -> None:
    found = clock_reads("runner/test_synthetic.py", source)
    assert lines_of(found) == [len(source.splitlines())], found
    assert str(found[0]).startswith(f"runner/test_synthetic.py:{found[0].line}: reads a clock: ")


def test_the_clock_checker_leaves_the_clock_module_and_other_uses_of_the_names_alone() -> None:
    clock_module = "import time\ndef pause(seconds):\n    time.sleep(seconds)\n"
    assert clock_reads("support/clock.py", clock_module) == []
    others = textwrap.dedent(
        """\
        from support.clock import Deadline, pause
        from abcompare.execution.base import time_driver_side
        import datetime
        deadline = Deadline(60)
        pause(0.1)
        stamp = datetime.datetime(2024, 1, 1)
        row = {"time": 3}
        time = row["time"]
        """
    )
    assert clock_reads("runner/test_synthetic.py", others) == []


def test_no_module_under_tests_reads_a_clock_but_the_clock_module() -> None:
    found = [str(f) for path, source in sources().items() for f in clock_reads(path, source)]
    assert found == [], "read the clock through support/clock.py:\n" + "\n".join(found)


# ---------------------------------------------------------------------------------------- timing asserts
def test_the_timing_checker_finds_an_order_on_a_timing_and_allows_what_is_not_the_machine_s() -> None:
    source = textwrap.dedent(
        """\
        assert elapsed < 5
        assert 0 < run.wall_seconds <= 30
        assert cost["efficiency.seconds_per_query"] >= other["efficiency.seconds_per_query"]
        assert seconds > 0
        assert 0 < seconds
        assert seconds == 3 * TICK
        assert elapsed < 5  # timing-ok: a ticking clock
        # timing-ok: a part of the same interval
        assert stage_seconds <= wall_seconds
        assert {"efficiency.seconds_per_query"} <= set(columns)
        assert count < 5
        assert len(timings) <= 5
        """
    )
    found = timing_asserts("runner/test_synthetic.py", source)
    assert lines_of(found) == [1, 2, 3], found
    assert str(found[0]) == "runner/test_synthetic.py:1: asserts on a timing: elapsed < 5"


def test_no_test_asserts_an_order_on_a_timing_value() -> None:
    found = [str(f) for path, source in sources().items() for f in timing_asserts(path, source)]
    assert found == [], (
        "no test asserts what a machine's load makes of a timing (use support.clock's TickingClock, or say "
        "why with '# timing-ok: ...'):\n" + "\n".join(found)
    )


# ---------------------------------------------------------------------------------------------- tiers
SYNTHETIC = {
    "support/launch.py": "import subprocess\ndef launch(args):\n    return subprocess.run(args)\n",
    "support/fixtures.py": textwrap.dedent(
        """\
        import pytest
        from support.launch import launch
        @pytest.fixture
        def server():
            yield launch(["server"])
        """
    ),
    "runner/test_synthetic.py": textwrap.dedent(
        """\
        import os
        from support.launch import launch
        def helper():
            return os.system("true")
        def test_direct():
            import subprocess
            subprocess.Popen(["x"])
        def test_through_a_helper_of_another_module():
            launch(["x"])
        def test_through_a_helper_of_this_module():
            helper()
        def test_through_a_fixture(server):
            pass
        class TestGrouped:
            def test_one(self):
                ray = require_module("ray")
                ray.init()
        def test_in_process(tmp_path):
            assert tmp_path
        def test_by_name(request):
            request.getfixturevalue("server")
        @pytest.mark.usefixtures("server")
        def test_used():
            pass
        """
    ),
}


def test_the_process_checker_follows_calls_helpers_and_fixtures() -> None:
    starters = process_starters(SYNTHETIC)
    tests = {u.name for u in units_of_tests(SYNTHETIC) if (u.path, u.name) in starters}
    assert tests == {
        "test_direct",
        "test_through_a_helper_of_another_module",
        "test_through_a_helper_of_this_module",
        "test_through_a_fixture",
        "TestGrouped",
        "test_by_name",
        "test_used",
    }
    assert "subprocess.run" in starters[("runner/test_synthetic.py", "test_through_a_fixture")]


@cache
def starters() -> dict:
    return process_starters({**sources(), **dict(helper_sources())})


@cache
def units() -> list:
    return units_of_tests(sources())


def test_every_test_that_starts_a_process_is_in_the_e2e_tier() -> None:
    missing = [
        f"{u.path}:{u.line}: {u.name} starts a process ({starters()[(u.path, u.name)]})"
        for u in units()
        if (u.path, u.name) in starters() and not tiers.in_tier(tiers.E2E, u.path, u.name)
    ]
    assert missing == [], "add these to E2E in tests/support/tiers.py:\n" + "\n".join(missing)


def test_every_e2e_entry_still_starts_a_process() -> None:
    """A test that stopped starting one (the CLI run in-process, say) belongs to the fast loop again."""
    stale = []
    for path, name in tiers.entries(tiers.E2E):
        named = [u for u in units() if u.path == path and name in (None, u.name)]
        if not any((u.path, u.name) in starters() for u in named):
            stale.append(f"{path}::{name}" if name else path)
    assert stale == [], "these E2E entries of tests/support/tiers.py start no process:\n" + "\n".join(stale)


@pytest.mark.parametrize("tier", sorted(tiers.TIERS))
def test_every_tier_entry_names_a_test_that_exists(tier: str) -> None:
    names = {(u.path, u.name) for u in units()}
    unknown = []
    for path, name in tiers.entries(tiers.TIERS[tier]):
        if (path not in sources()) if name is None else ((path, name) not in names):
            unknown.append(f"{path}::{name}" if name else path)
    assert unknown == [], f"{tier} entries of tests/support/tiers.py that name no test"


def test_the_collected_tests_carry_their_tiers_markers(request: pytest.FixtureRequest) -> None:
    """Whatever this session collected (all of it in CI): each test's ``e2e``/``docs`` markers are its
    tiers, and this module's tests are in neither (they parse, they start nothing)."""
    wrong = []
    for item in request.session.items:
        path = item.path.relative_to(tiers.TESTS).as_posix()
        cls = item.getparent(pytest.Class)
        name = cls.name if cls is not None else getattr(item, "originalname", item.name)
        for tier, listed in tiers.TIERS.items():
            if (item.get_closest_marker(tier) is not None) != tiers.in_tier(listed, path, name):
                wrong.append(f"{item.nodeid}: {tier}")
    assert wrong == []
    assert request.node.get_closest_marker("e2e") is None and request.node.get_closest_marker("docs") is None


def test_the_fast_loop_keeps_most_of_the_suite() -> None:
    """The tiers are for what is slow by nature; most test units stay in the fast loop."""
    tiered = {(path, name) for tier in tiers.TIERS.values() for path, name in tiers.entries(tier)}
    whole = {path for path, name in tiered if name is None}
    fast = [u for u in units() if u.path not in whole and (u.path, u.name) not in tiered]
    assert len(fast) > len(units()) / 2, (len(fast), len(units()))
