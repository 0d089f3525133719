"""Ray in the test process, one per run of consecutive tests: ``ray.init(address="local")`` on the loopback
interface with two CPUs and a short temp folder of its own (Ray's socket paths must stay under 108
characters), started by the first test that asks (the ``ray_in_process`` fixture, tests/conftest.py) and
shared by every later one, so a worker pays Ray's start (and its workers' first imports) once, not once per
module. It is stopped when the worker moves on to another xdist group (:func:`stop_when_leaving`, called
after each test by tests/conftest.py), so it holds no CPUs and no memory while the rest of the session
runs. A Ray the process had before (not started here) is used as it is and left running."""

from __future__ import annotations

import shutil
import tempfile
from typing import Any

import pytest

from support.environment import require_module

#: The temp folder of the Ray this module started, while it runs.
_started: list[str] = []


def shared_ray() -> Any:
    """The ``ray`` module with Ray initialised: the one already running in this process, else a new one."""
    ray = require_module("ray")
    if ray.is_initialized():
        return ray
    temp = tempfile.mkdtemp(prefix="abray-")
    ray.init(address="local", num_cpus=2, _node_ip_address="127.0.0.1", include_dashboard=False,
             log_to_driver=False, _temp_dir=temp)  # fmt: skip
    _started.append(temp)
    return ray


def stop_shared_ray() -> None:
    """Shut down the Ray :func:`shared_ray` started (a Ray started elsewhere is left alone)."""
    while _started:
        import ray

        ray.shutdown()
        shutil.rmtree(_started.pop(), ignore_errors=True)


def _group(item: pytest.Item | None) -> object:
    mark = item.get_closest_marker("xdist_group") if item is not None else None
    return mark.args[0] if mark is not None and mark.args else None


def stop_when_leaving(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """After ``item``: stop the shared Ray when the next test is of another xdist group (or there is none)."""
    if _started and (nextitem is None or _group(nextitem) != _group(item)):
        stop_shared_ray()
