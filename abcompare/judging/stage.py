"""The judge's stage of ``abcompare run`` (a ``judge:`` section): grade the pool of unjudged hits
decisive-first within ``judge.max_pairs``, grade a seeded sample of the pairs people judged (whole
queries) to measure agreement, and give the corrected (prediction-powered) primary delta beside the
human-only and judge-only figures, refused below ``judge.min_agreement``.

The labels a delta is computed with, per query:

- people's (``human``): the comparison's own per-query delta (unjudged hits as the evaluation says);
- the judge's view (``judge``): people's labels, with the judge's grade on every pair it graded (the holes it
  filled, and on the sampled queries people's own pairs too);
- on the sampled (labelled) queries, the reference (``y``): people's grades where they gave one, the judge's
  on the holes it filled.

On the labelled queries ``y - judge`` is what the judge's disagreement with people moves the delta; PPI
(:func:`abcompare.stats.ppi.ppi_mean`) adds its mean to the judge's view of the other queries. This assumes
the judge errs on the holes as it errs on people's pairs, which is what the agreement line measures.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from abcompare.core.errors import ConfigError
from abcompare.core.json_values import json_value
from abcompare.core.vocabulary import parse_metric
from abcompare.data.pooling import pool_unjudged
from abcompare.evaluation.batch import in_evaluation_order
from abcompare.evaluation.per_query import per_query_metrics
from abcompare.evaluation.unjudged import decisiveness
from abcompare.judging import make_judge
from abcompare.judging.base import Judge, JudgeError
from abcompare.judging.cost import JudgeCost
from abcompare.judging.label_file import read_judge_labels
from abcompare.judging.session import JudgedPairs, judge_pairs
from abcompare.stats.agreement import Agreement, Estimate, agreement, ranking_agreement
from abcompare.stats.judged import judged_verdict

if TYPE_CHECKING:
    from pathlib import Path

    from abcompare.config.judge import JudgeSettings
    from abcompare.config.models import EvaluationSettings, ExperimentConfig
    from abcompare.core.progress import Reporter
    from abcompare.data.dataset import Dataset

#: What each label row says of its pair: ``pool`` (a hole, asked decisive-first) or ``agreement`` (a pair
#: people judged, asked to measure agreement).
PURPOSES = ("pool", "agreement")
LABEL_COLUMNS = ["query_id", "key", "purpose", "human_grade", "grade", "source", "judge", "prompt_version",
                 "problem", "cached"]  # fmt: skip
#: MLflow table names of the stage's tables.
LABELS_TABLE = "judge_labels"
CONFUSION_TABLE = "judge_confusion"


@dataclass
class JudgeOutcome:
    """What the judge did in a run: its ``labels`` (one row per pair asked, with people's grade where they
    gave one), the ``agreement`` (``abcompare.stats.agreement.Agreement``, None when no pair was graded by
    both), the variants' ranking ``tau``, each treatment's corrected ``verdicts`` (or ``not_computed``: why
    not), the judge's ``cost``, and lines ``notes`` on what was left out."""

    judge: str
    prompt_version: str
    scale: str  # "graded": grades compared on 0-3; "binary": relevant or not
    labels: pd.DataFrame
    summary: str
    agreement: Any
    tau: Any
    verdicts: dict[str, Any]
    not_computed: dict[str, str]
    cost: JudgeCost
    min_agreement: float | None
    metric: str
    notes: list[str] = field(default_factory=list)
    #: Per treatment: the mean delta on people's labels alone, over every query (the verdict table's).
    human_only: dict[str, float] = field(default_factory=dict)

    # ------------------------------------------------------------------------------------ rendering
    def agreement_line(self) -> str:
        """One line: kappa, alpha and tau with their intervals, on how many pairs (or why none)."""
        a = self.agreement
        if a is None:
            return f"judge agreement with people: not measured ({self.summary})"
        pct = round(a.confidence * 100)
        scale = "grades 0-3" if self.scale == "graded" else "relevant or not"
        text = (
            f"judge agreement with people on {a.n_pairs} pairs of {a.n_queries} queries ({scale}): "
            f"weighted kappa {_f(a.kappa.value)} [{_f(a.kappa.low)}, {_f(a.kappa.high)}], "
            f"Krippendorff alpha (ordinal) {_f(a.alpha_ordinal.value)} [{_f(a.alpha_ordinal.low)}, "
            f"{_f(a.alpha_ordinal.high)}]"
        )
        if self.tau is not None:
            text += f", Kendall tau of the variants' ranking {_f(self.tau.value)}"
        return text + f" ({pct}% query bootstrap)"

    def verdict_lines(self) -> list[str]:
        """Per treatment: the corrected delta beside the human-only and judge-only figures, or the refusal."""
        lines = []
        for name, verdict in self.verdicts.items():
            p = verdict.ppi
            pct = round(p.confidence * 100)
            figures = (
                f"{self.metric} delta {name}: people's labels {self.human_only.get(name, float('nan')):+.4f} "
                f"(the verdict above), the judge's view {p.judge_only:+.4f}, PPI-corrected "
                f"{p.estimate:+.4f} [{p.low:+.4f}, {p.high:+.4f}] ({pct}%: {p.n_labelled} queries sampled "
                f"for agreement correct the judge on {p.n_unlabelled} others)"
            )
            lines.append(figures)
            if verdict.refused:
                lines.append(f"refused: the corrected verdict for {name} does not stand: {verdict.reason}; "
                             "the human-only verdict above stands")  # fmt: skip
        for name, why in self.not_computed.items():
            lines.append(f"{self.metric} delta {name}: no corrected verdict ({why})")
        return lines

    def cost_line(self) -> str:
        c = self.cost
        return (
            f"judge cost: {c.calls} calls, {c.prompt_tokens:,} prompt + {c.completion_tokens:,} completion "
            f"tokens, {c.seconds:.1f} s, {c.cache_hits} from the cache"
        )

    def lines(self) -> list[str]:
        """What the console prints under the verdict."""
        return [f"judge {self.judge} (prompt {self.prompt_version}): {self.summary}", self.agreement_line(),
                *self.verdict_lines(), self.cost_line(), *self.notes]  # fmt: skip

    def metrics(self) -> dict[str, float]:
        """The MLflow metrics of the parent run (``judge.*``)."""
        out: dict[str, float] = {f"judge.{k.removeprefix('judge_')}": float(v) for k, v in
                                 self.cost.as_dict().items()}  # fmt: skip
        out["judge.pairs_judged"] = float(self.labels["grade"].notna().sum())
        if self.agreement is not None:
            for name in ("kappa", "alpha_ordinal", "alpha_interval"):
                est = getattr(self.agreement, name)
                out.update({f"judge.{name}": est.value, f"judge.{name}_low": est.low,
                            f"judge.{name}_high": est.high})  # fmt: skip
            out["judge.agreement_pairs"] = float(self.agreement.n_pairs)
        if self.tau is not None:
            out["judge.tau"] = self.tau.value
        for name, verdict in self.verdicts.items():
            p = verdict.ppi
            out.update({f"judge.{name}.ppi_delta": p.estimate, f"judge.{name}.ppi_low": p.low,
                        f"judge.{name}.ppi_high": p.high, f"judge.{name}.judge_only_delta": p.judge_only,
                        f"judge.{name}.refused": float(verdict.refused)})  # fmt: skip
        return {k: v for k, v in out.items() if np.isfinite(v)}

    def tables(self) -> dict[str, pd.DataFrame]:
        """The MLflow tables: every label with its source, and the confusion table."""
        tables = {LABELS_TABLE: self.labels}
        if self.agreement is not None:
            tables[CONFUSION_TABLE] = self.agreement.confusion.reset_index().rename(columns=str)
        return tables

    def as_json(self) -> dict[str, Any]:
        """The ``judge`` block of ``abcompare run --json``."""
        a = self.agreement

        def est(e: Estimate | None) -> dict[str, float | None] | None:
            return None if e is None else {k: json_value(getattr(e, k)) for k in ("value", "low", "high")}

        return {
            "judge": self.judge,
            "prompt_version": self.prompt_version,
            "summary": self.summary,
            "scale": self.scale,
            "agreement": None if a is None else {
                "n_pairs": a.n_pairs, "n_queries": a.n_queries, "weights": a.weights,
                "kappa": est(a.kappa), "alpha_ordinal": est(a.alpha_ordinal),
                "alpha_interval": est(a.alpha_interval), "tau": est(self.tau),
                "confusion": a.confusion.to_numpy().tolist(), "confidence": a.confidence,
            },
            "min_agreement": self.min_agreement,
            "verdicts": {name: {**{k: json_value(v) for k, v in vars(v.ppi).items()}, "refused": v.refused,
                                "reason": v.reason, "human_only_all_queries": self.human_only.get(name)}
                         for name, v in self.verdicts.items()},
            "not_computed": dict(self.not_computed),
            "cost": self.cost.as_dict(),
            "labels": {"pool": int((self.labels["purpose"] == "pool").sum()),
                       "agreement": int((self.labels["purpose"] == "agreement").sum()),
                       "judged": int(self.labels["grade"].notna().sum())},
        }  # fmt: skip


