"""The pooled test across collections, simulated: its level under A/A, and its power against Holm over the
per-collection tests when every collection shares the effect.

Four collections of different sizes (like the shipped config's: 40, 112, 225 and 300 queries), each with
its own spread of per-query differences and its own share of queries the change leaves alone (d = 0, as
retrieval metrics often do); and, for contrast, four alike (150 queries each). A replicate draws every
collection's differences afresh and tests them with the library's own functions: the pooled stratified
sign-flip test (``stats.pooled``) with equal weight per collection and with equal weight per query, and
each collection's sign-flip test, Holm-adjusted over the four (the per-collection family; "Holm rejects"
when at least one collection is significant). A/A: every difference is symmetric about 0. Shared effect:
every collection's mean difference is ``effect``. Last, how often the stratified bootstrap's 95% interval
holds the true pooled delta under a shared effect.

    python scripts/pooled_simulation.py                     # the figures in docs/statistics.md
    python scripts/pooled_simulation.py --replicates 300 --coverage-replicates 100   # a quicker look

Replicate r draws from ``PCG64([seed, scenario, r])``: a run with fewer replicates is the first ones of a
longer run, and every figure follows from the seed.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from abcompare.stats.correction import holm
from abcompare.stats.permutation import sign_flip_test
from abcompare.stats.pooled import (
    WEIGHTINGS,
    pooling_weights,
    stratified_bootstrap,
    stratified_sign_flip_test,
)


@dataclass(frozen=True)
class Collection:
    """A simulated collection: its queries, the sd of a changed query's difference, the share unchanged."""

    size: int
    sd: float
    unchanged: float


#: Two designs: collections of different sizes and spreads (like the shipped config's), and four alike.
DESIGNS: dict[str, tuple[Collection, ...]] = {
    "different": (
        Collection(40, 0.22, 0.35),
        Collection(112, 0.20, 0.45),
        Collection(225, 0.16, 0.55),
        Collection(300, 0.14, 0.40),
    ),
    "alike": tuple(Collection(150, 0.18, 0.45) for _ in range(4)),
}
#: The scenarios: the shared mean difference of every collection (0 = A/A).
EFFECTS = (0.0, 0.01, 0.02)
ALPHA = 0.05
REPLICATES = 2000
#: Replicates of the interval's coverage (each runs a stratified bootstrap of B resamples).
COVERAGE_REPLICATES = 500
#: The design and shared effect whose interval coverage is measured.
COVERAGE_DESIGN, COVERAGE_EFFECT = "different", 0.01
N_RESAMPLES = 999
SEED = 2026
#: The rejection rates reported, in column order.
COLUMNS = ("pooled, equal weight per collection", "pooled, equal weight per query", "Holm over collections")


def differences(rng: np.random.Generator, collection: Collection, effect: float) -> np.ndarray:
    """One collection's per-query differences: 0 for unchanged queries, else effect / (1 - unchanged) plus
    symmetric noise, so that the collection's mean difference is ``effect``."""
    changed = rng.random(collection.size) >= collection.unchanged
    noise = rng.normal(0.0, collection.sd, collection.size)
    return np.where(changed, effect / (1.0 - collection.unchanged) + noise, 0.0)


def replicate(
    rng: np.random.Generator, effect: float, collections: Sequence[Collection], n_resamples: int
) -> tuple[bool, bool, bool]:
    """Whether the pooled tests (per collection, per query) and Holm over the collections reject."""
    drawn = [differences(rng, c, effect) for c in collections]
    sizes = [c.size for c in collections]
    pooled = [
        stratified_sign_flip_test(drawn, pooling_weights(sizes, weighting), n_resamples, rng).pvalue
        for weighting in WEIGHTINGS
    ]
    each = np.array([sign_flip_test(d, n_resamples, rng).pvalue for d in drawn])
    return pooled[0] <= ALPHA, pooled[1] <= ALPHA, bool((holm(each) <= ALPHA).any())


