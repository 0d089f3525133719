"""The experiment config's models: one pydantic section per stage's settings (dataset, evaluation,
significance, tracking, execution), composed into :class:`ExperimentConfig` with its treatments, and the
JSON schema a file is written against. Validated once, then immutable."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    Field,
    PrivateAttr,
    ValidationInfo,
    field_validator,
    model_validator,
)

from abcompare.config.answers import AnswersSettings
from abcompare.config.base import Model, check_distinct, check_name, located
from abcompare.config.judge import JudgeSettings
from abcompare.config.runtime import (  # re-exported: the sections are read from here
    EfficiencySettings,
    ExecutionSettings,
    TrackingSettings,
)
from abcompare.config.sweep import SweepPlan, SweepSettings
from abcompare.core.errors import ConfigError, StatisticsError
from abcompare.core.limits import (
    MAX_COLLECTIONS,
    MAX_CUTOFF,
    MAX_GRADE,
    MAX_QUERIES,
    MAX_RESAMPLES,
    MAX_SEED,
    METRIC_RANGE,
)
from abcompare.core.naming import first_collision, label_problem
from abcompare.core.vocabulary import (
    CORRECTION_NAMES,
    MEASURES,
    PERMUTATION,
    TESTS,
    ZERO_METHODS,
    default_primary_metric,
    metric_name,
    not_computed,
    parse_metric,
)
from abcompare.examples import EXAMPLES, example_key
from abcompare.retrieval.settings import VariantSettings, without_null_entries


class DatasetSettings(Model):
    """Where the queries, annotations and corpus come from, and at which level hits are judged."""

    name: str | None = Field(
        None, description="A builtin example dataset (e.g. 'hr-docs'); used when no path is given."
    )
    path: Path | None = Field(
        None, description="A BEIR folder (corpus.jsonl, queries.jsonl, qrels/<split>.tsv)."
    )
    split: str = Field(
        "test", description="The qrels split to evaluate (a file name: qrels/<split>.tsv).", max_length=100
    )
    level: Literal["chunk", "document", "span"] = Field(
        "chunk",
        description="chunk: annotation ids are hit keys; document: hits collapse to their document id; "
        "span: a chunk is relevant when it overlaps an evidence span.",
    )
    queries: Path | None = Field(None, description="A query file overriding the dataset's queries.")
    annotations: Path | list[Path] | None = Field(
        None,
        description="An annotation file overriding the dataset's qrels, or a list of files merged into "
        "one set (e.g. the qrels plus a filled `abcompare pool` file); conflicting grades are an error.",
    )
    spans: Path | None = Field(None, description="Evidence spans (JSONL) for level: span.")
    corpus: Path | None = Field(None, description="A corpus file overriding the dataset's corpus.")
    strict: bool = Field(False, description="Make queries without annotations an error instead of excluded.")
    max_queries: int | None = Field(
        None, ge=2, le=MAX_QUERIES, description="Evaluate only the first N annotated queries (quick runs)."
    )

    @property
    def collection_name(self) -> str | None:
        """The collection's name as the data gives it: ``name``, else the BEIR folder's name, else the query
        file's stem (what the console, MLflow and the default experiment call it); None when none is set."""
        if self.name is not None:
            return self.name
        if self.path is not None:
            return Path(self.path).name
        return Path(self.queries).stem if self.queries is not None else None

    @field_validator("annotations")
    @classmethod
    def _some_annotation_file(cls, value: Path | list[Path] | None) -> Path | list[Path] | None:
        if isinstance(value, list) and not value:
            raise ValueError("give at least one annotation file (or leave the key out)")
        return value

    @field_validator("split")
    @classmethod
    def _split_is_a_file_name(cls, value: str) -> str:
        check_name("split", value)
        return value

    @model_validator(mode="after")
    def _needs_a_source(self) -> DatasetSettings:
        if self.name is None and self.path is None and (self.queries is None or self.annotations is None):
            raise ValueError(
                "give a builtin dataset 'name', a BEIR folder 'path', or 'queries' + 'annotations'"
            )
        from_example = self.name is not None and self.path is None
        if from_example and (self.queries is None or self.annotations is None) and not _is_example(self.name):
            known = ", ".join(sorted(EXAMPLES))
            raise located(
                f"unknown example {self.name!r} (known examples: {known}; or give a BEIR folder 'path')",
                "name",
            )
        return self


def _is_example(name: str) -> bool:
    return example_key(name) in EXAMPLES


