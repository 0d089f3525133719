"""The ray backend against local, as ratios measured in one run (``python -m benchmarks --only ray``).

- Overhead: ``abcompare run configs/fusion_sweep.yaml`` (24 points, MLflow tracking to a throwaway SQLite
  store, warm embedding cache) on ``local`` and on ``ray`` (a private Ray started by the run), the two
  interleaved run after run so that the shared machine's load hits both alike; best wall time of each.
- Encoding: texts per second of plain sentence-transformers (one ``model.encode`` call in this process)
  against the Ray Data path (``encode_on_ray``: the actor pool, model loading in the actors included,
  vectors written into a throwaway embedding cache) with 1 and with 2 encoder actors, on the same texts.
"""

from __future__ import annotations

import json
import logging
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.bench_end_to_end import run_cli
from benchmarks.harness import REPO_ROOT, fmt_seconds

SWEEP = REPO_ROOT / "configs" / "fusion_sweep.yaml"


@dataclass
class Overhead:
    seconds: dict[str, list[float]] = field(default_factory=lambda: {"local": [], "ray": []})
    stages: dict[str, dict[str, float]] = field(default_factory=dict)
    same_numbers: bool | None = None
    error: str | None = None

    def best(self, backend: str) -> float:
        return min(self.seconds[backend]) if self.seconds[backend] else float("nan")

    @property
    def ratio(self) -> float:
        return self.best("ray") / self.best("local")


def run_overhead(repeats: int = 3, log: Callable[[str], None] = print) -> Overhead:
    """Warm-up (embedding cache, page cache), then ``repeats`` interleaved runs of each backend."""
    result = Overhead()
    with tempfile.TemporaryDirectory(prefix="abcompare-bench-ray-") as tmp:
        store = Path(tmp)
        tracking = ["--set", f"tracking.uri=sqlite:///{store / 'mlflow.db'}",
                    "--set", f"tracking.artifact_location={store / 'mlruns'}"]  # fmt: skip
        outputs: dict[str, dict] = {}
        for repeat in range(repeats + 1):
            for backend in ("local", "ray"):
                log(f"ray overhead: {backend} run {repeat} ...")
                backend_set = ["--set", f"execution.backend={backend}"]
                args = ["run", str(SWEEP), "--json", "--quiet", *tracking, *backend_set]
                seconds, _, stdout, stderr, code = run_cli(args, cwd=store)
                if code != 0:
                    tail = (stderr.strip().splitlines() or [""])[-1][:200]
                    result.error = f"{backend}: exit {code}: {tail}"
                    return result
                if repeat == 0:
                    continue  # warm-up
                payload = json.loads(stdout)
                if seconds <= min(result.seconds[backend], default=float("inf")):
                    result.stages[backend] = {k: float(v) for k, v in payload["timings"].items()}
                result.seconds[backend].append(seconds)
                outputs[backend] = payload
        result.same_numbers = all(
            outputs["local"][key] == outputs["ray"][key] for key in ("means", "comparison", "alignment")
        )
    return result


@dataclass
class Encoding:
    texts: int
    seconds: dict[str, float] = field(default_factory=dict)

    def rate(self, name: str) -> float:
        return self.texts / self.seconds[name]


