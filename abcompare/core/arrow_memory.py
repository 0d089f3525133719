"""Which allocator Arrow uses for abcompare's column work: the system's, not pyarrow's default mimalloc.

In a new process, mimalloc's handling of fresh memory made reading a 10-million-hit TREC run take twice as
long (4.4 s against 2.0 s with the system allocator; jemalloc did no better than the system's) and the whole
file evaluation about 1.5 times as long (``benchmarks/profile_stages``). A new process is how the CLI, the
benchmarks and most notebooks run. The choice changes no result, only where Arrow's buffers come from.

Arrow reads ``ARROW_DEFAULT_MEMORY_POOL`` when it first allocates, so :func:`choose_before_arrow_starts`
(called by ``import abcompare``, which imports no pyarrow) sets it when pyarrow has not started yet, which is
the cheapest way: mimalloc is then never set up. :func:`prefer_system_pool` (called by the modules that
build Arrow columns) covers a process where pyarrow was already imported. A pool the user named in
``ARROW_DEFAULT_MEMORY_POOL``, or set in this process, is left alone either way.
"""

from __future__ import annotations

import os
import sys

_VARIABLE = "ARROW_DEFAULT_MEMORY_POOL"
_BACKEND = "system"  # always built into pyarrow, so naming it never makes Arrow warn


def choose_before_arrow_starts() -> None:
    """Name the system allocator in ``ARROW_DEFAULT_MEMORY_POOL`` unless pyarrow is already imported or the
    user named a pool."""
    if "pyarrow" not in sys.modules:
        os.environ.setdefault(_VARIABLE, _BACKEND)


def prefer_system_pool() -> str:
    """Make the system allocator Arrow's default pool when the default is still pyarrow's own choice,
    mimalloc, and the user named none; idempotent. Returns the backend in use."""
    import pyarrow as pa

    current = pa.default_memory_pool()
    if os.environ.get(_VARIABLE) or current.backend_name != "mimalloc":
        return current.backend_name
    pa.set_memory_pool(pa.system_memory_pool())
    return _BACKEND
