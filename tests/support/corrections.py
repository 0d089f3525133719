"""Another multiplicity correction for a logged comparison, without retrieving again: the per-query tables a
run logged to MLflow re-tested with every setting of that run but the correction; and Holm's procedure
written out from its definition, as the independent check of what the re-test adjusted."""

from __future__ import annotations

from typing import Any

import pandas as pd

from abcompare import paired_comparison


def retested(logged: Any, correction: str) -> pd.DataFrame:
    """``paired_comparison`` on a ``load_comparison`` result's per-query tables, with the settings the run
    recorded (``summary.attrs``: alpha, B, seed, tests, ...) and its metrics, but ``correction``."""
    settings = dict(logged.summary.attrs)
    metrics = list(dict.fromkeys(logged.summary["metric"]))
    return paired_comparison(
        logged.per_query["control"],
        {name: logged.per_query[name] for name in logged.treatments},
        metrics=metrics,
        primary_metric=settings["primary_metric"],
        alpha=settings["alpha"],
        n_resamples=settings["n_resamples"],
        seed=settings["seed"],
        correction=correction,
        primary=settings["primary"],
        tests=settings["tests"],
        zero_method=settings["zero_method"],
        power=settings["power"],
        min_effect=settings["min_effect"],
    )


def holm_by_hand(p: list[float]) -> list[float]:
    """Holm's step-down adjusted p-values, from Holm (1979): sort ascending, multiply the i-th smallest
    (from 0) by m - i, carry the running maximum, cap at 1; returned in the input's order."""
    order = sorted(range(len(p)), key=lambda i: p[i])
    adjusted, running = [0.0] * len(p), 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(p) - rank) * p[i]))
        adjusted[i] = running
    return adjusted
