"""Ray in the test process: one ``ray.init(address="local")`` on the loopback interface with two CPUs and a
short temp folder of its own (Ray's socket paths must stay under 108 characters), or the one the session
already started; shut down at the end only when this call started it."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from typing import Any

from support.environment import require_module


def ray_in_this_process() -> Iterator[Any]:
    """A generator for a fixture: yields the ``ray`` module with Ray initialised."""
    ray = require_module("ray")
    if ray.is_initialized():
        yield ray
        return
    temp = tempfile.mkdtemp(prefix="abray-")
    ray.init(address="local", num_cpus=2, _node_ip_address="127.0.0.1", include_dashboard=False,
             log_to_driver=False, _temp_dir=temp)  # fmt: skip
    try:
        yield ray
    finally:
        ray.shutdown()
        shutil.rmtree(temp, ignore_errors=True)
