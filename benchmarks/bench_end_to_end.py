"""End-to-end benchmark: ``abcompare run CONFIG`` as a user runs it, wall time, peak memory, stage shares.

Each measurement is one ``abcompare run --json --quiet`` process; its peak RSS comes from GNU time (see
``run_cli``), its stage times from the ``timings`` of its JSON output (the runner's timer).
One untimed run first warms the embedding cache, so the figures are for a warm cache.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.harness import REPO_ROOT, fmt_mb, fmt_seconds

STAGES: tuple[str, ...] = ("data", "retrieval", "timing", "evaluation", "statistics", "tracking")
MAIN_JOB = "the main job (rrf_vs_dbsf.yaml)"
SWEEP = "a 24-point fusion sweep (fusion_sweep.yaml)"
CASES: dict[str, str] = {
    MAIN_JOB: "configs/rrf_vs_dbsf.yaml",
    SWEEP: "configs/fusion_sweep.yaml",
    "hr-docs example (bm25_vs_hybrid.yaml)": "configs/bm25_vs_hybrid.yaml",
    "SciFact (scifact_bm25_vs_hybrid.yaml)": "configs/scifact_bm25_vs_hybrid.yaml",
}


@dataclass
class EndToEnd:
    """One config's runs: wall seconds per repeat, peak RSS, the runner's stage seconds of the best run."""

    name: str
    seconds: list[float] = field(default_factory=list)
    peak_mb: float = float("nan")
    stages: dict[str, float] = field(default_factory=dict)
    n_queries: int | None = None
    error: str | None = None

    @property
    def best(self) -> float:
        return min(self.seconds) if self.seconds else float("nan")


GNU_TIME = "/usr/bin/time"


def run_cli(args: Sequence[str], cwd: Path, timeout: float = 3600.0) -> tuple[float, float, str, str, int]:
    """Run ``abcompare ARGS``: (wall seconds, peak RSS MiB of that process, stdout, stderr, exit code).

    The peak comes from GNU time's ``%M`` (a tiny parent, so Linux's carrying of the spawner's high-water
    mark into ``ru_maxrss`` adds next to nothing); without GNU time, from ``os.wait4`` of the child.
    """
    use_time = os.path.exists(GNU_TIME)
    command = ["abcompare", *args]
    if use_time:
        command = [GNU_TIME, "-f", "@@maxrss %M", *command]
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        start = time.perf_counter()
        proc = subprocess.Popen(command, cwd=cwd, stdout=out, stderr=err, text=True)
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        except BaseException:
            proc.kill()
            raise
        seconds = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    peak = usage.ru_maxrss / 1024
    if use_time:
        lines = stderr.rstrip("\n").splitlines()
        marks = [i for i, line in enumerate(lines) if line.startswith("@@maxrss ")]
        if marks:
            peak = int(lines[marks[-1]].split()[1]) / 1024
            stderr = "\n".join(lines[: marks[-1]] + lines[marks[-1] + 1 :])
    return seconds, peak, stdout, stderr, proc.returncode


def measure_config(
    name: str, config: Path, *, repeats: int = 3, tracking: bool = True, warm_up: bool = True
) -> EndToEnd:
    """Warm up once (when asked), then time ``repeats`` runs; MLflow logs go to a throwaway SQLite store."""
    result = EndToEnd(name)
    with tempfile.TemporaryDirectory(prefix="abcompare-bench-") as tmp:
        store = Path(tmp)
        overrides = (
            ["--set", f"tracking.uri=sqlite:///{store / 'mlflow.db'}",
             "--set", f"tracking.artifact_location={store / 'mlruns'}"]
            if tracking
            else ["--set", "tracking.enabled=false"]
        )  # fmt: skip
        args = ["run", str(config), "--json", "--quiet", *overrides]
        best = float("inf")
        skip = 1 if warm_up else 0
        for repeat in range(repeats + skip):
            seconds, peak, stdout, stderr, code = run_cli(args, cwd=store)
            if code != 0:
                tail = (stderr.strip().splitlines() or ["(no output)"])[-1]
                result.error = f"exit {code}: {tail[:200]}"
                return result
            if repeat < skip:
                continue  # warm-up: embedding cache, page cache
            result.seconds.append(seconds)
            result.peak_mb = max(peak, result.peak_mb) if result.peak_mb == result.peak_mb else peak
            if seconds < best:
                best = seconds
                payload = json.loads(stdout)
                result.stages = {k: float(v) for k, v in payload.get("timings", {}).items()}
                result.n_queries = payload.get("n_queries")
    return result


def run_end_to_end(
    cases: dict[str, str] | None = None,
    *,
    repeats: int = 3,
    tracking: bool = True,
    warm_up: bool = True,
    log: Callable[[str], None] = print,
) -> list[EndToEnd]:
    """Measure every case (name -> config path relative to the repository)."""
    results = []
    for name, config in (cases or CASES).items():
        log(f"end to end: {name} ...")
        path = REPO_ROOT / config
        result = measure_config(name, path, repeats=repeats, tracking=tracking, warm_up=warm_up)
        if result.error and tracking:  # still report the other stages, and say why tracking is missing
            log(f"end to end: {name} failed with tracking ({result.error}); again without tracking")
            failure = result.error
            result = measure_config(name, path, repeats=repeats, tracking=False, warm_up=warm_up)
            result.name = f"{name}, tracking disabled (with tracking: {failure})"
        results.append(result)
    return results


def end_to_end_table(results: Sequence[EndToEnd]) -> tuple[list[str], list[list[str]]]:
    """Header and rows: wall time, peak memory and each stage's share of the wall time."""
    header = ["config", "queries", "wall time", "peak RSS", *STAGES, "start-up, config, report"]
    rows = []
    for r in results:
        if r.error:
            rows.append([r.name, "—", f"failed ({r.error})", "—", *["—"] * len(STAGES), "—"])
            continue
        wall = r.best
        shares = [_share(r.stages.get(stage, 0.0), wall) for stage in STAGES]
        rest = wall - sum(r.stages.get(stage, 0.0) for stage in STAGES)
        rows.append(
            [r.name, f"{r.n_queries:,}" if r.n_queries else "—", fmt_seconds(wall), fmt_mb(r.peak_mb),
             *shares, _share(rest, wall)]
        )  # fmt: skip
    return header, rows


def _share(seconds: float, wall: float) -> str:
    return f"{fmt_seconds(seconds)} ({100 * seconds / wall:.0f}%)" if wall > 0 else "—"
