"""The evaluation stage sharded on Ray (issue 38): per-query tables by blocks of queries as Ray tasks are the
driver's, bit for bit, whatever the number of blocks; ``execution.backend: ray`` shards a large run's
evaluation and gives the local comparison's per-query scores and p-values."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from abcompare.config import load_config
from abcompare.data.experiment import load_dataset_for_experiment
from abcompare.data.levels import apply_level
from abcompare.data.runs import read_run
from abcompare.evaluation.per_query import per_query_metrics
from abcompare.execution import ray_evaluation
from abcompare.execution.ray_evaluation import evaluation_blocks, per_query_metrics_on_ray
from abcompare.runner import run_comparison

REPO_ROOT = Path(__file__).resolve().parents[2]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from benchmarks.scale_data import write_comparison  # noqa: E402

pytestmark = pytest.mark.slow
MEASURES = ["precision", "recall", "f1", "mrr", "ndcg"]


def test_blocks_follow_the_run_size_and_the_cpus():
    assert evaluation_blocks(999, 8, rows_per_task=1_000) == 1  # under one task's rows: in the driver
    assert evaluation_blocks(5_000, 8, rows_per_task=1_000) == 5
    assert evaluation_blocks(50_000, 8, rows_per_task=1_000) == 8  # at most one block per CPU
    assert evaluation_blocks(10**9, 0) == 1  # a cluster with no CPU: in the driver


def _level_inputs(tmp_path: Path, level: str, convention: str):
    config_path = write_comparison(
        tmp_path, level=level, n_queries=90, hits=40, seed=7, chunk_keys=True, convention=convention,
        cutoffs=(1, 5, 10, 40),
    )  # fmt: skip
    config = load_config(config_path)
    dataset = load_dataset_for_experiment(config.dataset)
    run = read_run(tmp_path / config.control.run.path, config.control.run.format)
    run, annotations = apply_level(run, dataset.annotations, level, spans=dataset.spans)
    return run, annotations, dataset.query_ids


@pytest.mark.parametrize(("level", "convention"), [("document", "trec"), ("chunk", "ai4j"), ("span", "trec")])
def test_any_number_of_blocks_gives_the_drivers_table_bit_for_bit(
    ray_in_process, tmp_path, level, convention
):
    run, annotations, query_ids = _level_inputs(tmp_path, level, convention)
    # a query outside the query set, with repeated keys: evaluated in the last block, dropped from the table
    stray = run[run["query_id"] == run["query_id"].iloc[0]].assign(query_id="stray")
    run = pd.concat([run, stray, stray], ignore_index=True)
    annotations = pd.concat([annotations, annotations.iloc[:1].assign(query_id="stray")], ignore_index=True)
    options = {"measures": MEASURES, "cutoffs": [1, 5, 10, 40], "convention": convention,
               "relevance_threshold": 1, "unjudged": "nonrelevant"}  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        local = per_query_metrics(run, annotations, query_ids, **options)
        for blocks in (2, 3, 7, len(query_ids)):
            sharded = per_query_metrics_on_ray(run, annotations, query_ids, blocks=blocks, **options)
            pd.testing.assert_frame_equal(sharded, local, check_exact=True)
            assert sharded.attrs == local.attrs
    assert list(local.index) == [str(q) for q in query_ids] and len(local) == 89  # 90, one unjudged


def test_a_query_without_judgment_is_warned_once_in_the_driver(ray_in_process, tmp_path):
    run, annotations, query_ids = _level_inputs(tmp_path, "document", "trec")
    options = {"measures": ["ndcg"], "cutoffs": [10], "convention": "trec", "relevance_threshold": 1}
    unjudged = [*query_ids, "never-judged"]
    with pytest.warns(Warning, match="1 queries have no judgment") as caught:
        table = per_query_metrics_on_ray(run, annotations, unjudged, blocks=4, **options)
    assert len([w for w in caught if "no judgment" in str(w.message)]) == 1
    assert table.loc["never-judged", "ndcg@10"] == 0.0


def test_the_ray_backend_shards_a_large_runs_evaluation_with_the_local_numbers(
    ray_in_process, tmp_path, monkeypatch
):
    config_path = write_comparison(
        tmp_path, level="document", n_queries=120, hits=50, seed=38, chunk_keys=False, convention="trec",
        cutoffs=(1, 5, 10, 50), n_resamples=300,
    )  # fmt: skip
    calls = []
    original = ray_evaluation._evaluate_block.remote
    monkeypatch.setattr(ray_evaluation, "ROWS_PER_TASK", 1_000)  # 6,000 hits a run: a block per CPU (2)
    monkeypatch.setattr(
        ray_evaluation._evaluate_block, "remote", lambda *a, **k: calls.append(1) or original(*a, **k)
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        local = run_comparison(load_config(config_path))
        on_ray = run_comparison(load_config(config_path, ["execution.backend=ray"]))
    assert len(calls) == 4  # two runs, two blocks each: the evaluation did run as Ray tasks
    for name, outcome in local.variants.items():
        pd.testing.assert_frame_equal(on_ray.variants[name].per_query, outcome.per_query, check_exact=True)
    pd.testing.assert_frame_equal(on_ray.comparison, local.comparison, check_exact=True)
    p_values = ["p_t", "p_permutation", "p_bootstrap", "p_wilcoxon", "p_adjusted"]  # equal above, and real
    assert np.isfinite(local.comparison[p_values].to_numpy(dtype=float)).all()


def test_bad_input_found_in_a_ray_task_is_the_local_path_s_one_line_error(ray_in_process, tmp_path):
    """A block's task that rejects its hits raises the error the driver would (the same type, exit code and
    one line), not Ray's wrapper with the remote traceback."""
    from abcompare.core.errors import AbcompareError

    run, annotations, query_ids = _level_inputs(tmp_path, "document", "trec")
    run = run.copy()
    last = run["query_id"] == str(query_ids[-1])  # hits of the last block only: no score, a missing rank
    run["rank"] = run["rank"].astype("float64")
    run.loc[last, ["score", "rank"]] = float("nan")
    options = {"measures": ["ndcg"], "cutoffs": [10], "convention": "trec", "relevance_threshold": 1}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(AbcompareError) as local:
            per_query_metrics(run, annotations, query_ids, **options)
        with pytest.raises(AbcompareError) as on_ray:
            per_query_metrics_on_ray(run, annotations, query_ids, blocks=3, **options)
    assert type(on_ray.value) is type(local.value) and on_ray.value.exit_code == 2
    assert str(on_ray.value) == str(local.value) and "\n" not in str(on_ray.value)
    assert str(on_ray.value).startswith("rank: run has a missing rank")