def rejection_rates(
    effect: float,
    replicates: int,
    *,
    scenario: int,
    collections: Sequence[Collection],
    seed: int = SEED,
    n_resamples: int = N_RESAMPLES,
) -> np.ndarray:
    """The share of ``replicates`` in which each of :data:`COLUMNS` rejects at :data:`ALPHA`."""
    hits = np.zeros(len(COLUMNS))
    for r in range(replicates):
        rng = np.random.Generator(np.random.PCG64([seed, scenario, r]))
        hits += replicate(rng, effect, collections, n_resamples)
    return hits / replicates


def _sizes(collections: Sequence[Collection]) -> str:
    return ", ".join(str(c.size) for c in collections)


def header_lines(replicates: int) -> list[str]:
    """The table's header and its separator."""
    return [
        f"| {replicates:,} replicates each, alpha = {ALPHA} | " + " | ".join(COLUMNS) + " |",
        "| --- |" + " --- |" * len(COLUMNS),
    ]


def table_lines(replicates: int = REPLICATES, seed: int = SEED) -> list[str]:
    """The markdown table docs/statistics.md shows: one row per (design, scenario), each test's rejection
    rate at alpha (the level under A/A, the power under a shared effect)."""
    lines = header_lines(replicates)
    scenario = 0
    for collections in DESIGNS.values():
        for effect in EFFECTS:
            rates = rejection_rates(effect, replicates, scenario=scenario, collections=collections, seed=seed)
            what = "A/A: level" if effect == 0 else f"shared effect +{effect}: power"
            label = f"{_sizes(collections)} queries, {what}"
            lines.append(f"| {label} | " + " | ".join(f"{rate:.1%}" for rate in rates) + " |")
            scenario += 1
    return lines


def coverage(
    weighting: str, replicates: int, *, seed: int = SEED, n_resamples: int = N_RESAMPLES
) -> tuple[float, float]:
    """How often the stratified bootstrap's 95% BCa and percentile intervals hold the shared effect."""
    collections = DESIGNS[COVERAGE_DESIGN]
    weights = pooling_weights([c.size for c in collections], weighting)
    held = np.zeros(2)
    for r in range(replicates):
        rng = np.random.Generator(np.random.PCG64([seed, 100 + WEIGHTINGS.index(weighting), r]))
        drawn = [differences(rng, c, COVERAGE_EFFECT) for c in collections]
        boot = stratified_bootstrap(drawn, weights, n_resamples, rng, ALPHA)
        held += (
            boot.bca_low <= COVERAGE_EFFECT <= boot.bca_high,
            boot.pct_low <= COVERAGE_EFFECT <= boot.pct_high,
        )
    return float(held[0] / replicates), float(held[1] / replicates)


def coverage_header_lines(replicates: int) -> list[str]:
    """The coverage table's header and its separator."""
    sizes = _sizes(DESIGNS[COVERAGE_DESIGN])
    return [
        f"| {replicates:,} replicates, {sizes} queries, shared effect +{COVERAGE_EFFECT}: the 95% interval "
        "holds it | BCa (the boot_ci_* columns) | percentile |",
        "| --- | --- | --- |",
    ]


def coverage_lines(replicates: int = COVERAGE_REPLICATES, seed: int = SEED) -> list[str]:
    """The coverage table: per weighting, the share of intervals that hold the true pooled delta."""
    lines = coverage_header_lines(replicates)
    for weighting, label in zip(WEIGHTINGS, COLUMNS[:2], strict=True):
        bca, pct = coverage(weighting, replicates, seed=seed)
        lines.append(f"| {label} | {bca:.1%} | {pct:.1%} |")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicates", type=int, default=REPLICATES)
    parser.add_argument("--coverage-replicates", type=int, default=COVERAGE_REPLICATES)
    parser.add_argument("--seed", type=int, default=SEED)
    args = parser.parse_args(argv)
    lines = (
        table_lines(args.replicates, args.seed) + [""] + coverage_lines(args.coverage_replicates, args.seed)
    )
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
