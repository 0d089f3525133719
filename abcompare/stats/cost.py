"""What each variant costs, beside its verdict: query latency summarised robustly, the one rule that says
when two latencies are within the noise, ratios against the control, and the sweep's noise-aware front.

Latency arrives as timed samples, one row per timed round and one column per timed query (seconds), from
interleaved rounds that ran every variant's query stage on the same queries (``retrieval.latency``).
A query's latency is its median over the rounds (a round a busy machine slowed is outvoted); a variant's
latency is the mean of those over the queries, its p95 the 95th percentile of them, and its repeatability
the interquartile range of the rounds' means. Two latencies differ only when the paired bootstrap interval
of their ratio (over the queries) lies wholly outside the noise floor's band ``[1/(1+f), 1+f]``: equal work
then reads "within the noise", and a timing that happened to come out fast draws no front.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import pandas as pd

from abcompare.core.vocabulary import CONTROL

#: The percentile a variant's tail latency is reported at.
TAIL_PERCENTILE = 95
#: Paired bootstrap resamples (over the timed queries) behind a latency ratio's interval, and its level.
RATIO_RESAMPLES = 2000
RATIO_LEVEL = 0.95
#: A latency ratio closer to 1 than this fraction is never called a difference (the default of the
#: config's ``efficiency.noise_floor``): on a shared machine, equal work differs by a few percent.
NOISE_FLOOR = 0.1

#: What the embeddings of a variant were: encoded on this run, read from the embedding cache (in part or
#: in whole), or none (no dense retriever).
ENCODED, CACHED, PARTLY_CACHED, NO_EMBEDDINGS = "encoded", "cached", "partly cached", "none"

#: Where a variant's run came from (the cost table's ``source``): retrieved here (every figure measured),
#: a Python retriever handed over (its one call's seconds per query only), a run file (nothing measured).
RETRIEVED, PYTHON, RUN_FILE = "retrieved", "python", "run file"


# ------------------------------------------------------------------------------------------ one variant
@dataclass(frozen=True)
class Latency:
    """One variant's query latency (seconds per query) from its timed samples."""

    mean: float  # mean over the queries of each query's median over the rounds
    p95: float  # the 95th percentile of those per-query medians
    low: float  # the interquartile range of the rounds' means: how repeatable the rounds were
    high: float
    rounds: int
    queries: int


def per_query_latency(samples: np.ndarray) -> np.ndarray:
    """Each query's latency: the median of its timed rounds (``samples``: rounds x queries, seconds)."""
    samples = np.asarray(samples, dtype=float)
    if samples.ndim != 2 or samples.size == 0:
        raise ValueError(f"latency samples must be a non-empty rounds x queries array, got {samples.shape}")
    return np.median(samples, axis=0)


def summarise_latency(samples: np.ndarray) -> Latency:
    """A variant's :class:`Latency` from its samples (rounds x queries)."""
    per_query = per_query_latency(samples)
    round_means = np.asarray(samples, dtype=float).mean(axis=1)
    low, high = np.percentile(round_means, [25, 75])
    return Latency(
        mean=float(per_query.mean()),
        p95=float(np.percentile(per_query, TAIL_PERCENTILE)),
        low=float(low),
        high=float(high),
        rounds=int(samples.shape[0]),
        queries=int(samples.shape[1]),
    )


# ------------------------------------------------------------------------------------------ two variants
@dataclass(frozen=True)
class LatencyRatio:
    """``a``'s latency over ``b``'s (below 1: ``a`` is faster), its paired bootstrap interval over the
    timed queries, and whether the two are within the noise (:func:`within_noise`)."""

    ratio: float
    low: float
    high: float
    within_noise: bool


def within_noise(low: float, high: float, noise_floor: float = NOISE_FLOOR) -> bool:
    """The one rule: a latency ratio whose interval ``[low, high]`` reaches into the band
    ``[1/(1+noise_floor), 1+noise_floor]`` is within the noise; only an interval wholly outside it is a
    difference."""
    return bool(low <= 1 + noise_floor and high >= 1 / (1 + noise_floor))


