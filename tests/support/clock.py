"""A clock for the latency timing pass whose every reading is known, so a test pins what the pass makes
of given timings (its rounds, its sample, its budget, its note, its samples) exactly, whatever the load of
the machine the suite runs on. Real timings are measured in ``benchmarks/`` (``bench_cost``)."""

from __future__ import annotations

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
