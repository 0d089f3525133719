"""Scale benchmark (issue 38): a whole ``abcompare run`` on seeded TREC runs beside ranx and pytrec_eval +
scipy.

For each size (queries x hits; the issue's 10k x 1000 and 100k x 100 by default) it writes a seeded
document-level comparison (``benchmarks/scale_data.py``: two TREC runs, graded qrels with 1-7 relevant
per query, cutoffs 1/5/10/100/1000 up to the depth), then, one after the other in fresh processes:

- ``abcompare run --json`` with MLflow on (a throwaway SQLite store) and with ``tracking.enabled=false``;
- with ``--ray``, the same run with tracking off on ``execution.backend=ray`` (a private Ray on this machine:
  a run of millions of hits is evaluated by query blocks as Ray tasks), the local-vs-Ray line;
- the parse floor: abcompare's reader on both run files (what the evaluation stage is held to);
- pytrec_eval + scipy: parse the qrels and both runs, nDCG@10 per query, ``ttest_rel``,
  ``permutation_test`` (B resamples) and ``wilcoxon`` on the primary metric;
- ranx: ``Qrels/Run.from_file`` and ``compare(..., stat_test="fisher")`` over every metric (5 x the cutoffs).

It prints wall seconds, peak memory, each tool's ratio to ``abcompare run`` (MLflow on) and each stage's
share.

    python -m benchmarks.bench_scale                          # 10k x 1000 and 100k x 100, B = 10,000
    python -m benchmarks.bench_scale --sizes 2000x1000 --resamples 1000 --ray
    python -m benchmarks.bench_scale --record benchmarks/scale_latest.json   # what docs/speed.md quotes
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.bench_end_to_end import run_cli
from benchmarks.harness import Measurement, fmt_mb, fmt_seconds, markdown_table, measure, peer_available
from benchmarks.scale_data import write_comparison

SIZES = ((10_000, 1_000), (100_000, 100))
RAY_JOB = "abcompare run, tracking off, Ray"
MEASURES = ("precision", "recall", "f1", "mrr", "ndcg")


@dataclass
class ScaleRow:
    """One size: every tool's measurement, and abcompare's stage seconds (with and without MLflow)."""

    n_queries: int
    hits: int
    measurements: dict[str, Measurement] = field(default_factory=dict)
    stages: dict[str, dict[str, float]] = field(default_factory=dict)


def cutoffs_for(hits: int) -> tuple[int, ...]:
    return tuple(k for k in (1, 5, 10, 100, 1000) if k <= hits)


# ------------------------------------------------------------------------------------------ child tasks
def parse_floor_task(control: str, treatment: str) -> Callable[[], Any]:
    """abcompare's reader on both run files: the floor the evaluation stage is measured against."""
    from abcompare.data.runs import read_run

    return lambda: [len(read_run(control, "trec")), len(read_run(treatment, "trec"))]


def pytrec_scipy_task(control: str, treatment: str, qrels: str, n_resamples: int) -> Callable[[], Any]:
    """pytrec_eval on both runs (nDCG@10) and scipy's paired t, permutation and Wilcoxon tests on it."""
    import numpy as np
    import pytrec_eval
    from scipy import stats

    def work() -> Any:
        with open(qrels) as handle:
            judged = pytrec_eval.parse_qrel(handle)
        evaluator = pytrec_eval.RelevanceEvaluator(judged, {"ndcg_cut.10"})
        scores = []
        for path in (control, treatment):
            with open(path) as handle:
                per_query = evaluator.evaluate(pytrec_eval.parse_run(handle))
            scores.append({q: v["ndcg_cut_10"] for q, v in per_query.items()})
        queries = sorted(judged)  # a judged query a run did not answer scores 0, as abcompare counts it
        a = np.array([scores[0].get(q, 0.0) for q in queries])
        b = np.array([scores[1].get(q, 0.0) for q in queries])
        d = b - a
        stats.ttest_rel(b, a)
        stats.permutation_test(
            (d,), np.mean, permutation_type="samples", n_resamples=n_resamples, random_state=0
        )
        stats.wilcoxon(d, zero_method="pratt")
        return float(d.mean())

    return work


def ranx_task(control: str, treatment: str, qrels: str, n_resamples: int, hits: int) -> Callable[[], Any]:
    """ranx from files: both runs, ``compare`` with the Fisher randomization test over every metric."""
    import ranx

    metrics = [f"{m}@{k}" for m in MEASURES for k in cutoffs_for(hits)]

    def work() -> Any:
        judged = ranx.Qrels.from_file(qrels, kind="trec")
        runs = [ranx.Run.from_file(path, kind="trec") for path in (control, treatment)]
        report = ranx.compare(
            judged, runs, metrics, stat_test="fisher", n_permutations=n_resamples, make_comparable=True
        )
        return str(report)

    return work