def _resamples(queries: int, seed: int) -> np.ndarray:
    """The bootstrap's query indices (resamples x queries), the same for every pair of one comparison."""
    return np.random.default_rng(seed).integers(0, queries, size=(RATIO_RESAMPLES, queries))


def _ratio(a: np.ndarray, b: np.ndarray, draws: np.ndarray, noise_floor: float) -> LatencyRatio:
    ratio = float(a.sum() / b.sum()) if b.sum() > 0 else math.inf
    boot = a[draws].sum(axis=1) / np.maximum(b[draws].sum(axis=1), np.finfo(float).tiny)
    tail = (1 - RATIO_LEVEL) / 2 * 100
    low, high = (float(v) for v in np.percentile(boot, [tail, 100 - tail]))
    return LatencyRatio(ratio, low, high, within_noise(low, high, noise_floor))


def latency_ratio(
    a_samples: np.ndarray, b_samples: np.ndarray, *, noise_floor: float = NOISE_FLOOR, seed: int = 0
) -> LatencyRatio:
    """``a``'s mean latency over ``b``'s, from samples timed on the same queries (rounds x queries each)."""
    a, b = per_query_latency(a_samples), per_query_latency(b_samples)
    if a.shape != b.shape:
        raise ValueError(f"latency samples of {a.shape[0]} and {b.shape[0]} queries cannot be paired")
    return _ratio(a, b, _resamples(len(a), seed), noise_floor)


def noise_aware_front(
    samples: Sequence[np.ndarray],
    quality: Sequence[float],
    *,
    noise_floor: float = NOISE_FLOOR,
    seed: int = 0,
) -> list[int]:
    """The indices of the points no other point dominates, where ``j`` dominates ``i`` only when it is at
    least as good (``quality``) and faster by more than the noise (its latency ratio to ``i`` is a
    difference and below 1). Equal work dominates nothing, so every point of it is on the front."""
    per_query = [per_query_latency(s) for s in samples]
    draws = _resamples(len(per_query[0]), seed) if per_query else np.empty((0, 0), int)
    dominated = set()
    for i, b in enumerate(per_query):
        for j, a in enumerate(per_query):
            if i == j or quality[j] < quality[i] or i in dominated:
                continue
            found = _ratio(a, b, draws, noise_floor)
            if not found.within_noise and found.ratio < 1:
                dominated.add(i)
    return [i for i in range(len(per_query)) if i not in dominated]


# ------------------------------------------------------------------------------------------ the table
#: The cost table's columns (one row per retrieved variant, indexed by its name).
COST_COLUMNS = (
    "seconds_per_query", "seconds_per_query_p95", "seconds_per_query_low", "seconds_per_query_high",
    "timed_rounds", "timed_queries", "encode_seconds_per_1000_chunks", "embedded_chunks", "encoded_chunks",
    "embeddings", "index_bytes", "model_bytes", "query_ratio", "query_ratio_low", "query_ratio_high",
    "query_within_noise", "encode_ratio", "model_ratio", "index_ratio", "source", "untimed_query_encoding",
    "calls", "prompt_tokens", "completion_tokens", "seconds", "cache_hits",
)  # fmt: skip
#: A judge's or a generator's columns (:func:`with_work_rows`); a variant's row has them empty.
WORK_COLUMNS = ("calls", "prompt_tokens", "completion_tokens", "seconds", "cache_hits")
#: The ``source`` of a judge's row and of an answer generator's.
JUDGE, GENERATOR = "judge", "generator"

#: The timed figures each variant's run carries as ``efficiency.*`` metrics (the build figures come from
#: the retrieval stage itself): cost-table column -> metric name.
LATENCY_METRICS = {
    "seconds_per_query": "efficiency.seconds_per_query",
    "seconds_per_query_p95": "efficiency.seconds_per_query_p95",
    "seconds_per_query_low": "efficiency.seconds_per_query_low",
    "seconds_per_query_high": "efficiency.seconds_per_query_high",
}


