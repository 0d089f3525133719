"""The harness: each measurement in a fresh subprocess (wall time of the work, peak RSS), repeats, tables.

A task is ``"module:function"``; the function takes keyword arguments, does its untimed setup (imports,
workload generation) and returns the zero-argument callable to time. The child prints one JSON line:
the timed seconds, its peak RSS (``VmHWM``, see ``peak_rss_mb``; covering setup and work) and its RSS
just before the timed call. With ``dump=PATH`` the child also writes what the callable returned
(through the task module's ``to_frame``) to a Parquet file, outside the timed region, so the parent can
check the numbers without computing them twice.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]


@dataclass
class Measurement:
    """What one tool took on one workload: seconds per repeat, peak and pre-work RSS (MiB)."""

    tool: str
    seconds: list[float] = field(default_factory=list)
    peak_mb: float = float("nan")
    baseline_mb: float = float("nan")
    note: str = ""
    error: str | None = None

    @property
    def best(self) -> float:
        """The fastest repeat (the least disturbed by other load on a shared machine)."""
        return min(self.seconds) if self.seconds else float("nan")

    @property
    def median(self) -> float:
        return statistics.median(self.seconds) if self.seconds else float("nan")


def _status_mb(field: str) -> float:
    """A memory field of /proc/self/status (``VmRSS``, ``VmHWM``) in MiB; NaN where there is none."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def peak_rss_mb() -> float:
    """This process's peak RSS in MiB: ``VmHWM``, the high-water mark of its own address space.

    Not ``getrusage(...).ru_maxrss``: on Linux, exec carries the spawning process's high-water mark into
    ``ru_maxrss`` (measured here: a child of a 2 GB parent reports 2 GB for ``abcompare --help``), so a
    large parent would inflate every child's figure. ``ru_maxrss`` is the fallback off Linux.
    """
    peak = _status_mb("VmHWM")
    return peak if peak == peak else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_child(task: str, kwargs: dict[str, Any], dump: str | None = None) -> dict[str, Any]:
    """Run ``task`` in this process (the child side): setup, timed call, optional dump; the JSON record."""
    module_name, function_name = task.split(":")
    module = importlib.import_module(module_name)
    work = getattr(module, function_name)(**kwargs)
    baseline = _status_mb("VmRSS")
    start = time.perf_counter()
    result = work()
    seconds = time.perf_counter() - start
    peak = peak_rss_mb()
    if dump:
        module.to_frame(result).to_parquet(dump)
    return {"seconds": seconds, "peak_mb": peak, "baseline_mb": baseline}


def measure(
    tool: str,
    task: str,
    kwargs: dict[str, Any],
    *,
    repeats: int = 3,
    timeout: float = 3600.0,
    dump: str | Path | None = None,
    note: str = "",
) -> Measurement:
    """Time ``task(**kwargs)`` ``repeats`` times, each in a fresh interpreter; peak RSS is the largest seen.

    A failing child is recorded in ``error`` (the table shows it) rather than stopping the suite.
    """
    out = Measurement(tool, note=note)
    peaks, baselines = [], []
    for repeat in range(repeats):
        command = [sys.executable, "-m", "benchmarks.harness", task, json.dumps(kwargs)]
        if dump is not None and repeat == 0:
            command.append(str(dump))
        try:
            proc = subprocess.run(
                command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=timeout, check=False
            )
        except subprocess.TimeoutExpired:
            out.error = f"timed out after {timeout:.0f} s"
            break
        if proc.returncode != 0:
            tail = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
            out.error = f"exit {proc.returncode}: {tail[:200]}"
            break
        record = json.loads(proc.stdout.strip().splitlines()[-1])
        out.seconds.append(record["seconds"])
        peaks.append(record["peak_mb"])
        baselines.append(record["baseline_mb"])
    if peaks:
        out.peak_mb = max(peaks)
        out.baseline_mb = min(baselines)
    return out