class CollectionSettings(DatasetSettings):
    """One collection of a comparison across several (``datasets:``): what ``dataset:`` takes, with a name
    that is required (it names the collection in the console, MLflow and files; without a ``path`` it is
    the builtin example loaded) and, for a variant given as a run file, this collection's file."""

    name: str = Field(
        ...,
        description="The collection's name (an MLflow key and file name); without 'path' (or 'queries' + "
        "'annotations') it is the builtin example loaded, e.g. 'hr-docs'.",
    )
    runs: dict[str, Path] = Field(
        default_factory=dict,
        description="For a variant given as a run file (run.path): this collection's run file, by variant "
        "name ('control' or a treatment); a variant not named here reads its own run.path.",
    )

    @field_validator("runs", mode="before")
    @classmethod
    def _drop_null_runs(cls, value: Any) -> Any:
        return without_null_entries(value)

    @field_validator("name")
    @classmethod
    def _collection_name(cls, value: str) -> str:
        check_name("collection", value)
        return value


class EvaluationSettings(Model):
    """Which metrics at which cutoffs, under which convention."""

    cutoffs: list[int] = Field(
        [1, 5, 10], min_length=1, max_length=100, description=f"Cutoffs k for metric@k (1 to {MAX_CUTOFF:,})."
    )
    metrics: list[Literal["precision", "recall", "f1", "mrr", "ndcg"]] = Field(
        list(MEASURES), min_length=1, description="Measures to compute and compare."
    )
    convention: Literal["ai4j", "trec"] = Field(
        "ai4j", description="ai4j: the reference RagEvaluator (ai4j) exactly; trec: trec_eval's definitions."
    )
    relevance_threshold: int = Field(
        1,
        ge=1,
        le=MAX_GRADE,
        description="Minimum grade that counts as relevant for precision, recall, F1, MRR (and the ai4j "
        "nDCG); the trec nDCG uses every positive grade as its gain. Every judged query is evaluated.",
    )
    unjudged: Literal["nonrelevant", "condensed"] = Field(
        "nonrelevant",
        description="Hits without any judgment: 'nonrelevant' counts them as not relevant (trec_eval); "
        "'condensed' removes them before scoring (Sakai 2007), fairer when judgments are sparse.",
    )
    min_alignment: float = Field(
        0.5, ge=0, le=1, description="Fail when fewer annotated ids than this ever match a hit key."
    )
    allow_misaligned: bool = Field(False, description="Report, but do not fail on, poor alignment.")
    primary_metric: str | None = Field(
        None,
        description="The metric the verdict is about (e.g. ndcg@10); every other metric@k is secondary. "
        "Default: ndcg@10 when nDCG and cutoff 10 are computed, else nDCG at the cutoff nearest 10, "
        "else the first measure at the cutoff nearest 10.",
    )

    @field_validator("cutoffs")
    @classmethod
    def _positive_unique(cls, value: list[int]) -> list[int]:
        for i, k in enumerate(value):
            if not 1 <= k <= MAX_CUTOFF:
                raise located(f"cutoff {k} is out of range: cutoffs are between 1 and {MAX_CUTOFF:,}", str(i))
        return sorted(set(value))

    @field_validator("primary_metric")
    @classmethod
    def _computed_metric(cls, value: str | None, info: ValidationInfo) -> str | None:
        """The declared primary metric must be one of the computed measure@k (written canonically)."""
        if value is None or "metrics" not in info.data or "cutoffs" not in info.data:
            return value
        try:
            measure, k = parse_metric(value)
        except ConfigError as exc:
            raise ValueError(exc.message) from None
        problem = not_computed(value, info.data["metrics"], info.data["cutoffs"])
        if problem is not None:
            raise ValueError(f"primary metric {problem}")
        return metric_name(measure, k)

    @model_validator(mode="after")
    def _default_primary_metric(self) -> EvaluationSettings:
        if self.primary_metric is None:  # frozen model: set once, here, while it is being validated
            names = [metric_name(m, k) for m in self.metrics for k in self.cutoffs]
            object.__setattr__(self, "primary_metric", default_primary_metric(names))
        return self

    def scoring_options(self) -> dict[str, Any]:
        """The evaluation stage's keyword arguments (``per_query_metrics``), from this section."""
        return {
            "measures": list(self.metrics),
            "cutoffs": list(self.cutoffs),
            "convention": self.convention,
            "relevance_threshold": self.relevance_threshold,
            "unjudged": self.unjudged,
        }

    def unjudged_options(self) -> dict[str, Any]:
        """The unjudged hits' range's keyword arguments (``evaluation.unjudged.unjudged_ranges``)."""
        return {
            "convention": self.convention,
            "relevance_threshold": self.relevance_threshold,
            "unjudged": self.unjudged,
        }

    def alignment_options(self) -> dict[str, Any]:
        """The alignment check's keyword arguments (``judged_at_level``), from this section."""
        return {
            "relevance_threshold": self.relevance_threshold,
            "min_alignment": self.min_alignment,
            "allow_misaligned": self.allow_misaligned,
        }