# ------------------------------------------------------------------------------------------ the suite
def run_scale(
    sizes: Sequence[tuple[int, int]] = SIZES,
    *,
    n_resamples: int = 10_000,
    data_dir: str | Path | None = None,
    peers: Sequence[str] = ("pytrec_eval", "ranx"),
    log: Callable[[str], None] = print,
    ray: bool = False,
    after_size: Callable[[list[ScaleRow]], None] | None = None,
) -> list[ScaleRow]:
    """Measure each size (see the module's docstring); a tool that fails is recorded, not raised.
    ``after_size`` is given the rows measured so far after each size (a long run is recorded as it goes)."""
    rows = []
    with tempfile.TemporaryDirectory(prefix="abcompare-scale-") as tmp:
        base = Path(data_dir or tmp)
        for n_queries, hits in sizes:
            folder = base / f"scale-{n_queries}x{hits}"
            log(f"writing {n_queries} x {hits} to {folder}")
            config = write_comparison(
                folder, level="document", n_queries=n_queries, hits=hits, seed=38, chunk_keys=False,
                convention="trec", cutoffs=cutoffs_for(hits), n_resamples=n_resamples,
            )  # fmt: skip
            files = {name: str(folder / f"{name}.trec") for name in ("control", "treatment")}
            row = ScaleRow(n_queries, hits)
            jobs = [("abcompare run", True, ()), ("abcompare run, tracking off", False, ())]
            jobs += [(RAY_JOB, False, ("--set", "execution.backend=ray"))] if ray else []
            for label, tracking, extra in jobs:
                log(f"  {label}")
                row.measurements[label], row.stages[label] = _abcompare(config, folder, tracking, extra)
            log("  parse floor")
            row.measurements["parse both runs"] = measure(
                "parse", "benchmarks.bench_scale:parse_floor_task", files, repeats=1
            )
            qrels = str(folder / "qrels.txt")
            if "pytrec_eval" in peers and peer_available("pytrec_eval"):
                log("  pytrec_eval + scipy")
                row.measurements["pytrec_eval + scipy"] = measure(
                    "pytrec_eval", "benchmarks.bench_scale:pytrec_scipy_task",
                    {**files, "qrels": qrels, "n_resamples": n_resamples}, repeats=1,
                )  # fmt: skip
            if "ranx" in peers and peer_available("ranx"):
                log("  ranx")
                row.measurements["ranx"] = measure(
                    "ranx", "benchmarks.bench_scale:ranx_task",
                    {**files, "qrels": qrels, "n_resamples": n_resamples, "hits": hits}, repeats=1,
                )  # fmt: skip
            rows.append(row)
            log(scale_report([row]))  # each size as it finishes: a long run is read as it goes
            if after_size is not None:
                after_size(rows)
    return rows


def _abcompare(
    config: Path, folder: Path, tracking: bool, extra: Sequence[str] = ()
) -> tuple[Measurement, dict[str, float]]:
    out = Measurement("abcompare")
    store = folder / "mlflow"
    overrides = (
        ["--set", "tracking.enabled=true", "--set", f"tracking.uri=sqlite:///{store / 'mlflow.db'}",
         "--set", f"tracking.artifact_location={store / 'mlruns'}"]
        if tracking
        else ["--set", "tracking.enabled=false"]
    )  # fmt: skip
    store.mkdir(exist_ok=True)
    seconds, peak, stdout, stderr, code = run_cli(
        ["run", str(config), "--json", "--quiet", *overrides, *extra], folder
    )
    if code not in (0, 1):  # 1: a gate; the comparison ran
        out.error = f"exit {code}: {(stderr.strip().splitlines() or [''])[-1][:200]}"
        return out, {}
    out.seconds.append(seconds)
    out.peak_mb = peak
    return out, {k: float(v) for k, v in json.loads(stdout).get("timings", {}).items()}


def scale_report(rows: Sequence[ScaleRow]) -> str:
    """Markdown: per size, each tool's wall, peak and ratio to ``abcompare run``; then the stage shares."""
    parts = []
    for row in rows:
        ours = row.measurements["abcompare run"].best
        table = []
        for name, m in row.measurements.items():
            ratio = f"{m.best / ours:.2f}x" if m.seconds and ours == ours else "-"
            table.append([name, m.error or fmt_seconds(m.best), fmt_mb(m.peak_mb), ratio])
        parts.append(f"#### {row.n_queries:,} queries x {row.hits:,} hits\n")
        parts.append(markdown_table(["job", "wall", "peak", "time / abcompare run"], table))
        for label, stages in row.stages.items():
            wall = row.measurements[label].best
            shares = ", ".join(
                f"{k} {v / wall:.0%} ({fmt_seconds(v)})" for k, v in stages.items() if v >= 0.005
            )
            parts.append(f"\n{label}: {shares}; the rest (start-up, imports, report) {_rest(stages, wall)}")
        evaluation = row.stages.get("abcompare run, tracking off", {}).get("evaluation")
        floor = row.measurements["parse both runs"].best
        if evaluation and floor == floor:
            parts.append(f"\nevaluation stage / parsing both runs: {evaluation / floor:.2f}x\n")
    return "\n".join(parts)


