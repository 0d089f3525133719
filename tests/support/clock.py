"""The one place through which a test reads a clock (``tests/test_suite_rules.py`` checks that no other test
module does). Two kinds of reading, neither of them a speed check:

- a clock for the latency timing pass whose every reading is known (:class:`TickingClock`), so a test pins
  what the pass makes of given timings (its rounds, its sample, its budget, its note, its samples) exactly,
  whatever the load of the machine the suite runs on. Real timings are measured in ``benchmarks/``
  (``bench_cost``);
- hang guards: how long a test waits for something that must happen (a server that answers, a run that
  starts, a plot that stands still) before it fails saying so (:class:`Deadline`), and
  :func:`pause` between two polls. Nothing is asserted about how soon it happened.
"""

from __future__ import annotations

import time

import pytest

from abcompare.retrieval import latency

#: A power of two, so that every reading and every difference of two readings is exact in floating point.
TICK = 2.0**-10


class TickingClock:
    """Advances ``tick`` seconds at every reading: a stage, timed by two consecutive readings, takes one
    tick; the pass's other readings (its warm-up, its budget checks) take one tick each too."""

    def __init__(self, tick: float = TICK) -> None:
        self.tick = tick
        self.readings = 0

    def __call__(self) -> float:
        self.readings += 1
        return self.readings * self.tick


def tick_the_timing_pass(monkeypatch: pytest.MonkeyPatch, tick: float = TICK) -> TickingClock:
    """Every timing pass of the test (in this process: the local and Ray backends time in the driver)
    reads ``TickingClock(tick)``."""
    clock = TickingClock(tick)
    monkeypatch.setattr(latency, "CLOCK", clock)
    return clock


# ------------------------------------------------------------------------------------------ hang guards
class Deadline:
    """A hang guard of ``seconds`` from now: only so that a broken build fails instead of hanging the
    suite, never a bound a correct build is expected to meet on a loaded machine."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._end = time.monotonic() + seconds

    def passed(self) -> bool:
        return time.monotonic() >= self._end


def pause(seconds: float) -> None:
    """Wait ``seconds`` (between two polls, or where a test's stand-in system takes its time); the wait is
    at least ``seconds`` and never measured."""
    time.sleep(seconds)
