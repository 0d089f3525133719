"""Arrow's allocator: the system's in a new process, whichever is imported first; a user's choice wins."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


def _backend(code: str, **env: str) -> str:
    environment = {k: v for k, v in os.environ.items() if k != "ARROW_DEFAULT_MEMORY_POOL"} | env
    out = subprocess.run(
        [sys.executable, "-c", code + "\nimport pyarrow as pa\nprint(pa.default_memory_pool().backend_name)"],
        capture_output=True, text=True, check=True, env=environment,
    )  # fmt: skip
    assert out.stderr == ""  # naming the pool never makes Arrow warn
    return out.stdout.strip().splitlines()[-1]


@pytest.mark.parametrize(
    "code",
    [
        "import abcompare",  # pyarrow not started yet: the environment names the pool
        "import pyarrow, abcompare.data.runs",  # pyarrow first: the reader sets the pool
        "import pyarrow, abcompare.evaluation.batch",  # pyarrow first: the evaluator sets the pool
    ],
)
def test_abcompare_makes_arrow_use_the_system_allocator(code: str) -> None:
    assert _backend(code) == "system"


def test_a_pool_named_by_the_user_is_kept() -> None:
    assert _backend("import abcompare.data.runs", ARROW_DEFAULT_MEMORY_POOL="mimalloc") == "mimalloc"


def test_a_pool_set_in_the_process_is_kept() -> None:
    code = "import pyarrow as pa\npa.set_memory_pool(pa.jemalloc_memory_pool())\nimport abcompare.data.runs"
    assert _backend(code) == "jemalloc"


def test_the_choice_is_idempotent() -> None:
    code = (
        "from abcompare.core.arrow_memory import prefer_system_pool\n"
        "assert prefer_system_pool() == prefer_system_pool() == 'system'"
    )
    assert _backend(code) == "system"