class SignificanceSettings(Model):
    """Paired tests of each treatment against the control."""

    tests: list[Literal[TESTS]] = Field(list(TESTS), min_length=1)
    primary: Literal[TESTS] = Field(
        PERMUTATION, description="The test whose adjusted p-value decides the verdict."
    )
    alpha: float = Field(0.05, gt=0, lt=1)
    n_resamples: int = Field(
        10_000, ge=100, le=MAX_RESAMPLES, description="Resamples for permutation and bootstrap."
    )
    seed: int = Field(
        0, ge=0, le=MAX_SEED, description="Seed for every resampling test; same seed, same p-values."
    )
    correction: Literal[CORRECTION_NAMES] = Field(
        "holm",
        description="Multiple-comparison correction, applied within each family: the primary metric across "
        "the treatments, and every secondary metric@k across the treatments. maxt: Westfall-Young max-T on "
        "the permutation test's joint sign flips (needs primary: permutation).",
    )
    min_effect: float | None = Field(
        None,
        gt=0,
        le=METRIC_RANGE,
        description="The smallest effect you care about, in metric units: a non-significant difference whose "
        "interval includes both 0 and this effect is 'inconclusive'; a significant one smaller than it is "
        "said to be below the minimum effect (default reading without it: 1% of the control's mean), and "
        "run --fail-on not-better fails a gain smaller than it.",
    )
    non_inferiority_margin: float | None = Field(
        None,
        ge=0,
        lt=METRIC_RANGE,
        allow_inf_nan=False,
        description="Adds a one-sided test that each treatment is not worse than the control by more than "
        "this (primary metric units, e.g. 0.01) on the primary metric: 'non-inferior' or 'not shown "
        "non-inferior', adjusted over the treatments with the correction (primary test t or permutation).",
    )
    zero_method: Literal[ZERO_METHODS] = Field("pratt", description="Wilcoxon zero-difference policy.")
    power: float = Field(0.8, gt=0, lt=1, description="Power for the minimum detectable effect.")
    pooling: Literal["collection", "per_query"] = Field(
        "collection",
        description="Across several collections (datasets:), how the pooled delta weighs them: "
        "'collection' gives each collection equal weight (the BEIR convention), 'per_query' each query.",
    )

    @model_validator(mode="after")
    def _tests_fit_together(self) -> SignificanceSettings:
        """The rules between the settings (the primary test is run; max-T needs the permutation test) are the
        statistics stage's own, checked by its one checker and reported at the key they are about."""
        from abcompare.stats.comparison import check_test_settings

        try:
            check_test_settings(**self.testing_options())
        except StatisticsError as error:
            raise located(error.message, error.field or "tests") from None
        return self

    def testing_options(self) -> dict[str, Any]:
        """The statistics stage's keyword arguments (``paired_comparison``), from this section."""
        return {
            "alpha": self.alpha,
            "n_resamples": self.n_resamples,
            "seed": self.seed,
            "correction": self.correction,
            "primary": self.primary,
            "tests": list(self.tests),
            "zero_method": self.zero_method,
            "power": self.power,
            "min_effect": self.min_effect,
            "non_inferiority_margin": self.non_inferiority_margin,
        }