def wall_time(command: Sequence[str], *, repeats: int = 5, env: dict[str, str] | None = None) -> list[float]:
    """Wall seconds of a whole command (interpreter start included), once per repeat."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run(command, cwd=REPO_ROOT, capture_output=True, check=True, env=env)
        times.append(time.perf_counter() - start)
    return times


# ------------------------------------------------------------------------------------------ tables
def fmt_seconds(seconds: float) -> str:
    """Seconds with a precision that suits their size (``0.0123 s``, ``1.23 s``, ``123 s``)."""
    if seconds != seconds:  # NaN
        return "—"
    if seconds < 0.1:
        return f"{seconds * 1000:.1f} ms"
    if seconds < 10:
        return f"{seconds:.2f} s"
    return f"{seconds:.0f} s"


def fmt_ratio(peer: float, ours: float) -> str:
    """How many times faster abcompare is than the peer (``12.3x``); below 1 means slower."""
    if ours != ours or peer != peer or ours <= 0:
        return "—"
    ratio = peer / ours
    return f"{ratio:.1f}x" if ratio < 100 else f"{ratio:.0f}x"


def fmt_mb(megabytes: float) -> str:
    return "—" if megabytes != megabytes else f"{megabytes:,.0f} MB"


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A GitHub markdown table; the first column is left-aligned, the others right-aligned."""
    align = [":---"] + ["---:"] * (len(header) - 1)
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(align) + " |"]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------ machine
def _version(distribution: str) -> str:
    from importlib import metadata

    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "not installed"


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _memory_gib() -> float:
    try:
        with open("/proc/meminfo") as info:
            for line in info:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) / 1024**2
    except OSError:
        pass
    return float("nan")


def _blas() -> str:
    """numpy's BLAS as threadpoolctl sees it (library, kernel architecture, threads)."""
    try:
        import numpy  # noqa: F401  (loads the BLAS)
        from threadpoolctl import threadpool_info
    except ImportError:
        return "unknown"
    pools = [p for p in threadpool_info() if p.get("user_api") == "blas"]
    return "; ".join(
        f"{p.get('internal_api')} {p.get('version')} "
        f"({p.get('architecture')}, {p.get('num_threads')} threads)"
        for p in pools
    )


def machine_description() -> list[str]:
    """Markdown bullet lines describing the machine and the software the figures were measured with."""
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=REPO_ROOT, capture_output=True, text=True, check=False
    ).stdout.strip()
    env = {name: os.environ.get(name, "unset") for name in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")}
    load = os.getloadavg()
    return [
        f"- CPU: {_cpu_model()}, {os.cpu_count()} cores visible; memory {_memory_gib():.1f} GiB; "
        f"load average at start {load[0]:.2f} (the machine is shared, so ratios matter more than seconds)",
        f"- Python {platform.python_version()} on {platform.system()} {platform.release()}; "
        f"abcompare at commit {commit or 'unknown'}",
        f"- numpy {_version('numpy')}, scipy {_version('scipy')}, pandas {_version('pandas')}, "
        f"pyarrow {_version('pyarrow')}; BLAS: {_blas()}",
        f"- OPENBLAS_CORETYPE={env['OPENBLAS_CORETYPE']}, OPENBLAS_L2_SIZE={env['OPENBLAS_L2_SIZE']} "
        "(left as the machine sets them)",
        f"- peers: pytrec-eval-terrier {_version('pytrec-eval-terrier')}, ranx {_version('ranx')} "
        f"(numba {_version('numba')}), ir-measures {_version('ir-measures')}",
    ]


def peer_available(module: str) -> bool:
    """True when an optional peer (pytrec_eval, ranx, ir_measures) can be imported."""
    return importlib.util.find_spec(module) is not None


if __name__ == "__main__":
    task_name, raw_kwargs = sys.argv[1], json.loads(sys.argv[2])
    dump_path = sys.argv[3] if len(sys.argv) > 3 else None
    print(json.dumps(run_child(task_name, raw_kwargs, dump_path)))
