"""Which process owns a run or a folder (host, PID, start time), and whether that process still exists.

A process killed with SIGKILL cannot mark its MLflow runs or remove its temporary folder. So abcompare
records who it is on everything it opens, and the next run on the same host finds what a dead process left
behind. The start time guards against PID reuse: a new process with the old PID is not the owner.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from functools import lru_cache

__all__ = ["ProcessIdentity", "current_process", "is_alive"]


@dataclass(frozen=True)
class ProcessIdentity:
    """Host name, PID and start time (clock ticks since boot on Linux; empty where unknown)."""

    host: str
    pid: int
    started: str


def _proc_stat(pid: int) -> list[str] | None:
    """The fields of ``/proc/<pid>/stat`` after the command name (state first), or None (no such process,
    or no /proc)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            text = handle.read()
    except OSError:
        return None
    return text[text.rfind(")") + 2 :].split()


def start_time(pid: int) -> str:
    """The process's start time as the kernel reports it (field 22 of /proc/<pid>/stat), or ''."""
    fields = _proc_stat(pid)
    return fields[19] if fields is not None and len(fields) > 19 else ""


@lru_cache(maxsize=1)
def current_process() -> ProcessIdentity:
    """This process."""
    return ProcessIdentity(socket.gethostname(), os.getpid(), start_time(os.getpid()))


def is_alive(pid: int, started: str = "") -> bool:
    """Whether process ``pid`` exists on this host, is not a zombie, and (when ``started`` is known) is the
    same process that recorded ``started``, not a later one that reused the PID."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # exists, owned by someone else
    except OSError:
        return False
    fields = _proc_stat(pid)
    if fields is None:
        return not os.path.isdir("/proc")  # no /proc (not Linux): os.kill is all we can know
    if fields and fields[0] in ("Z", "X"):  # killed, not yet reaped
        return False
    return not started or len(fields) <= 19 or fields[19] == started