def _rest(stages: dict[str, float], wall: float) -> str:
    rest = wall - sum(stages.values())
    return f"{rest / wall:.0%} ({fmt_seconds(rest)})"


# ------------------------------------------------------------------------------------------ the record
OURS, PYTREC, RANX, FLOOR = "abcompare run", "pytrec_eval + scipy", "ranx", "parse both runs"
OFF = "abcompare run, tracking off"


def scale_record(rows: Sequence[ScaleRow], *, command: str, load: tuple[float, float]) -> dict[str, Any]:
    """What a run measured, as JSON: each size's jobs (wall seconds, peak MiB or the error) and stages, with
    the command and the load average at its start and end. docs/speed.md quotes :func:`speed_sentences` of
    the recorded file, and a test checks that it does."""
    return {
        "command": command,
        "load_average": {"start": round(load[0], 2), "end": round(load[1], 2)},
        "sizes": [
            {
                "queries": row.n_queries,
                "hits": row.hits,
                "jobs": {
                    name: {
                        "seconds": m.best if m.seconds else None,
                        "peak_mb": None if m.peak_mb != m.peak_mb else round(m.peak_mb, 1),
                        "error": m.error,
                    }
                    for name, m in row.measurements.items()
                },
                "stages": row.stages,
            }
            for row in rows
        ],
    }


def speed_sentences(record: dict[str, Any]) -> list[str]:
    """One sentence of ratios per recorded size (what docs/speed.md quotes, never the seconds)."""
    out = []
    for size in record["sizes"]:
        jobs = size["jobs"]

        def ratio(a: str, b: str, key: str = "seconds", jobs: dict[str, Any] = jobs) -> str:
            x, y = (jobs.get(a) or {}).get(key), (jobs.get(b) or {}).get(key)
            return f"{x / y:.2f}x" if x and y else "not measured"

        evaluation = size["stages"].get(OFF, {}).get("evaluation")
        floor = (jobs.get(FLOOR) or {}).get("seconds")
        held = f"{evaluation / floor:.2f}x" if evaluation and floor else "not measured"
        parts = [
            f"{size['queries']:,} queries x {size['hits']:,} hits: `abcompare run` with MLflow takes "
            f"{ratio(OURS, PYTREC)} the time of pytrec_eval + scipy and {ratio(OURS, RANX)} ranx's "
            f"(tracking off: {ratio(OFF, PYTREC)} and {ratio(OFF, RANX)})",
            f"its evaluation stage {held} the time of parsing both runs",
            f"peak memory {ratio(OURS, RANX, 'peak_mb')} ranx's",
        ]
        if RAY_JOB in jobs:
            parts.append(f"the same run on a private Ray {ratio(RAY_JOB, OFF)} the local one's time")
        out.append("; ".join(parts) + ".")
    return out


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", nargs="+", default=[f"{q}x{h}" for q, h in SIZES], help="QUERIESxHITS")
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--ray", action="store_true", help="also the run on execution.backend=ray")
    parser.add_argument("--record", default=None, help="write the measurements as JSON here")
    args = parser.parse_args(argv)
    sizes = [tuple(int(x) for x in size.lower().split("x")) for size in args.sizes]
    start = os.getloadavg()[0]
    print(f"load average at start: {start:.2f}")
    command = "python -m benchmarks.bench_scale " + " ".join(argv if argv is not None else sys.argv[1:])

    def record(rows: list[ScaleRow]) -> None:  # after each size, so an interrupted run keeps what it measured
        if args.record:
            measured = scale_record(rows, command=command, load=(start, os.getloadavg()[0]))
            Path(args.record).write_text(json.dumps(measured, indent=1) + "\n", encoding="utf-8")

    rows = run_scale(
        sizes, n_resamples=args.resamples, data_dir=args.data_dir, ray=args.ray, after_size=record
    )
    print(f"load average at end: {os.getloadavg()[0]:.2f}")
    record(rows)
    if args.record:
        print("\n".join(speed_sentences(json.loads(Path(args.record).read_text(encoding="utf-8")))))


if __name__ == "__main__":
    main()
