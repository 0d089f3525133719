"""Where the evaluation time and memory go, stage by stage, for abcompare and pytrec_eval (one process each).

``python -m benchmarks.profile_stages [N_QUERIES]`` (default 100,000) prints, per stage, the seconds and
the process's RSS and peak RSS after it; plus, for reference, how long ``pyarrow.csv`` takes to parse the
same run file (a single multithreaded pass) and a prototype single-pass read feeding ``evaluate_run``
(its metrics checked equal to ``read_run``'s path). For line-level detail run it under py-spy:
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


def pyarrow_csv_stages(run_path: str, qrels_path: str) -> list[dict]:
    """The run file parsed by ``pyarrow.csv.read_csv`` (space-delimited, no quoting): a reference pass."""
    import pyarrow as pa
    import pyarrow.csv as pcsv

    stages: list[dict] = []
    start = _stage(stages, "imports done", time.perf_counter())
    names = ["query_id", "q0", "doc_id", "rank", "score", "tag"]
    types = {name: pa.string() for name in names} | {"score": pa.float64()}
    pcsv.read_csv(
        run_path,
        read_options=pcsv.ReadOptions(column_names=names),
        parse_options=pcsv.ParseOptions(delimiter=" ", quote_char=False, ignore_empty_lines=True),
        convert_options=pcsv.ConvertOptions(column_types=types),
    )
    _stage(stages, "pyarrow.csv.read_csv(run)", start)
    return stages


def single_pass_stages(run_path: str, qrels_path: str) -> list[dict]:
    """A prototype of a single-pass TREC read (not abcompare's code): ``pyarrow.csv`` parse, the trec_eval
    order (query by first appearance, score desc, docno desc) and ranks, the run table, then abcompare's
    ``read_annotations`` and ``evaluate_run``; checks the metrics equal those from ``read_run``."""
    import numpy as np
    import pandas as pd
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pcsv

    from abcompare.data.annotations import read_annotations
    from abcompare.data.runs import read_run
    from abcompare.evaluation.batch import evaluate_run

    stages: list[dict] = []
    start = _stage(stages, "imports done", time.perf_counter())
    names = ["query_id", "q0", "doc_id", "rank", "score", "tag"]
    types = {name: pa.large_string() for name in names} | {"score": pa.float64()}
    table = pcsv.read_csv(
        run_path,
        read_options=pcsv.ReadOptions(column_names=names),
        parse_options=pcsv.ParseOptions(delimiter=" ", quote_char=False, ignore_empty_lines=True),
        convert_options=pcsv.ConvertOptions(
            column_types=types, include_columns=["query_id", "doc_id", "score"]
        ),
    )
    start = _stage(stages, "pyarrow.csv.read_csv", start)
    codes = pc.dictionary_encode(table["query_id"].combine_chunks()).indices  # first-appearance order
    keys = table["doc_id"].combine_chunks()
    order = pc.sort_indices(
        pa.table({"q": codes, "s": table["score"], "k": keys}),
        sort_keys=[("q", "ascending"), ("s", "descending"), ("k", "descending")],
    )
    sorted_codes = codes.take(order).to_numpy()
    first = np.r_[True, sorted_codes[1:] != sorted_codes[:-1]]
    starts = np.maximum.accumulate(np.where(first, np.arange(len(sorted_codes)), 0))
    run = pd.DataFrame(
        {
            "query_id": table["query_id"].take(order).to_pandas().astype("str"),
            "rank": np.arange(len(sorted_codes)) - starts + 1,
            "key": keys.take(order).to_pandas().astype("str"),
            "score": table["score"].take(order).to_numpy(),
        }
    )
    start = _stage(stages, "order, ranks, run table", start)
    annotations = read_annotations(qrels_path, fmt="trec")
    start = _stage(stages, "read_annotations", start)
    fast = evaluate_run(run, annotations, k=(1, 5, 10, 100), convention="trec")
    _stage(stages, "evaluate_run", start)
    del run, table
    reference = evaluate_run(
        read_run(run_path, fmt="trec"), annotations, k=(1, 5, 10, 100), convention="trec"
    )
    pd.testing.assert_frame_equal(fast, reference)
    stages.append(
        {"stage": "(same metrics as read_run's path: checked)", "seconds": 0.0, "rss_mb": 0.0, "peak_mb": 0.0}
    )
    return stages


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args and args[0] == "--child":
        function = {
            "abcompare": abcompare_stages,
            "pytrec_eval": pytrec_eval_stages,
            "pyarrow": pyarrow_csv_stages,
            "single-pass prototype": single_pass_stages,
        }
        print(json.dumps(function[args[1]](args[2], args[3])))
        return 0
    from benchmarks.workloads import evaluation_workload

    n_queries = int(args[0]) if args else 100_000
    workload = evaluation_workload(n_queries)
    for tool in ("abcompare", "pytrec_eval", "pyarrow", "single-pass prototype"):
        out = subprocess.run(
            [sys.executable, "-m", "benchmarks.profile_stages", "--child", tool,
             str(workload.run_path), str(workload.qrels_path)],
            cwd=REPO_ROOT, capture_output=True, text=True, check=True,
        )  # fmt: skip
        print(f"{tool} ({n_queries:,} queries x 100 hits)")
        for stage in json.loads(out.stdout.strip().splitlines()[-1])[1:]:
            print(
                f"  {stage['stage']:<28} {stage['seconds']:7.2f} s   rss {stage['rss_mb']:7,.0f} MB"
                f"   peak {stage['peak_mb']:7,.0f} MB"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
