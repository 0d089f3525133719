"""The ray backend against local, measured in one run (``python -m benchmarks --only ray``).

- Overhead: ``abcompare run configs/fusion_sweep.yaml`` (24 points, MLflow tracking to a throwaway SQLite
  store, warm embedding cache) on ``local`` and on ``ray`` (a private Ray started by the run), the two
  interleaved run after run so that the shared machine's load hits both alike; best wall time of each.
- Collections (issue 28): ``benchmarks/collections_ray.yaml`` (BM25 vs hybrid across hr-docs, Cranfield and
  CISI: Ray has every collection's retrieval in flight at once) and its first collection alone, on both
  backends, interleaved. Ray's fixed start is the one-collection run's ray-minus-local wall time (bounded
  in seconds); the per-collection ratio is the several-collection run's ray time less that start, over local.
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
COLLECTIONS = REPO_ROOT / "benchmarks" / "collections_ray.yaml"
BACKENDS = ("local", "ray")

#: The bounds (issue 28's restatement of issue 15's): what a private Ray costs once per run, in seconds (its
#: start, its workers', its stop: a run with next to no work on ray against local), and, that subtracted,
#: the ratio of a run across several collections on ray to the same run locally.
FIXED_START_BOUND_SECONDS = 5.0
PER_COLLECTION_RATIO_BOUND = 1.15
SWEEP_RATIO_BOUND = 1.15  # issue 15's bound on the plain wall ratio of the fusion sweep


@dataclass
class Overhead:
    seconds: dict[str, list[float]] = field(default_factory=lambda: {b: [] for b in BACKENDS})
    stages: dict[str, dict[str, float]] = field(default_factory=dict)
    same_numbers: bool | None = None
    error: str | None = None

    def best(self, backend: str) -> float:
        return min(self.seconds[backend]) if self.seconds[backend] else float("nan")

    @property
    def ratio(self) -> float:
        return self.best("ray") / self.best("local")


def result_numbers(payload: dict) -> dict:
    """What must not depend on the backend in a run's ``--json``: the means, tests and alignment (of each
    collection, and the pooled tests, for a run across several); not run ids or timings."""
    if "collections" in payload:
        return {
            "collections": {name: result_numbers(c) for name, c in payload["collections"].items()},
            **{key: payload[key] for key in ("pooled", "per_collection")},
        }
    return {key: payload[key] for key in ("means", "comparison", "alignment")}


def run_interleaved(
    configs: dict[str, Path], repeats: int = 3, warm_up: bool = True, log: Callable[[str], None] = print
) -> dict[str, Overhead]:
    """``abcompare run`` of each config on each backend (MLflow tracking to a throwaway SQLite store), one
    round after another so that the shared machine's load hits every run alike: an optional warm-up round
    (embedding cache, page cache, the store's tables), then ``repeats`` timed rounds."""
    results = {name: Overhead() for name in configs}
    with tempfile.TemporaryDirectory(prefix="abcompare-bench-ray-") as tmp:
        store = Path(tmp)
        tracking = ["--set", f"tracking.uri=sqlite:///{store / 'mlflow.db'}",
                    "--set", f"tracking.artifact_location={store / 'mlruns'}"]  # fmt: skip
        outputs: dict[str, dict[str, dict]] = {name: {} for name in configs}
        for repeat in range(repeats + warm_up):
            for name, config in configs.items():
                result = results[name]
                for backend in BACKENDS:
                    if result.error:
                        continue
                    log(f"ray overhead: {name}, {backend} run {repeat} ...")
                    backend_set = ["--set", f"execution.backend={backend}"]
                    args = ["run", str(config), "--json", "--quiet", *tracking, *backend_set]
                    seconds, _, stdout, stderr, code = run_cli(args, cwd=store)
                    if code != 0:
                        lines = stderr.strip().splitlines() or [""]
                        tail = next((ln for ln in lines if ln.startswith("error:")), lines[-1])[:300]
                        result.error = f"{backend}: exit {code}: {tail}"
                        continue
                    if warm_up and repeat == 0:
                        continue
                    payload = json.loads(stdout)
                    if seconds <= min(result.seconds[backend], default=float("inf")):
                        result.stages[backend] = {k: float(v) for k, v in payload["timings"].items()}
                    result.seconds[backend].append(seconds)
                    outputs[name][backend] = payload
        for name, result in results.items():
            if not result.error:
                local, ray = (result_numbers(outputs[name][b]) for b in BACKENDS)
                result.same_numbers = local == ray
    return results


def run_overhead(repeats: int = 3, log: Callable[[str], None] = print) -> Overhead:
    """The fusion sweep: a warm-up, then ``repeats`` interleaved runs of each backend."""
    return run_interleaved({"sweep": SWEEP}, repeats, log=log)["sweep"]


def first_collection_config(config: Path, folder: Path) -> Path:
    """The config across several collections cut to its first collection, as a one-collection config
    (``dataset:``) written into ``folder``, its path made absolute: the run with next to no work whose
    ray-minus-local wall time is Ray's fixed cost."""
    import yaml

    raw = yaml.safe_load(config.read_text())
    first = {key: value for key, value in raw.pop("datasets")[0].items() if key != "runs"}
    if "path" in first:
        first["path"] = str((config.parent / first["path"]).resolve())
    raw["dataset"] = first
    out = folder / f"{config.stem}_first.yaml"
    out.write_text(yaml.safe_dump(raw, sort_keys=False))
    return out


@dataclass
class CollectionsOverhead:
    """The run across several collections and the run of its first collection alone, each on both
    backends, from the same interleaved rounds."""

    collections: int
    full: Overhead
    first: Overhead

    @property
    def error(self) -> str | None:
        return self.full.error or self.first.error

    @property
    def fixed_seconds(self) -> float:
        """Ray's fixed cost: the one-collection run on ray less the same run locally (best of each)."""
        return self.first.best("ray") - self.first.best("local")

    @property
    def per_collection_ratio(self) -> float:
        """The run across the collections on ray, its fixed cost subtracted, over the same run locally."""
        return (self.full.best("ray") - self.fixed_seconds) / self.full.best("local")

    @property
    def per_collection_seconds(self) -> float:
        """What ray adds (or saves, negative) per collection once its fixed cost is paid."""
        return (self.full.best("ray") - self.fixed_seconds - self.full.best("local")) / self.collections


def run_collections_overhead(
    config: Path = COLLECTIONS, repeats: int = 3, warm_up: bool = True, log: Callable[[str], None] = print
) -> CollectionsOverhead:
    """The collections workload (issue 28): the config and its first collection alone, on local and on
    ray, interleaved round after round; best wall time of each."""
    import yaml

    count = len(yaml.safe_load(config.read_text())["datasets"])
    with tempfile.TemporaryDirectory(prefix="abcompare-bench-first-") as tmp:
        first = first_collection_config(config, Path(tmp))
        runs = run_interleaved({"first collection": first, "collections": config}, repeats, warm_up, log)
    return CollectionsOverhead(count, full=runs["collections"], first=runs["first collection"])


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


def _backend_rows(result: Overhead) -> list[str]:
    rows = []
    for backend in BACKENDS:
        stages = ", ".join(f"{k} {fmt_seconds(v)}" for k, v in result.stages.get(backend, {}).items())
        runs = ", ".join(fmt_seconds(s) for s in result.seconds[backend])
        best = fmt_seconds(result.best(backend))
        rows.append(f"- {backend}: best {best} (runs: {runs}); stages of the best: {stages}")
    return rows


def _verdict(met: bool) -> str:
    return "met" if met else "MISSED"


def overhead_lines(result: Overhead) -> list[str]:
    if result.error:
        return [f"- failed: {result.error}"]
    return [
        *_backend_rows(result),
        f"- ray / local wall time: {result.ratio:.3f} ({100 * (result.ratio - 1):+.1f}%); "
        f"target at most {SWEEP_RATIO_BOUND:g} — {_verdict(result.ratio <= SWEEP_RATIO_BOUND)}"
        f"; same means, comparison and alignment: {result.same_numbers}",
    ]


def collections_lines(result: CollectionsOverhead, name: str = "collections") -> list[str]:
    if result.error:
        return [f"- failed: {result.error}"]
    fixed, ratio = result.fixed_seconds, result.per_collection_ratio
    first_execution = result.first.stages.get("ray", {}).get("execution", float("nan"))
    full_execution = result.full.stages.get("ray", {}).get("execution", float("nan"))
    return [
        f"- {name} ({result.collections} collections):",
        *(f"  {row}" for row in _backend_rows(result.full)),
        "- the first collection alone:",
        *(f"  {row}" for row in _backend_rows(result.first)),
        f"- Ray's fixed start (the first collection alone, ray less local): {fixed:.2f} s (its execution "
        f"stage, starting and stopping Ray: {first_execution:.2f} s; in the run across the collections: "
        f"{full_execution:.2f} s); bound at most {FIXED_START_BOUND_SECONDS:g} s — "
        f"{_verdict(fixed <= FIXED_START_BOUND_SECONDS)}",
        f"- per collection, the fixed start subtracted: ray / local {ratio:.3f} "
        f"({result.per_collection_seconds:+.2f} s per collection); bound at most "
        f"{PER_COLLECTION_RATIO_BOUND:g} — {_verdict(ratio <= PER_COLLECTION_RATIO_BOUND)}",
        f"- plain wall time across the collections, ray / local: {result.full.ratio:.3f}; same numbers "
        f"(each collection's means, tests and alignment, the pooled tests): {result.full.same_numbers}",
    ]


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