def embeddings_state(embedded: float, encoded: float) -> str:
    """Whether a variant's chunk embeddings were encoded here, read from the cache (wholly or partly), or
    whether it has none: a cached vector was never timed, so it is never reported as 0 s of encoding."""
    if not embedded:
        return NO_EMBEDDINGS
    if encoded >= embedded:
        return ENCODED
    return CACHED if not encoded else PARTLY_CACHED


def _size_ratio(treatment: float, control: float) -> float:
    return treatment / control if control else (1.0 if not treatment else math.nan)


def cost_table(
    efficiency: Mapping[str, Mapping[str, float]],
    samples: Mapping[str, np.ndarray],
    *,
    noise_floor: float = NOISE_FLOOR,
    seed: int = 0,
    given: Mapping[str, str] | None = None,
    untimed_encoding: Sequence[str] = (),
) -> pd.DataFrame:
    """One row per variant (``efficiency``: its ``efficiency.*`` build figures; ``samples``: its timed
    latency, rounds x queries): latency, encoding, sizes, and for each retrieved treatment its ratios to
    a retrieved control (``*_ratio``: the treatment's over the control's, so below 1 is faster or
    smaller). ``given`` names the variants whose run was given (:data:`PYTHON`, :data:`RUN_FILE`): their
    ``source`` says so, and they carry only what is known (a Python retriever's seconds per query, from
    its one call over the queries; nothing for a run file), never a ratio. ``untimed_encoding`` names the
    models whose query encoding the timing pass left out (one every timed variant shares, not loaded by
    the run: ``retrieval.latency``): each timed row's ``untimed_query_encoding`` (comma-separated, empty
    when every encoding was timed)."""
    given = dict(given or {})
    rows: dict[str, dict[str, object]] = {}
    for name, values in efficiency.items():
        if name in given or not values:  # a run file's efficiency is empty: nothing was retrieved here
            row = dict.fromkeys(COST_COLUMNS, math.nan)
            row.update(source=given.get(name, RUN_FILE), embeddings=NO_EMBEDDINGS)
            row["seconds_per_query"] = values.get("efficiency.seconds_per_query", math.nan)
            rows[name] = row
            continue
        embedded = float(values.get("efficiency.embedded_chunks", 0.0))
        encoded = float(values.get("efficiency.encoded_chunks", 0.0))
        row: dict[str, object] = dict.fromkeys(COST_COLUMNS, math.nan)
        row.update(
            encode_seconds_per_1000_chunks=values.get("efficiency.encode_seconds_per_1000_chunks", math.nan),
            embedded_chunks=embedded,
            encoded_chunks=encoded,
            embeddings=embeddings_state(embedded, encoded),
            index_bytes=float(values.get("efficiency.index_bytes", 0.0)),
            model_bytes=float(values.get("efficiency.model_bytes", 0.0)),
            query_within_noise=math.nan,  # 1.0 within the noise, 0.0 a difference, NaN not compared
            source=RETRIEVED,
        )
        if name in samples:
            latency = summarise_latency(samples[name])
            row.update(
                seconds_per_query=latency.mean, seconds_per_query_p95=latency.p95,
                seconds_per_query_low=latency.low, seconds_per_query_high=latency.high,
                timed_rounds=latency.rounds, timed_queries=latency.queries,
                untimed_query_encoding=", ".join(untimed_encoding),
            )  # fmt: skip
        rows[name] = row
    if CONTROL in rows and rows[CONTROL]["source"] == RETRIEVED:
        control = rows[CONTROL]
        for name, row in rows.items():
            if name == CONTROL or row["source"] != RETRIEVED:
                continue
            if name in samples and CONTROL in samples:
                found = latency_ratio(samples[name], samples[CONTROL], noise_floor=noise_floor, seed=seed)
                row.update(query_ratio=found.ratio, query_ratio_low=found.low, query_ratio_high=found.high,
                           query_within_noise=float(found.within_noise))  # fmt: skip
            row["encode_ratio"] = float(row["encode_seconds_per_1000_chunks"]) / float(
                control["encode_seconds_per_1000_chunks"]
            )  # NaN when either was not measured (cached, or nothing to encode)
            row["model_ratio"] = _size_ratio(float(row["model_bytes"]), float(control["model_bytes"]))
            row["index_ratio"] = _size_ratio(float(row["index_bytes"]), float(control["index_bytes"]))
    table = pd.DataFrame.from_dict(rows, orient="index", columns=list(COST_COLUMNS))
    table.index.name = "variant"
    return table