def _f(value: float) -> str:
    return "n/a" if not np.isfinite(value) else f"{value:.2f}".replace("-0.00", "0.00")


# ---------------------------------------------------------------------------------------------- the stage
def judge_comparison(
    settings: JudgeSettings,
    *,
    runs: Mapping[str, pd.DataFrame],
    annotations: pd.DataFrame,
    queries: pd.DataFrame,
    query_ids: list[str],
    per_query: Mapping[str, pd.DataFrame],
    evaluation: EvaluationSettings,
    documents: pd.DataFrame | None = None,
    cache_dir: str | Path | None = None,
    seed: int = 0,
    n_resamples: int = 1000,
    judges: Mapping[str, Callable] | None = None,
    reporter: Reporter | None = None,
) -> JudgeOutcome:
    """The judge's stage: ``runs`` are each variant's hits at the annotation level (``control`` first),
    ``annotations`` people's judgments at that level, ``per_query`` the comparison's per-query tables."""

    metric = evaluation.primary_metric
    depth = settings.depth or parse_metric(metric)[1]
    runs = {n: in_evaluation_order(r.drop(columns=["grade"], errors="ignore"), evaluation.convention)
            for n, r in runs.items()}  # fmt: skip
    people = annotations[["query_id", "key", "grade"]].astype({"query_id": str, "key": str})
    people = people.groupby(["query_id", "key"], sort=False, as_index=False)["grade"].max()
    scale = "graded" if people["grade"].between(0, 3).all() else "binary"
    holes, sample = _holes_and_sample(runs, people, queries, depth, documents, evaluation,
                                      settings.agreement_pairs, seed)  # fmt: skip
    if reporter is not None:
        reporter.stage(f"judging {min(len(holes), settings.max_pairs)} unjudged hits and {len(sample)} pairs "
                       "people judged")  # fmt: skip
    judge, labels, summary = _ask_judge(settings, query_ids, cache_dir, judges, holes, sample, depth)

    # agreement on the pairs both graded
    both = labels[(labels["purpose"] == "agreement") & labels["grade"].notna()]
    found, tau = _agreement_on(both, scale, evaluation.relevance_threshold, n_resamples, seed), None

    # per-query deltas under the judge's view and the reference
    top = int(people["grade"].max()) if len(people) else 1
    graded = labels[labels["grade"].notna()].assign(grade=lambda t: t["grade"].clip(upper=top).astype(int))
    view = _overlay(people, graded[["query_id", "key", "grade"]])
    reference = _overlay(people, graded.loc[graded["purpose"] == "pool", ["query_id", "key", "grade"]])
    judge_tables = _per_query(runs, view, query_ids, evaluation)
    labelled = [q for q in query_ids if q in set(both["query_id"])]
    reference_tables = _per_query(runs, reference, labelled, evaluation)
    if len(labelled) >= 2 and len(runs) >= 2:
        tau = ranking_agreement(
            pd.DataFrame({n: per_query[n].loc[labelled, metric] for n in runs}),
            pd.DataFrame({n: judge_tables[n].loc[labelled, metric] for n in runs}),
            n_resamples=n_resamples, seed=seed,
        )  # fmt: skip
    verdicts, not_computed = _verdicts(runs, metric, judge_tables, reference_tables, labelled, found,
                                       settings.min_agreement)  # fmt: skip
    notes = []
    if scale == "binary":
        notes.append(f"people's grades go beyond 0-3: agreement is on relevance (people's grade >= "
                     f"{evaluation.relevance_threshold:g}, the judge's >= 2)")  # fmt: skip
    human_only = {n: float((per_query[n][metric] - per_query["control"][metric]).mean())
                  for n in runs if n != "control"}  # fmt: skip
    return JudgeOutcome(judge.identity, judge.prompt_version, scale, labels, summary, found, tau, verdicts,
                        not_computed, judge.cost, settings.min_agreement, metric, notes,
                        human_only)  # fmt: skip


