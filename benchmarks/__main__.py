"""``python -m benchmarks [--quick] [--only PART ...] [--output FILE]``: run the suite, write the markdown.

Full mode: evaluation at 1k/10k/100k queries x 100 hits, significance at 1k/10k/100k queries with B =
10,000 (scipy's and ranx's resampling at 100k on B = 1,000: lower-bound ratios), end to end on the shipped
example and SciFact, start-up, encoding throughput of each embedding model and backend (231 texts, 3
rounds). ``--quick``: 1k queries, B = 1,000, one repeat, the hr-docs example only, 64 texts encoded once.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

from benchmarks.harness import REPO_ROOT, machine_description, markdown_table

PARTS = ("evaluation", "significance", "end-to-end", "startup", "ray", "encoding", "cost")
DEFAULT_OUTPUT = REPO_ROOT / "benchmarks" / "results" / "latest.md"


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _settings(quick: bool) -> dict:
    if quick:
        return {
            "eval_sizes": [1_000], "eval_repeats": lambda n: 1, "warm_up": False,
            "sig_sizes": [1_000], "n_resamples": 1_000, "sig_repeats": lambda n: 1, "peer_resamples": {},
            "e2e_cases": {"hr-docs example (bm25_vs_hybrid.yaml)": "configs/bm25_vs_hybrid.yaml"},
            "e2e_repeats": 1, "e2e_tracking": False, "startup_repeats": 3,
            "encoding_texts": 64, "encoding_rounds": 1,
            "latency": {"documents": 12, "queries": 12, "repeats": 3, "max_queries": 12,
                        "budget_seconds": 3.0},
        }  # fmt: skip
    return {
        "eval_sizes": [1_000, 10_000, 100_000], "eval_repeats": lambda n: 3 if n <= 10_000 else 1,
        "warm_up": True, "sig_sizes": [1_000, 10_000, 100_000], "n_resamples": 10_000,
        "sig_repeats": lambda n: 3 if n <= 1_000 else (2 if n <= 10_000 else 1),
        "peer_resamples": {100_000: 1_000}, "e2e_cases": None, "e2e_repeats": 2, "e2e_tracking": True,
        "startup_repeats": 7, "encoding_texts": 231, "encoding_rounds": 3,
        "latency": {"repeats": 5, "max_queries": 60, "budget_seconds": 60.0},
    }  # fmt: skip


#: The evaluation targets at 100k x 100 (issue 16): how many times faster than each peer, per workload.
EVALUATION_GOALS: dict[str, dict[str, float]] = {
    "distinct": {"pytrec_eval": 5.0, "ranx": 20.0},
    "tied": {"pytrec_eval": 5.0, "ranx": 20.0},
    "dicts": {"pytrec_eval": 2.0},
}
#: The end-to-end bounds: the tracking stage's share of the staged time, the sweep's wall time over the main
#: job's (issues 14 and 16).
TRACKING_SHARE_GOAL = 0.30
EVALUATION_WORKLOADS = ("distinct", "tied", "dicts")
SWEEP_RATIO_GOAL = 3.0


def _targets(evaluation, significance, end_to_end=None) -> list[str]:
    """The issues' targets, each marked met or missed from this run's figures."""
    lines = []
    for row in [row for row in evaluation or [] if row.n_queries == 100_000]:
        m = row.measurements
        ours = m.get("abcompare")
        source = "from in-memory dicts" if row.workload == "dicts" else f"from files ({row.workload})"
        for peer, goal in EVALUATION_GOALS.get(row.workload, {}).items():
            if isinstance(row.differences.get(peer), str):
                lines.append(
                    f"- evaluation at {row.n_queries:,} x 100 {source} against {peer}: not comparable, "
                    f"{peer} gives other numbers ({row.differences[peer]}): it breaks ties otherwise"
                )
                continue
            if ours and peer in m and ours.seconds and m[peer].seconds:
                ratio = m[peer].best / ours.best
                verdict = "met" if ratio >= goal else "MISSED"
                lines.append(
                    f"- evaluation at {row.n_queries:,} x 100 {source}, >= {goal:g}x faster than {peer}: "
                    f"{ratio:.1f}x — {verdict}"
                )
        if (
            row.workload != "dicts"
            and ours
            and "pytrec_eval" in m
            and ours.seconds
            and m["pytrec_eval"].seconds
        ):
            verdict = "met" if ours.peak_mb <= m["pytrec_eval"].peak_mb else "MISSED"
            lines.append(
                f"- peak memory ({row.workload}) no higher than pytrec_eval's: {ours.peak_mb:,.0f} MB vs "
                f"{m['pytrec_eval'].peak_mb:,.0f} MB — {verdict}"
            )
    lines += _end_to_end_targets(end_to_end or [])
    for row in significance or []:
        if row.n_queries != 10_000:
            continue
        m = row.measurements
        for ours, peer in (
            ("abcompare permutation", "scipy permutation_test"),
            ("abcompare bootstrap", "scipy bootstrap"),
        ):
            if ours in m and peer in m and m[ours].seconds and m[peer].seconds:
                ratio = m[peer].best / m[ours].best
                verdict = "met" if ratio >= 10 else "MISSED"
                lines.append(
                    f"- significance at 10k queries, B = {row.n_resamples:,}, >= 10x faster than {peer}: "
                    f"{ratio:.1f}x — {verdict}"
                )
    return lines


def _end_to_end_targets(results) -> list[str]:
    from benchmarks.bench_end_to_end import MAIN_JOB, STAGES, SWEEP

    lines = []
    by_name = {r.name: r for r in results if not r.error and r.seconds}
    for name in (MAIN_JOB, SWEEP):
        r = by_name.get(name)
        if r is None:
            continue
        staged = sum(r.stages.get(stage, 0.0) for stage in STAGES)
        share = r.stages.get("tracking", 0.0) / staged if staged else float("nan")
        verdict = "met" if share <= TRACKING_SHARE_GOAL else "MISSED"
        lines.append(
            f"- {name}: the tracking stage at most {TRACKING_SHARE_GOAL:.0%} of the staged time: {share:.0%} "
            f"({r.stages.get('tracking', 0.0):.2f} s of {staged:.2f} s) — {verdict}"
        )
    if MAIN_JOB in by_name and SWEEP in by_name:
        ratio = by_name[SWEEP].best / by_name[MAIN_JOB].best
        verdict = "met" if ratio <= SWEEP_RATIO_GOAL else "MISSED"
        lines.append(
            f"- the 24-point fusion sweep within {SWEEP_RATIO_GOAL:g}x the main job's wall time: "
            f"{ratio:.2f}x ({by_name[SWEEP].best:.1f} s vs {by_name[MAIN_JOB].best:.1f} s) — {verdict}"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, one repeat (well under a minute)")
    parser.add_argument("--only", nargs="+", choices=PARTS, default=list(PARTS), help="run only these parts")
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT, help="where the markdown goes")
    parser.add_argument(
        "--workloads", nargs="+", choices=EVALUATION_WORKLOADS, default=list(EVALUATION_WORKLOADS),
        help="the evaluation workloads to run",
    )  # fmt: skip
    parser.add_argument(
        "--configs", nargs="+", metavar="CONFIG", default=None,
        help="time only these end-to-end configs (paths as in benchmarks.bench_end_to_end.CASES)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    s = _settings(args.quick)
    if args.configs:
        from benchmarks.bench_end_to_end import CASES

        s["e2e_cases"] = {name: path for name, path in CASES.items() if path in args.configs}
    started = time.perf_counter()
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    sections = [
        f"# abcompare benchmarks ({'quick' if args.quick else 'full'} mode, {stamp})",
        "",
        *machine_description(),
    ]
    evaluation = significance = end_to_end = None
    if "evaluation" in args.only:
        from benchmarks.bench_evaluation import evaluation_table, run_evaluation

        evaluation = []
        for workload in args.workloads:
            kind, dicts = ("distinct", True) if workload == "dicts" else (workload, False)
            for n in s["eval_sizes"]:
                evaluation += run_evaluation(
                    [n], repeats=s["eval_repeats"](n), warm_up=s["warm_up"], kind=kind, dicts=dicts, log=_log
                )
        sections += [
            "",
            "## Evaluation: TREC run + qrels files -> per-query P, R, F1, MRR, nDCG at 1/5/10/100",
            "",
            "Best of the repeats, each in a fresh process; time from the files to per-query metrics (imports "
            "excluded); peak RSS of that process. Every tool's per-query numbers were checked against "
            "pytrec_eval's (largest absolute difference in the last column) before its ratio was reported. "
            "Workloads: `distinct` (distinct scores, about 8% of hits judged), `tied` (10M distinct docnos "
            "at 100k queries, about 6% judged, grades 0-3, 3-decimal scores: many ties), and `dicts` (the "
            "`distinct` files read beforehand into pytrec_eval's `{query: {doc: score}}` / `{query: {doc: "
            "grade}}` dicts; evaluation only, both tools given the same objects).",
            "",
            markdown_table(*evaluation_table(evaluation)),
        ]
    if "significance" in args.only:
        from benchmarks.bench_significance import run_significance, significance_table

        significance = []
        for n in s["sig_sizes"]:
            significance += run_significance(
                [n], n_resamples=s["n_resamples"], repeats=s["sig_repeats"](n),
                peer_resamples=s["peer_resamples"], warm_up=s["warm_up"], log=_log,
            )  # fmt: skip
        agreement = "; ".join(
            f"{row.n_queries:,}: " + ", ".join(f"{k} {v}" for k, v in row.agreement.items())
            for row in significance
        )
        sections += [
            "",
            f"## Significance: 15 metric columns, B = {s['n_resamples']:,}",
            "",
            "Best of the repeats (peers: one run), each in a fresh process. `(B=1,000)`: the peer ran on "
            "fewer resamples than abcompare, so the ratio is a lower bound (not scaled: scipy's BCa "
            "jackknife costs O(n²) whatever B). Checked before reporting (largest "
            f"differences): {agreement}.",
            "",
            markdown_table(*significance_table(significance)),
        ]
    if "end-to-end" in args.only:
        from benchmarks.bench_end_to_end import end_to_end_table, run_end_to_end

        results = end_to_end = run_end_to_end(
            s["e2e_cases"],
            repeats=s["e2e_repeats"],
            tracking=s["e2e_tracking"],
            warm_up=s["warm_up"],
            log=_log,
        )
        tracking = "MLflow tracking to a throwaway SQLite store" if s["e2e_tracking"] else "tracking disabled"
        sections += [
            "",
            "## End to end: `abcompare run CONFIG` (warm embedding cache)",
            "",
            f"Best wall time of the repeats{' after one warm-up run' if s['warm_up'] else ''}, {tracking}; "
            "peak RSS of the process; stage times from the runner's own timer (the rest: interpreter "
            "start-up, imports, config, report).",
            "",
            markdown_table(*end_to_end_table(results)),
        ]
    if "startup" in args.only:
        from benchmarks.bench_startup import run_startup, startup_table

        _log("start-up: abcompare --help ...")
        sections += ["", "## Start-up", "", markdown_table(*startup_table(run_startup(s["startup_repeats"])))]
    if "ray" in args.only and importlib.util.find_spec("ray") is not None:
        from benchmarks import bench_ray

        overhead = bench_ray.run_overhead(repeats=1 if args.quick else 3, log=_log)
        collections = bench_ray.run_collections_overhead(repeats=1 if args.quick else 3, log=_log)
        encoding = bench_ray.run_encoding(512 if args.quick else 1024, log=_log)
        sections += [
            "",
            "## Ray backend (issues 15, 28): overhead on the fusion sweep and across collections, encoding",
            "",
            "`configs/fusion_sweep.yaml` with MLflow tracking to a throwaway SQLite store and a warm "
            "embedding cache, local and ray runs interleaved (after one warm-up of each), best wall time:",
            "",
            *bench_ray.overhead_lines(overhead),
            "",
            "`benchmarks/collections_ray.yaml` (BM25 vs hybrid across hr-docs, Cranfield and CISI, no "
            "latency timing) and its first collection alone, the same way; Ray's fixed start is the "
            "one-collection run's ray-minus-local wall time, subtracted before the per-collection ratio:",
            "",
            *bench_ray.collections_lines(collections, str(bench_ray.COLLECTIONS.relative_to(REPO_ROOT))),
            "",
            "The same texts encoded by plain sentence-transformers and by the Ray Data path (actors start "
            "and load the model inside the timed region):",
            "",
            *bench_ray.encoding_lines(encoding),
        ]
    if "encoding" in args.only:
        from benchmarks.bench_encoding import run_throughput, throughput_lines, throughput_table

        encoded = run_throughput(s["encoding_texts"], s["encoding_rounds"], log=_log)
        sections += [
            "",
            "## Embedding models: encoding throughput of each model and backend",
            "",
            "The same distinct chunk texts of the example through each packaged model's encoder (the dense "
            "retriever's, without the cache), batch size 64, in this process; loading and a warm-up batch "
            "excluded; the models take turns within each round; median over the rounds.",
            "",
            markdown_table(*throughput_table(encoded)),
            "",
            *throughput_lines(encoded),
        ]
    if "cost" in args.only:
        from benchmarks import bench_cost

        latency = bench_cost.run_query_latency(log=_log, **s["latency"])
        sections += [
            "",
            "## Cost: query latency of each model against BM25, and what issue 24's stages add",
            "",
            "The shipped example, each variant one retriever (depth 50, top 10), timed by the workbench's "
            f"own timing pass in one run ({latency.rounds} interleaved rounds x {latency.queries} queries; a "
            "query's latency is its median over the rounds): mean and p95 per query, the ratio of the means "
            "to BM25's with its paired bootstrap interval and the noise rule's reading (10% floor).",
            "",
        ]
        if latency.samples:
            sections += [
                markdown_table(*bench_cost.latency_table(latency)),
                "",
                *bench_cost.latency_lines(latency),
            ]
        else:
            sections += [f"- {latency.note}"]
        noise = bench_cost.run_noise_rule(log=_log, **s["latency"])
        sections += [
            "",
            "The noise rule on this machine's timings (what no test asserts): the same BM25 at several k1/b "
            "points, equal work in separate stages, and BM25 keeping 1,000 hits per query against 10, each "
            "timed in one pass as above:",
            "",
            *bench_cost.noise_rule_lines(noise),
        ]
        extra = bench_cost.run_extra_stages(log=_log)
        sections += [
            "",
            "The main job (`configs/rrf_vs_dbsf.yaml`) in this process as `abcompare run` makes it (MLflow "
            "to a throwaway SQLite store), its attribution, unjudged-range and queries-needed functions "
            "clocked (issue 24: together under 10% of a comparison's time):",
            "",
            *bench_cost.extra_stages_lines(extra),
        ]
    targets = _targets(evaluation, significance, end_to_end) or [
        "- judged in full mode only (100k evaluation, 10k tests)"
    ]
    sections += ["", "## Targets (issues 8, 14, 16)", "", *targets]
    sections += ["", f"Suite wall time: {time.perf_counter() - started:.0f} s.", ""]
    text = "\n".join(sections)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(text)
    print(text)
    _log(f"written to {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