class ExperimentConfig(Model):
    """One comparison: a control, one or more treatments, and how to judge them."""

    name: str = Field("comparison", description="A short name for this comparison.")
    description: str = ""
    dataset: DatasetSettings | None = Field(None, description="The collection the variants are compared on.")
    datasets: list[CollectionSettings] | None = Field(
        None,
        min_length=1,
        max_length=MAX_COLLECTIONS,
        description="Several collections instead of one 'dataset': the same control and treatments run on "
        "each, each compared as one dataset is, and the primary metric tested pooled across them.",
    )
    control: VariantSettings
    treatments: dict[str, VariantSettings] = Field(
        ..., min_length=1, description="Each treatment, written as overrides of the control."
    )
    sweep: SweepSettings | None = Field(
        None,
        description="A grid (or list) of settings of the control, expanded into treatments named from "
        "their settings; the comparison then also tests the tuned choice among them.",
    )
    evaluation: EvaluationSettings = Field(default_factory=EvaluationSettings)
    significance: SignificanceSettings = Field(default_factory=SignificanceSettings)
    tracking: TrackingSettings = Field(default_factory=TrackingSettings)
    execution: ExecutionSettings = Field(default_factory=ExecutionSettings)
    efficiency: EfficiencySettings = Field(
        default_factory=EfficiencySettings, description="How each variant's query latency is timed."
    )
    judge: JudgeSettings | None = Field(
        None, description="A relevance judge for the unjudged hits, measured against people's labels."
    )
    answers: AnswersSettings | None = Field(
        None, description="Answers per variant, scored per query and compared paired (docs/answers.md)."
    )
    cache_dir: Path | None = Field(
        None, description="Embedding cache; default $ABCOMPARE_CACHE_DIR or ~/.cache/abcompare."
    )
    _sweep_plan: SweepPlan | None = PrivateAttr(None)
    #: The line of each key in the file it was loaded from (``load_config``), for errors found at run time.
    _lines: dict[tuple[str, ...], int] = PrivateAttr(default_factory=dict)
    _source: Path | None = PrivateAttr(None)

    @property
    def key_lines(self) -> dict[tuple[str, ...], int]:
        """The line of each key in the file this config was loaded from (empty for one built in Python)."""
        return self._lines

    @property
    def source(self) -> Path | None:
        """The file this config was loaded from (None for one built in Python)."""
        return self._source

    @property
    def sweep_plan(self) -> SweepPlan | None:
        """What the sweep expanded into (None without a sweep): candidates and what was left out."""
        return self._sweep_plan

    @field_validator("name")
    @classmethod
    def _name_label(cls, value: str) -> str:
        problem = label_problem(value)
        if problem is not None:
            raise ValueError(f"comparison name {problem}")
        return value

    @field_validator("treatments")
    @classmethod
    def _treatment_names(cls, value: dict[str, VariantSettings]) -> dict[str, VariantSettings]:
        """Treatment names become metric-key prefixes, tag keys, file and folder names: checked here, once."""
        if "control" in value:
            raise located("'control' is reserved for the control variant; rename the treatment", "control")
        for name in value:
            check_name("treatment", name, name)
        check_distinct("treatment", ["control", *value])
        return value

    @model_validator(mode="after")
    def _retriever_names(self) -> ExperimentConfig:
        """Retriever names become parameter keys (``retrievers.<name>.k1``) and hit sources."""
        for variant_name, variant in self.variants().items():
            where = ("control",) if variant_name == "control" else ("treatments", variant_name)
            for name in variant.retrievers:
                check_name("retriever", name, *where, "retrievers", name)
            check_distinct("retriever", list(variant.retrievers), *where, "retrievers")
        return self

    @model_validator(mode="after")
    def _one_collection_or_several(self) -> ExperimentConfig:
        """Exactly one of ``dataset`` / ``datasets`` (an experiment is 1..n collections: :meth:`parts`);
        several take no sweep (not supported yet), have distinct names and name in ``runs`` only variants
        given as run files."""
        if self.dataset is None and self.datasets is None:
            raise located("give 'dataset' (one collection) or 'datasets' (a list of collections)", "dataset")
        if self.datasets is None:
            return self
        if self.dataset is not None:
            raise located("give 'dataset' (one collection) or 'datasets' (several), not both", "datasets")
        if self.sweep is not None:
            raise located(
                "a sweep across several collections is not supported yet: sweep on one collection "
                "(dataset:), then compare the chosen setting across them (datasets:)",
                "sweep",
            )
        _check_collection_names(self.datasets)
        _check_collection_runs(self.datasets, self.variants())
        return self

    def variants(self) -> dict[str, VariantSettings]:
        """The control first, then the treatments in config order; at ``dataset.level: document`` each
        counts its ``depth``, ``top_k`` and ``rerank.top_n`` in documents (``VariantSettings.counted_in``)."""
        unit = "document" if self.dataset is not None and self.dataset.level == "document" else "chunk"
        return {name: v.counted_in(unit) for name, v in {"control": self.control, **self.treatments}.items()}

    def collections(self) -> dict[str, ExperimentConfig]:
        """Each collection of ``datasets`` as its own one-collection config, by name in config order: this
        config with ``dataset`` that entry, each run-file variant reading the entry's file (``runs``) when
        it names one, and a run name that says the collection. Empty for a one-collection config."""
        out: dict[str, ExperimentConfig] = {}
        for entry in self.datasets or []:
            dataset = DatasetSettings.model_validate(entry.model_dump(exclude={"runs"}))
            variants = {
                name: variant
                if name not in entry.runs
                else variant.model_copy(
                    update={"run": variant.run.model_copy(update={"path": entry.runs[name]})}
                )
                for name, variant in self.variants().items()
            }
            run_name = f"{self.tracking.run_name or self.name} {entry.name}"
            out[entry.name] = self.model_copy(
                update={
                    "dataset": dataset,
                    "datasets": None,
                    "control": variants.pop("control"),
                    "treatments": variants,
                    "tracking": self.tracking.model_copy(update={"run_name": run_name}),
                }
            )
        return out

    def parts(self) -> dict[str, ExperimentConfig]:
        """The collections compared, 1..n, each as its own one-collection config by name: ``dataset:`` is a
        list of one (this config, named ``""`` until its dataset is loaded and names it), ``datasets:``
        :meth:`collections`."""
        return self.collections() or {"": self}

    def fingerprint(self) -> str:
        """A stable hash of the validated config (for the MLflow tag ``abcompare.config_hash``); the
        execution backend and the latency timing are left out, since they never change a quality number.
        A one-collection config hashes as it did before ``datasets`` and ``pooling`` existed."""
        dumped = self.model_dump(mode="json", exclude={"execution", "efficiency"})
        if self.judge is None:
            dumped.pop("judge")  # a config without a judge hashes as it did before the judge existed
        if self.answers is None:
            dumped.pop("answers")  # nor one without answers
        if self.datasets is None:
            dumped.pop("datasets")
            dumped["significance"].pop("pooling")
        payload = json.dumps(dumped, sort_keys=True, default=str)
        return hashlib.sha256(payload.encode()).hexdigest()[:16]

    def resolved_cache_dir(self) -> Path:
        if self.cache_dir is not None:
            return self.cache_dir
        env = os.environ.get("ABCOMPARE_CACHE_DIR")
        return Path(env) if env else Path.home() / ".cache" / "abcompare"