def _ask_judge(
    settings: JudgeSettings,
    query_ids: list[str],
    cache_dir: str | Path | None,
    judges: Mapping[str, Callable] | None,
    holes: pd.DataFrame,
    sample: pd.DataFrame,
    depth: int,
) -> tuple[Judge | _FileLabels, pd.DataFrame, str]:
    """The judge's grades of the holes (within ``max_pairs``) and of the agreement sample: the judge, the
    label rows (``LABEL_COLUMNS``) and a one-line summary."""
    judge: Judge | _FileLabels
    if settings.provider == "file":  # labels made elsewhere, looked up instead of asked for
        judge = _FileLabels(settings, query_ids)
        ask = judge.pairs
    else:
        judge = make_judge(settings, cache_dir, dict(judges or {}))
        ask = lambda t, n: judge_pairs(judge, t, n)  # noqa: E731
    pairs = lambda t: t.rename(columns={"query": "query_text", "text": "hit_text"})  # noqa: E731
    pool_asked = ask(pairs(holes), settings.max_pairs)
    sample_asked = ask(pairs(sample), len(sample))
    labels = pd.concat(
        [
            pool_asked.labels.assign(purpose="pool", human_grade=pd.NA),
            sample_asked.labels.assign(purpose="agreement", human_grade=sample["human_grade"].to_numpy()),
        ],
        ignore_index=True,
    )[LABEL_COLUMNS]
    labels["human_grade"] = labels["human_grade"].astype("Int64")
    summary = (f"the pool (top {depth}): {pool_asked.summary()}; the agreement sample: "
               f"{sample_asked.summary().replace('judged ', 'graded ', 1)} people judged")  # fmt: skip
    return judge, labels, summary


