"""Encoding throughput of each packaged embedding model and backend, as ratios measured in one run
(``python -m benchmarks --only encoding``).

The same distinct chunk texts of the shipped example (what a corpus encodes) go through each model's
encoder (``load_encoder``: the one the dense retriever uses, without the cache) in this process: all-MiniLM-
L6-v2 fp32 on torch, its int8 ONNX export on onnxruntime, and paraphrase-MiniLM-L3-v2 (3 layers) on
onnxruntime. Loading and one warm-up batch are outside the clocks. The models take turns within each round,
round after round, so that the shared machine's load hits them alike; each model's figure is its median
over the rounds, with the range, and the ratios are taken between medians of the same run.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from benchmarks.bench_ray import encoding_texts

#: (label, model, backend): the control first; every ratio is against it.
MODELS: tuple[tuple[str, str, str], ...] = (
    ("all-MiniLM-L6-v2 fp32, torch", "all-MiniLM-L6-v2", "torch"),
    ("all-MiniLM-L6-v2 int8, onnx", "all-MiniLM-L6-v2-int8", "onnx"),
    ("paraphrase-MiniLM-L3-v2 fp32, onnx", "paraphrase-MiniLM-L3-v2", "onnx"),
)
BATCH_SIZE = 64  # the dense retriever's default


@dataclass
class Throughput:
    """Seconds per round for each model label, over ``texts`` texts; the model files' sizes."""

    texts: int
    seconds: dict[str, list[float]] = field(default_factory=dict)
    model_bytes: dict[str, int] = field(default_factory=dict)
    threads: str = ""

    def rate(self, label: str) -> float:
        """Texts per second at the median round."""
        return self.texts / statistics.median(self.seconds[label])


def run_throughput(count: int = 231, rounds: int = 3, log: Callable[[str], None] = print) -> Throughput:
    """Encode ``count`` texts ``rounds`` times with each model, interleaved."""
    import onnxruntime
    import torch

    from abcompare.retrieval.dense import load_encoder
    from abcompare.retrieval.models import resolve_embedding_model

    texts = encoding_texts(count)
    result = Throughput(len(texts))
    encoders = {}
    for label, name, backend in MODELS:
        log(f"encoding: loading {label} ...")
        encoders[label] = load_encoder(name, backend)
        encoders[label].encode(texts[:8], BATCH_SIZE)  # warm-up
        model = resolve_embedding_model(name, backend)
        result.model_bytes[label] = sum(p.stat().st_size for p in model.weights)
        result.seconds[label] = []
    result.threads = (
        f"torch {torch.get_num_threads()} threads; onnxruntime {onnxruntime.__version__}, its default "
        "intra-op threads"
    )
    for round_ in range(rounds):
        for label, _, _ in MODELS:
            log(f"encoding: round {round_ + 1}/{rounds}, {label}, {len(texts)} texts ...")
            start = time.perf_counter()
            encoders[label].encode(texts, BATCH_SIZE)
            result.seconds[label].append(time.perf_counter() - start)
    return result


def throughput_table(result: Throughput) -> tuple[list[str], list[list[str]]]:
    """One row per model: texts/s (median, range over rounds), speed and size against the control."""
    control = MODELS[0][0]
    header = ["model, backend", "texts/s (median)", "range over rounds", "vs fp32 torch", "weights"]
    rows = []
    for label, _, _ in MODELS:
        rates = sorted(result.texts / s for s in result.seconds[label])
        ratio = result.rate(label) / result.rate(control)
        size = result.model_bytes[label] / result.model_bytes[control]
        rows.append(
            [
                label,
                f"{result.rate(label):.1f}",
                f"{rates[0]:.1f}–{rates[-1]:.1f}",
                "1.00x" if label == control else f"{ratio:.2f}x",
                f"{result.model_bytes[label] / 1e6:.0f} MB ({size:.2f}x)",
            ]
        )
    return header, rows


def throughput_lines(result: Throughput) -> list[str]:
    """The ratios the issue asks for, in words: int8 ONNX vs fp32 torch, L3 vs L6."""
    fp32, int8, l3 = (label for label, _, _ in MODELS)
    return [
        f"- int8 ONNX vs fp32 torch (all-MiniLM-L6-v2): {result.rate(int8) / result.rate(fp32):.2f}x the "
        "texts per second",
        f"- L3 vs L6: paraphrase-MiniLM-L3-v2 (onnx) {result.rate(l3) / result.rate(fp32):.2f}x fp32 torch, "
        f"{result.rate(l3) / result.rate(int8):.2f}x int8 onnx",
        f"- {result.texts} texts per round, {len(result.seconds[fp32])} rounds; {result.threads}",
    ]
