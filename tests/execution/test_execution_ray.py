"""The ray backend on an in-process Ray (one per test session): the same runs, per-query metrics and
p-values as the local backend; encoding through Ray Data gives the local vectors bit for bit; a user
error raised inside a task reaches the user as the same one line."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from support.cli import REPO

from abcompare.config import ExecutionSettings, load_config
from abcompare.core.errors import RetrievalError
from abcompare.runner import run_comparison

pytestmark = pytest.mark.slow
LEAN = ["significance.n_resamples=200", "tracking.enabled=false"]
#: No latency timing pass, for the tests of other things than cost (the fusion sweep's and the Python
#: retriever's tests check that the driver times the variants on Ray's backend as locally).
UNTIMED = "efficiency.repeats=0"
#: The least timing pass there is (one round over five queries), for the tests that check the driver times
#: the variants on Ray's backend as locally: they read that a cost is there and measured, not its size.
ONE_ROUND = ("efficiency.repeats=1", "efficiency.max_queries=5")


def both_backends(config_path: Path, cache: Path, *overrides: str):
    settings = [*LEAN, f"cache_dir={cache}", *overrides]
    local = run_comparison(load_config(config_path, settings))
    on_ray = run_comparison(load_config(config_path, [*settings, "execution.backend=ray"]))
    return local, on_ray


def assert_same_results(local, on_ray) -> None:
    assert list(on_ray.variants) == list(local.variants)
    for name, outcome in local.variants.items():
        pd.testing.assert_frame_equal(on_ray.variants[name].run, outcome.run, check_exact=True)
        pd.testing.assert_frame_equal(on_ray.variants[name].per_query, outcome.per_query, check_exact=True)
        assert on_ray.variants[name].means == outcome.means
        sizes = {k: v for k, v in outcome.efficiency.items() if k.endswith(("_bytes", "embedded_chunks"))}
        assert {k: on_ray.variants[name].efficiency[k] for k in sizes} == sizes
        # the latency is timed in the driver on both backends (measured, so only its presence is equal)
        timed = {k for k in outcome.efficiency if k.startswith("efficiency.seconds_per_query")}
        assert timed <= set(on_ray.variants[name].efficiency)
    pd.testing.assert_frame_equal(on_ray.comparison, local.comparison, check_exact=True)


def test_the_fusion_sweep_on_an_in_process_ray_equals_local(ray_in_process, embedding_cache: Path) -> None:
    local, on_ray = both_backends(REPO / "configs" / "fusion_sweep.yaml", embedding_cache, *ONE_ROUND)
    assert len(local.variants) == 25
    assert_same_results(local, on_ray)
    assert "execution" in on_ray.timings and on_ray.timings["retrieval"] > 0
    # every variant is charged its cost, as locally: index, embeddings, search (measured, so > 0)
    cost = on_ray.variants["control"].efficiency
    assert cost["efficiency.seconds_per_query"] > 0 and cost["efficiency.index_seconds"] > 0


def test_a_precomputed_run_is_read_in_the_driver_beside_ray_variants(ray_in_process, embedding_cache) -> None:
    local, on_ray = both_backends(REPO / "configs" / "precomputed_run.yaml", embedding_cache, UNTIMED)
    assert on_ray.variants["production"].efficiency == {}
    assert_same_results(local, on_ray)


def test_a_user_error_raised_in_a_ray_task_is_the_same_one_line(ray_in_process, embedding_cache) -> None:
    overrides = [*LEAN, f"cache_dir={embedding_cache}", "control.retrievers.bm25.stemmer=klingon"]
    path = REPO / "configs" / "rrf_vs_dbsf.yaml"
    with pytest.raises(RetrievalError) as local:
        run_comparison(load_config(path, overrides))
    with pytest.raises(RetrievalError) as on_ray:
        run_comparison(load_config(path, [*overrides, "execution.backend=ray"]))
    assert str(on_ray.value) == str(local.value)
    assert "unknown stemmer language 'klingon'" in str(on_ray.value) and "\n" not in str(on_ray.value)


def test_ray_data_encoding_gives_the_local_vectors_bit_for_bit(ray_in_process, tmp_path: Path) -> None:
    from abcompare.data.experiment import load_dataset_for_experiment
    from abcompare.execution.ray_encoding import encode_on_ray
    from abcompare.execution.ray_session import RaySession
    from abcompare.retrieval import pipeline
    from abcompare.retrieval.embedding_cache import text_hash

    config = load_config(REPO / "configs" / "rrf_vs_dbsf.yaml")
    dataset = load_dataset_for_experiment(config.dataset)
    chunks = pipeline.chunk_corpus(dataset.corpus.head(6), config.control.chunking)
    dense = config.control.retrievers["dense"].model_copy(update={"batch_size": 4})  # 3 model batches a block
    texts = pipeline.document_texts(chunks, dense)
    assert len(texts) > 3 * 10  # several blocks, shared by two actors
    local = pipeline.dense_encoder(dense, tmp_path / "local")
    expected, encoded = local.cache.encode(texts, local._encode, block=10)
    assert encoded == len(set(texts))

    on_ray = pipeline.dense_encoder(dense, tmp_path / "ray")
    blocks = on_ray.cache.missing_blocks(texts, block=10)
    settings = ExecutionSettings(backend="ray", encoders=2)
    seen: list[tuple[int, int]] = []
    encode_on_ray(on_ray, blocks, settings, RaySession("test"), lambda *step: seen.append(step))
    assert seen[0] == (0, len(set(texts))) and seen[-1] == (len(set(texts)),) * 2
    vectors = on_ray.cache.get([text_hash(t) for t in texts])
    assert vectors.dtype == np.float32 and vectors.shape == expected.shape
    assert np.array_equal(vectors, expected)  # exactly: the same blocks, one model call each
    # the same shards (named by their keys) as the local path wrote
    shards = sorted(p.name for p in (tmp_path / "local").rglob("*.npy"))
    assert sorted(p.name for p in (tmp_path / "ray").rglob("*.npy")) == shards
    # a block split differently is one model call of other padded batches: the same vectors to rounding
    # (whether their last bits differ is the machine's matter, so no test pins that they do)
    np.testing.assert_allclose(local._encode(texts[:25]), expected[:25], rtol=0, atol=1e-6)


@pytest.mark.parametrize(
    ("resources", "settings", "blocks", "expected"),
    [
        ({"CPU": 2.0}, {}, 10, (1, 2.0, 0.0)),  # one actor per 2 CPUs (the local path's 2 threads)
        ({"CPU": 2.0}, {"encoders": 2}, 10, (2, 1.0, 0.0)),  # two actors sharing them
        ({"CPU": 16.0}, {}, 10, (8, 2.0, 0.0)),
        ({"CPU": 16.0}, {}, 3, (3, 2.0, 0.0)),  # never more actors than blocks
        ({"CPU": 8.0, "GPU": 4.0}, {}, 10, (4, 1.0, 1.0)),  # one actor per GPU
        ({"CPU": 8.0, "GPU": 4.0}, {"num_gpus_per_encoder": 0.5}, 10, (8, 1.0, 0.5)),
    ],
)
def test_the_encoder_pool_follows_the_cluster(resources, settings, blocks, expected) -> None:
    from abcompare.execution.ray_encoding import encoder_pool

    settings = ExecutionSettings(backend="ray", **settings)
    pool = encoder_pool(settings, resources, blocks, largest_node_cpus=8, threads=2)
    assert (pool.actors, pool.cpus, pool.gpus, pool.threads) == (*expected, 2)


def test_query_planning_on_ray_equals_local(ray_in_process, embedding_cache) -> None:
    """configs/query_planning.yaml (rewrites fused by RRF, RM3 feedback on BM25) and a hybrid treatment
    that plans its queries for both retrievers: the Ray tasks run the same stage functions, so the same
    runs, metrics and p-values."""
    hybrid = ("treatments.hybrid={retrievers: {dense: {}}, fusion: {method: rrf},"
              " query_planning: {variants: query_variants/hr_docs.jsonl, expansion: rm3}}")  # fmt: skip
    config = REPO / "configs" / "query_planning.yaml"
    local, on_ray = both_backends(config, embedding_cache, hybrid, "dataset.max_queries=30", UNTIMED)
    assert list(local.variants) == ["control", "variants", "rm3", "hybrid"]
    assert_same_results(local, on_ray)
    assert local.variants["variants"].means != local.variants["control"].means


def test_a_python_retriever_runs_in_the_driver_beside_ray_variants(ray_in_process, embedding_cache) -> None:
    """A callable is never pickled into a task: one holding a lock (which cannot be pickled) runs on Ray's
    backend as locally, called once in this process, with the same numbers."""
    import os
    import threading

    from abcompare.data.runs import hits_from_run_frame, read_run

    hits = hits_from_run_frame(read_run(REPO / "configs" / "runs" / "hr_docs_production.trec"))
    lock, callers = threading.Lock(), []

    def prod(queries: pd.DataFrame) -> dict:
        with lock:
            callers.append(os.getpid())
        return {query: hits[query] for query in queries["query_id"] if query in hits}

    settings = [*LEAN, f"cache_dir={embedding_cache}", "treatments.production.run={python: prod}", *ONE_ROUND]
    path = REPO / "configs" / "precomputed_run.yaml"
    local = run_comparison(load_config(path, settings), retrievers={"prod": prod})
    on_ray = run_comparison(
        load_config(path, [*settings, "execution.backend=ray"]), retrievers={"prod": prod}
    )
    assert callers == [os.getpid(), os.getpid()]
    assert on_ray.variants["production"].efficiency["efficiency.seconds_per_query"] > 0
    for outcome in (local, on_ray):
        outcome.variants["production"].efficiency.clear()  # measured wall time: the one thing that differs
    assert_same_results(local, on_ray)