def _holes_and_sample(
    runs: Mapping[str, pd.DataFrame],
    people: pd.DataFrame,
    queries: pd.DataFrame,
    depth: int,
    documents: pd.DataFrame | None,
    evaluation: EvaluationSettings,
    budget: int,
    seed: int,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The holes, decisive-first, and the agreement sample: whole queries of people's judged pairs among
    every pair in some variant's top ``depth``."""
    weights = decisiveness(runs, people, metric=evaluation.primary_metric, **evaluation.unjudged_options())
    holes = pool_unjudged(runs, people, queries, depth=depth, documents=documents, decisiveness=weights)
    everything = pool_unjudged(runs, people.iloc[:0], queries, depth=depth, documents=documents,
                               order="stable")  # fmt: skip
    judged = everything.merge(people.rename(columns={"grade": "human_grade"}), on=["query_id", "key"])
    return holes, _sample_queries(judged, budget, seed)


def _agreement_on(
    both: pd.DataFrame, scale: str, threshold: float, n_resamples: int, seed: int
) -> Agreement | None:
    """People's and the judge's agreement on the pairs both graded (on relevance when people's grades
    are not 0-3), or None when there are none."""
    if not len(both):
        return None
    human, said = both["human_grade"].to_numpy(int), both["grade"].to_numpy(int)
    if scale == "binary":
        human = (human >= threshold).astype(int)
        said = (said >= 2).astype(int)
    return agreement(human, said, both["query_id"].tolist(), n_resamples=n_resamples, seed=seed)


class _FileLabels:
    """The ``file`` provider in the stage: each pair's grade looked up in the file's labels (a pair the
    file does not grade is counted as not judged, saying so)."""

    def __init__(self, settings: JudgeSettings, query_ids: list[str]) -> None:
        self.given = read_judge_labels(settings.path, settings.source, query_ids, settings.prompt_version)
        self.given = self.given.astype({"query_id": str, "key": str}).drop_duplicates(["query_id", "key"])
        self.identity, self.prompt_version = f"file:{settings.source}", settings.prompt_version
        self.cost = JudgeCost()

    def pairs(self, pairs: pd.DataFrame, budget: int) -> JudgedPairs:
        asked = pairs.iloc[:budget][["query_id", "key"]].astype(str)
        labels = asked.merge(self.given, on=["query_id", "key"], how="left")
        labels = labels.assign(source=labels["source"].fillna(self.given["source"].iloc[0] if len(
            self.given) else "file"), judge=self.identity, prompt_version=self.prompt_version,
            problem=np.where(labels["grade"].isna(), "no label in the file", None), cached=False)  # fmt: skip
        labels["grade"] = labels["grade"].astype("Int64")
        return JudgedPairs(labels, len(pairs) - len(asked), budget, self.cost)


def _sample_queries(judged: pd.DataFrame, budget: int, seed: int) -> pd.DataFrame:
    """Whole queries of people's judged pairs, in a seeded random order, while they fit in ``budget``."""
    if budget == 0 or judged.empty:
        return judged.iloc[:0]
    order = pd.unique(judged["query_id"])
    rng = np.random.default_rng(seed)
    taken, size = [], 0
    counts = judged["query_id"].value_counts()
    for q in rng.permutation(order):
        if size + counts[q] > budget:
            continue
        taken.append(q)
        size += counts[q]
    keep = judged[judged["query_id"].isin(set(taken))]
    return keep.reset_index(drop=True)


def _overlay(people: pd.DataFrame, judge: pd.DataFrame) -> pd.DataFrame:
    """People's labels with the judge's grade on every pair it graded (its grade wins)."""
    rest = people.merge(judge[["query_id", "key"]], on=["query_id", "key"], how="left", indicator=True)
    rest = rest[rest["_merge"] == "left_only"].drop(columns="_merge")
    return pd.concat([rest, judge], ignore_index=True)


def _per_query(runs: Mapping[str, pd.DataFrame], labels: pd.DataFrame, query_ids: list[str],
               evaluation: EvaluationSettings) -> dict[str, pd.DataFrame]:  # fmt: skip
    return {n: per_query_metrics(run, labels, query_ids, **evaluation.scoring_options())
            for n, run in runs.items()}  # fmt: skip


def _verdicts(runs, metric, judge_tables, reference_tables, labelled, found, min_agreement):  # noqa: ANN001
    kappa = found.kappa.value if found is not None else float("nan")
    verdicts, not_computed = {}, {}

    def scores(tables: Mapping[str, pd.DataFrame], name: str) -> pd.Series:
        return tables[name][metric]

    for name in runs:
        if name == "control":
            continue
        judge_delta = scores(judge_tables, name) - scores(judge_tables, "control")
        if len(labelled) < 2 or len(judge_delta) - len(labelled) < 2:
            not_computed[name] = (f"PPI needs at least two labelled and two judge-only queries; there are "
                                  f"{len(labelled)} and {len(judge_delta) - len(labelled)}")  # fmt: skip
            continue
        human_delta = scores(reference_tables, name) - scores(reference_tables, "control")
        verdicts[name] = judged_verdict(human_delta, judge_delta, kappa, min_agreement)
    return verdicts, not_computed


def judge_stage(
    config: ExperimentConfig,
    dataset: Dataset,
    runs: Mapping[str, pd.DataFrame],
    annotations: pd.DataFrame,
    per_query: Mapping[str, pd.DataFrame],
    *,
    reporter: Reporter | None = None,
    judges: Mapping[str, Callable] | None = None,
) -> JudgeOutcome | None:
    """The runner's one call: :func:`judge_comparison` with the experiment's settings, or None without a
    ``judge:`` section."""
    if config.judge is None:
        return None
    if config.dataset.level == "span":
        raise JudgeError("the judge grades listed (query, hit) pairs; span-level evidence has none",
                         field="judge", hint="judge at chunk or document level")  # fmt: skip
    return judge_comparison(
        config.judge, runs=runs, annotations=annotations, queries=dataset.queries,
        query_ids=[str(q) for q in dataset.query_ids], per_query=per_query, evaluation=config.evaluation,
        documents=dataset.corpus if config.dataset.level == "document" else None,
        cache_dir=config.resolved_cache_dir(), seed=config.significance.seed, judges=judges,
        reporter=reporter,
    )  # fmt: skip


def judge_pool(
    config: ExperimentConfig, pool: pd.DataFrame, *, judges: Mapping[str, Callable] | None = None
) -> JudgedPairs:
    """The configured judge's grades of ``pool`` (``abcompare pool``'s table, in its decisive-first order),
    at most ``judge.max_pairs`` of them, in that order: a bounded budget goes where it moves the verdict.
    Returns :class:`abcompare.judging.JudgedPairs`."""

    if config.judge is None:
        raise ConfigError("no judge: add a 'judge:' section to judge the pool", field="judge")
    if config.judge.provider == "file":
        raise ConfigError("a file judge's labels are read, not asked for", field="judge.provider")
    judge = make_judge(config.judge, config.resolved_cache_dir(), dict(judges or {}))
    pairs = pool.rename(columns={"query": "query_text", "text": "hit_text"})
    return judge_pairs(judge, pairs, config.judge.max_pairs)


def with_judge_grades(pool: pd.DataFrame, judged: JudgedPairs) -> pd.DataFrame:
    """``pool`` with the judge's provenance (:data:`abcompare.data.pooling.JUDGE_COLUMNS`): ``judge_grade``
    (empty where it did not grade, or its answer was unusable) and ``judged_by`` (``judge (prompt
    version)``, empty where it was not asked), in the pool's own order."""
    labels = judged.labels
    asked = pd.DataFrame({
        "query_id": labels["query_id"].astype(str),
        "key": labels["key"].astype(str),
        "judge_grade": labels["grade"].astype("Int64"),
        "judged_by": labels["judge"].astype(str) + " (" + labels["prompt_version"].astype(str) + ")",
    })  # fmt: skip
    return pool.merge(asked, on=["query_id", "key"], how="left", validate="one_to_one")