def _check_collection_names(entries: list[CollectionSettings]) -> None:
    """Several collections' names are distinct, also as MLflow keys and file names."""
    names: list[str] = []
    for i, entry in enumerate(entries):
        if entry.name in names:
            raise located(f"two collections are named {entry.name!r}; rename one", "datasets", str(i), "name")
        names.append(entry.name)
        clash = first_collision(names)
        if clash is not None:
            raise located(
                f"collection names {clash[0]!r} and {clash[1]!r} become the same MLflow key and file "
                "name; rename one",
                "datasets",
                str(i),
                "name",
            )


def _check_collection_runs(entries: list[CollectionSettings], variants: dict[str, VariantSettings]) -> None:
    """A collection's ``runs`` name only variants, and only variants given as a run file (``run.path``)."""
    for i, entry in enumerate(entries):
        for variant in entry.runs:
            if variant not in variants:
                raise located(
                    f"collection {entry.name!r} gives a run file for {variant!r}, which is no variant "
                    f"(variants: {', '.join(variants)})",
                    "datasets", str(i), "runs", variant,
                )  # fmt: skip
            run = variants[variant].run
            if run is None or run.path is None:
                how = "retrieves" if run is None else "is a Python retriever"
                raise located(
                    f"collection {entry.name!r} gives a run file for {variant!r}, which {how}: only a "
                    "variant given as a run file (run.path) reads one per collection",
                    "datasets", str(i), "runs", variant,
                )  # fmt: skip


def config_schema() -> dict[str, Any]:
    """The JSON schema of the experiment config as a file writes it (``abcompare schema``).

    The loader fills in two things before the model sees the file, so the schema allows them too: a
    ``sweep`` may stand in for ``treatments`` (it expands into them), and a retriever named ``bm25`` or
    ``dense`` may omit its ``type`` (``{}`` then fits both kinds, so the kinds are ``anyOf``, not ``oneOf``).
    """
    schema = ExperimentConfig.model_json_schema()
    schema["required"] = [key for key in schema["required"] if key != "treatments"]
    schema["anyOf"] = [{"required": ["treatments"]}, {"required": ["sweep"]}]
    schema["oneOf"] = [{"required": ["dataset"]}, {"required": ["datasets"]}]
    retriever = schema["$defs"]["VariantSettings"]["properties"]["retrievers"]["additionalProperties"]
    retriever["anyOf"] = retriever.pop("oneOf")
    return schema
