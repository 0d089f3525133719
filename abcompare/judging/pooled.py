"""The judge's corrected verdict across several collections: each collection's prediction-powered delta
(:mod:`abcompare.judging.stage`) pooled as strata, with the weights the pooled verdict uses (equal per
collection, or per query: ``significance.pooling``), beside the pooled people-only and judge-only figures.

It stands only where every collection's stands: a collection whose judge agreed with people below
``judge.min_agreement`` (or whose agreement could not be measured) refuses the pooled figure too, named in
the refusal, since the pooled delta rests on that collection's judge labels as much as on the others'. A
treatment with no corrected verdict on some collection (too few labelled queries) gets none pooled.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from abcompare.core.json_values import json_value
from abcompare.stats.pooled import pooling_weights
from abcompare.stats.ppi import PPIResult, pooled_ppi

if TYPE_CHECKING:
    from abcompare.judging.stage import JudgeOutcome

#: How each weighting reads in the pooled line.
_WEIGHTING_WORDS = {"collection": "equal weight per collection", "per_query": "weighted by queries"}


@dataclass(frozen=True)
class PooledJudgedVerdict:
    """One treatment's pooled corrected delta (``ppi``), the pooled people-only delta over every query
    (``human_only``: the pooled verdict's own delta), and whether it is ``refused`` and why."""

    ppi: PPIResult
    human_only: float
    refused: bool
    reason: str | None


@dataclass
class PooledJudge:
    """The judge's pooled verdicts across collections, per treatment, or why there is none."""

    metric: str
    weighting: str
    collections: tuple[str, ...]
    weights: tuple[float, ...]
    verdicts: dict[str, PooledJudgedVerdict] = field(default_factory=dict)
    not_computed: dict[str, str] = field(default_factory=dict)

    def lines(self) -> list[str]:
        """What the console prints under the pooled verdict."""
        weighed = _WEIGHTING_WORDS.get(self.weighting, self.weighting)
        where = f"pooled over {len(self.collections)} collections ({weighed})"
        lines = []
        for name, verdict in self.verdicts.items():
            p = verdict.ppi
            lines.append(
                f"{self.metric} delta {name} {where}: people's labels {verdict.human_only:+.4f} (the pooled "
                f"verdict above), the judge's view {p.judge_only:+.4f}, PPI-corrected {p.estimate:+.4f} "
                f"[{p.low:+.4f}, {p.high:+.4f}] ({round(p.confidence * 100)}%: {p.n_labelled} queries "
                f"sampled for agreement correct the judge on {p.n_unlabelled} others)"
            )
            if verdict.refused:
                lines.append(f"refused: the pooled corrected verdict for {name} does not stand: "
                             f"{verdict.reason}; the pooled verdict above stands")  # fmt: skip
        for name, why in self.not_computed.items():
            lines.append(f"{self.metric} delta {name} {where}: no corrected verdict ({why})")
        return lines

    def metrics(self) -> dict[str, float]:
        """The top run's MLflow metrics (``judge.pooled.<treatment>.*``)."""
        out: dict[str, float] = {}
        for name, v in self.verdicts.items():
            key = f"judge.pooled.{name}"
            out.update({f"{key}.ppi_delta": v.ppi.estimate, f"{key}.ppi_low": v.ppi.low,
                        f"{key}.ppi_high": v.ppi.high, f"{key}.judge_only_delta": v.ppi.judge_only,
                        f"{key}.refused": float(v.refused)})  # fmt: skip
        return {k: val for k, val in out.items() if np.isfinite(val)}

    def as_json(self) -> dict[str, Any]:
        """The ``judge_pooled`` block of ``abcompare run --json`` across collections."""
        return {
            "metric": self.metric,
            "weighting": self.weighting,
            "weights": dict(zip(self.collections, self.weights, strict=True)),
            "verdicts": {name: {**{k: json_value(x) for k, x in vars(v.ppi).items()}, "refused": v.refused,
                                "reason": v.reason, "human_only_all_queries": json_value(v.human_only)}
                         for name, v in self.verdicts.items()},
            "not_computed": dict(self.not_computed),
        }  # fmt: skip


def pooled_judge(outcomes: Mapping[str, JudgeOutcome | None], weighting: str) -> PooledJudge | None:
    """The pooled corrected verdicts from each collection's judge outcome (by collection name, in config
    order); None when no collection ran a judge."""
    if all(o is None for o in outcomes.values()):
        return None
    names = tuple(outcomes)
    missing = [n for n, o in outcomes.items() if o is None]
    known = [o for o in outcomes.values() if o is not None]
    metric = known[0].metric
    treatments = list(dict.fromkeys(t for o in known for t in (*o.verdicts, *o.not_computed)))
    sizes = [0 if o is None else _n_queries(o) for o in outcomes.values()]
    weights = pooling_weights(sizes, weighting)
    pooled = PooledJudge(metric, weighting, names, tuple(float(w) for w in weights))
    for treatment in treatments:
        why = _why_not(outcomes, treatment, missing)
        if why:
            pooled.not_computed[treatment] = why
            continue
        verdicts = [o.verdicts[treatment] for o in outcomes.values() if o is not None]
        refusals = [f"{n}: {v.reason}" for n, v in zip(names, verdicts, strict=True) if v.refused]
        human_only = float(np.dot(weights, [o.human_only[treatment] for o in known]))
        pooled.verdicts[treatment] = PooledJudgedVerdict(
            pooled_ppi([v.ppi for v in verdicts], weights), human_only, bool(refusals),
            "; ".join(refusals) or None,
        )  # fmt: skip
    return pooled


def _n_queries(outcome: JudgeOutcome) -> int:
    """The queries a collection's corrected verdict covers (labelled and not): its weight's size."""
    verdict = next(iter(outcome.verdicts.values()), None)
    return 0 if verdict is None else verdict.ppi.n_labelled + verdict.ppi.n_unlabelled


def _why_not(outcomes: Mapping[str, JudgeOutcome | None], treatment: str, missing: list[str]) -> str | None:
    """Why ``treatment`` gets no pooled corrected verdict (None when every collection has one)."""
    if missing:
        return f"no judge ran on {', '.join(missing)}"
    for name, outcome in outcomes.items():
        if outcome is not None and treatment not in outcome.verdicts:
            return f"none on {name}: {outcome.not_computed.get(treatment, 'not compared there')}"
    return None
