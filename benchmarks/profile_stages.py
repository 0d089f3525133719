"""Where the evaluation time and memory go, stage by stage, for abcompare and pytrec_eval (one process each).

``python -m benchmarks.profile_stages [N_QUERIES] [distinct|tied]`` (default 100,000, distinct) prints, per
abcompare stage, its seconds beside its floor (the least any evaluator of these files must do with the same
libraries: parse the run, parse the qrels, look every docno up once; :func:`floor_stages`) and how many
times the floor it takes; then pytrec_eval's stages, and the ratio the floors alone would give. For
line-level detail run it under py-spy:
``py-spy record -f raw -o out.txt -- python -m benchmarks.profile_stages``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

from benchmarks.harness import REPO_ROOT, _status_mb


def _stage(stages: list[dict], name: str, start: float) -> float:
    now = time.perf_counter()
    stages.append(
        {"stage": name, "seconds": now - start, "rss_mb": _status_mb("VmRSS"), "peak_mb": _status_mb("VmHWM")}
    )
    return time.perf_counter()


def abcompare_stages(run_path: str, qrels_path: str) -> list[dict]:
    """read_run, read_annotations, evaluate_run (trec, k = 1/5/10/100), each timed."""
    from abcompare.data.annotations import read_annotations
    from abcompare.data.runs import read_run
    from abcompare.evaluation.batch import evaluate_run

    stages: list[dict] = []
    start = _stage(stages, "imports done", time.perf_counter())
    run = read_run(run_path, fmt="trec")
    start = _stage(stages, "read_run", start)
    annotations = read_annotations(qrels_path, fmt="trec")
    start = _stage(stages, "read_annotations", start)
    evaluate_run(run, annotations, k=(1, 5, 10, 100), convention="trec")
    _stage(stages, "evaluate_run", start)
    return stages


def pytrec_eval_stages(run_path: str, qrels_path: str) -> list[dict]:
    """parse_qrel, parse_run (Python), RelevanceEvaluator, evaluate (C), each timed."""
    import pytrec_eval

    from benchmarks.bench_evaluation import _PYTREC_MEASURES

    stages: list[dict] = []
    start = _stage(stages, "imports done", time.perf_counter())
    with open(qrels_path) as f:
        qrels = pytrec_eval.parse_qrel(f)
    start = _stage(stages, "parse_qrel", start)
    with open(run_path) as f:
        run = pytrec_eval.parse_run(f)
    start = _stage(stages, "parse_run", start)
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, _PYTREC_MEASURES)
    start = _stage(stages, "RelevanceEvaluator", start)
    evaluator.evaluate(run)
    _stage(stages, "evaluate", start)
    return stages


def floor_stages(run_path: str, qrels_path: str) -> list[dict]:
    """The floor of each abcompare stage: the least any evaluator of these files must do, with the same
    libraries. Parsing the run file (``pyarrow.csv``, the reader's own options), parsing the qrels, and
    one hashed look-up of every hit's docno among the judged docnos (``pyarrow.compute.index_in``): the
    evaluation cannot know which hits are judged with less. Like the other tools, a fresh process."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from abcompare.data._lines import file_bytes, regular_columns  # sets Arrow's allocator, as for abcompare
    from abcompare.data.run_trec import _TREC_FIELDS, _TREC_TYPES

    stages: list[dict] = []
    start = _stage(stages, "imports done", time.perf_counter())
    with file_bytes(run_path, "run") as data:
        run = regular_columns(data, _TREC_FIELDS, _TREC_TYPES)
    start = _stage(stages, "read_run", start)
    names = ("query_id", "iter", "doc", "grade")
    types = dict.fromkeys(names[:3], pa.large_string()) | {"grade": pa.float64()}
    with file_bytes(qrels_path, "annotations") as data:
        qrels = regular_columns(data, names, types)
    start = _stage(stages, "read_annotations", start)
    pc.index_in(run.column("doc"), value_set=pc.unique(qrels.column("doc").combine_chunks()))
    _stage(stages, "evaluate_run", start)
    return stages


_FLOORS = {
    "read_run": "pyarrow.csv parse of the run",
    "read_annotations": "pyarrow.csv parse of the qrels",
    "evaluate_run": "one hashed look-up of every docno",
}


def _child(tool: str, run_path: str, qrels_path: str) -> list[dict]:
    out = subprocess.run(
        [sys.executable, "-m", "benchmarks.profile_stages", "--child", tool, run_path, qrels_path],
        cwd=REPO_ROOT, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return json.loads(out.stdout.strip().splitlines()[-1])[1:]


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args and args[0] == "--child":
        function = {"abcompare": abcompare_stages, "pytrec_eval": pytrec_eval_stages, "floor": floor_stages}
        print(json.dumps(function[args[1]](args[2], args[3])))
        return 0
    from benchmarks.workloads import evaluation_workload

    n_queries = int(args[0]) if args else 100_000
    kind = args[1] if len(args) > 1 else "distinct"
    workload = evaluation_workload(n_queries, kind=kind)
    paths = (str(workload.run_path), str(workload.qrels_path))
    ours, floor, peer = _child("abcompare", *paths), _child("floor", *paths), _child("pytrec_eval", *paths)
    floor_seconds = {stage["stage"]: stage["seconds"] for stage in floor}
    print(f"abcompare ({n_queries:,} queries x 100 hits, {kind}), each stage beside its floor")
    for stage in ours:
        least = floor_seconds[stage["stage"]]
        name, seconds = stage["stage"], stage["seconds"]
        what = f"({_FLOORS[name]})"
        print(
            f"  {name:<18} {seconds:6.2f} s   floor {least:5.2f} s {what:<40}"
            f"   {seconds / least:4.1f}x floor   peak {stage['peak_mb']:6,.0f} MB"
        )
    total, least = sum(s["seconds"] for s in ours), sum(floor_seconds.values())
    print(f"  {'total':<18} {total:6.2f} s   floor {least:5.2f} s   {total / least:4.1f}x floor")
    print(f"pytrec_eval ({n_queries:,} queries x 100 hits, {kind})")
    for stage in peer:
        print(f"  {stage['stage']:<18} {stage['seconds']:6.2f} s   peak {stage['peak_mb']:6,.0f} MB")
    peer_total = sum(s["seconds"] for s in peer)
    print(f"  {'total':<18} {peer_total:6.2f} s   abcompare is {peer_total / total:.1f}x faster; "
          f"the floors alone would be {peer_total / least:.1f}x")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