def encoding_texts(count: int) -> list[str]:
    """Distinct chunk texts of the shipped example at several chunk sizes (what a corpus encodes)."""
    from abcompare.config import load_config
    from abcompare.data.experiment import load_dataset_for_experiment
    from abcompare.retrieval import pipeline

    config = load_config(REPO_ROOT / "configs" / "rrf_vs_dbsf.yaml")
    corpus = load_dataset_for_experiment(config.dataset).corpus
    dense = config.control.retrievers["dense"]
    texts: list[str] = []
    for size in (1000, 700, 500, 400, 300, 250, 200, 150):
        chunking = config.control.chunking.model_copy(update={"size": size, "overlap": size // 5})
        texts += pipeline.document_texts(pipeline.chunk_corpus(corpus, chunking), dense)
    distinct = list(dict.fromkeys(texts))
    if len(distinct) < count:
        raise ValueError(f"only {len(distinct)} distinct texts")
    return distinct[:count]


def run_encoding(count: int = 1024, log: Callable[[str], None] = print) -> Encoding:
    """Plain sentence-transformers, then the Ray Data path with 1 and 2 actors (a private Ray, started
    before the clocks run), each into its own throwaway cache."""
    import ray

    from abcompare.config import ExecutionSettings, load_config
    from abcompare.execution.ray_encoding import encode_on_ray
    from abcompare.execution.ray_session import RaySession
    from abcompare.retrieval import pipeline
    from abcompare.retrieval.dense import encode_texts, load_model

    texts = encoding_texts(count)
    dense = load_config(REPO_ROOT / "configs" / "rrf_vs_dbsf.yaml").control.retrievers["dense"]
    result = Encoding(len(texts))
    log(f"encoding: plain sentence-transformers, {len(texts)} texts ...")
    model = load_model(dense.model)  # loading excluded, as a long-lived process would
    encode_texts(model, texts[:8], dense.batch_size)
    start = time.perf_counter()
    encode_texts(model, texts, dense.batch_size)
    result.seconds["sentence-transformers"] = time.perf_counter() - start
    ray.init(address="local", _node_ip_address="127.0.0.1", include_dashboard=False, log_to_driver=False,
             logging_level=logging.WARNING)  # fmt: skip
    try:
        session = RaySession("bench")
        for actors in (1, 2):
            log(f"encoding: Ray Data, {actors} actor(s) ...")
            folder = Path(tempfile.mkdtemp(prefix="abcompare-bench-enc-"))
            try:
                encoder = pipeline.dense_encoder(dense, folder)
                blocks = encoder.cache.missing_blocks(texts)
                settings = ExecutionSettings(backend="ray", encoders=actors)
                start = time.perf_counter()
                encode_on_ray(encoder, blocks, settings, session)
                result.seconds[f"Ray Data, {actors} actor{'s' * (actors > 1)}"] = time.perf_counter() - start
            finally:
                shutil.rmtree(folder, ignore_errors=True)
    finally:
        ray.shutdown()
    return result


def overhead_lines(result: Overhead) -> list[str]:
    if result.error:
        return [f"- failed: {result.error}"]
    rows = []
    for backend in ("local", "ray"):
        stages = ", ".join(f"{k} {fmt_seconds(v)}" for k, v in result.stages.get(backend, {}).items())
        runs = ", ".join(fmt_seconds(s) for s in result.seconds[backend])
        best = fmt_seconds(result.best(backend))
        rows.append(f"- {backend}: best {best} (runs: {runs}); stages of the best: {stages}")
    rows.append(
        f"- ray / local wall time: {result.ratio:.3f} ({100 * (result.ratio - 1):+.1f}%); "
        "target at most +15% — "
        + ("met" if result.ratio <= 1.15 else "MISSED")
        + f"; same means, comparison and alignment: {result.same_numbers}"
    )
    return rows


def encoding_lines(result: Encoding) -> list[str]:
    base = result.rate("sentence-transformers")
    rows = [f"- {result.texts:,} distinct chunk texts of the example (MiniLM, batch 64, CPU):"]
    for name in result.seconds:
        rows.append(f"  - {name}: {fmt_seconds(result.seconds[name])}, {result.rate(name):.1f} texts/s "
                    f"({result.rate(name) / base:.2f}x plain)")  # fmt: skip
    one, two = result.rate("Ray Data, 1 actor"), result.rate("Ray Data, 2 actors")
    rows.append(
        f"- Ray Data (1 actor) / plain: {one / base:.2f}; target at least 0.90 — "
        + ("met" if one / base >= 0.9 else "MISSED")
        + f"; 2 actors / 1 actor: {two / one:.2f}"
    )
    return rows