def latency_metrics(row: pd.Series) -> dict[str, float]:
    """A cost-table row's timed figures as ``efficiency.*`` metrics (none for a variant not timed)."""
    return {
        metric: float(row[column]) for column, metric in LATENCY_METRICS.items() if not pd.isna(row[column])
    }


# ------------------------------------------------------------------------------ judges, generators
class WorkCost(Protocol):
    """What a judge or an answer generator counted as it worked (``judging.cost.JudgeCost``,
    ``answers.generation.GenerationCost``): calls made, tokens in and out, seconds, calls a cache answered."""

    calls: int
    prompt_tokens: int
    completion_tokens: int
    seconds: float
    cache_hits: int


def work_row_name(role: str, who: str) -> str:
    """A judge's or generator's row name: ``relevance judge (python:length)``, ``answers (control)``; a
    variant's name never has a space or parenthesis, so the two never meet."""
    return f"{role} ({who})"


def with_work_rows(table: pd.DataFrame, work: Mapping[str, tuple[str, WorkCost]]) -> pd.DataFrame:
    """The cost table with one row per judge and answer generator the comparison ran (``work``: row name ->
    (:data:`JUDGE` or :data:`GENERATOR`, its counters)): its calls, tokens in and out, seconds and cache
    hits, under the variants' rows; the variants' columns stay empty on them (nothing was retrieved)."""
    if not work:
        return table
    rows = {}
    for name, (source, cost) in work.items():
        row: dict[str, object] = dict.fromkeys(COST_COLUMNS, math.nan)
        row.update(
            source=source, embeddings=NO_EMBEDDINGS, calls=float(cost.calls),
            prompt_tokens=float(cost.prompt_tokens), completion_tokens=float(cost.completion_tokens),
            seconds=float(cost.seconds), cache_hits=float(cost.cache_hits),
        )  # fmt: skip
        rows[name] = row
    extra = pd.DataFrame.from_dict(rows, orient="index", columns=list(COST_COLUMNS))
    combined = pd.concat([table, extra]) if len(table) else extra
    combined.index.name = "variant"
    return combined


def variant_rows(table: pd.DataFrame) -> pd.DataFrame:
    """The cost table's variants' rows alone (not a judge's or a generator's)."""
    return table[~table["source"].isin((JUDGE, GENERATOR))]


# ------------------------------------------------------------------------------------------ a sweep
#: The grid's column that says which candidates are on the noise-aware front.
FRONT_COLUMN = "pareto_front"


def on_front(
    grid: pd.DataFrame, samples: Mapping[str, np.ndarray], noise_floor: float = NOISE_FLOOR, seed: int = 0
) -> list[bool]:
    """For each grid row (``candidate``, ``delta``): whether it is on the front of
    :func:`noise_aware_front` among the timed candidates (an untimed one never is)."""
    names = [str(name) for name in grid["candidate"]]
    timed = [i for i, name in enumerate(names) if name in samples]
    quality = [float(grid["delta"].iloc[i]) for i in timed]
    front = noise_aware_front([samples[names[i]] for i in timed], quality, noise_floor=noise_floor, seed=seed)
    chosen = {timed[k] for k in front}
    return [i in chosen for i in range(len(names))]
