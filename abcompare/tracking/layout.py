"""What a comparison writes to MLflow, named once.

The writer (``logger``, ``store``) and the reader (``reader``) both use these names; the README's
"In MLflow" section describes the same layout, and ``tests/tracking/test_tracking_layout.py`` reads the
whole of it back from a real run. Change a name here and both sides move together.

Keys with ``@`` (``ndcg@10``) become ``ndcg_at_10`` here, at the MLflow boundary (:func:`metric_key`).
"""

from __future__ import annotations

from abcompare.core.naming import mlflow_safe_name
from abcompare.core.vocabulary import mlflow_key

# ------------------------------------------------------------------------------------------ tags
ROLE_TAG = "abcompare.role"
ROLE_COMPARISON = "comparison"  # the parent run
ROLE_CONTROL = "control"
VARIANT_TAG = "abcompare.variant"
COMPARISON_TAG = "abcompare.comparison"  # the comparison's name (the config's ``name``)
DATASET_TAG = "abcompare.dataset"
CONFIG_HASH_TAG = "abcompare.config_hash"
DATASET_HASH_TAG = "abcompare.dataset_hash"
CODE_VERSION_TAG = "abcompare.code_version"
PRIMARY_METRIC_TAG = "abcompare.primary_metric"
JUDGMENTS_TAG = "abcompare.judgments"
ANNOTATION_FILES_TAG = "abcompare.annotation_files"
#: On a treatment's run: its verdict sentence. On the parent: every treatment's, one per line.
VERDICT_TAG = "abcompare.verdict"
TUNED_TAG = "abcompare.tuned"  # a sweep's parent: the tuned comparison's sentence
FAILURE_TAG = "abcompare.failure"
#: The process that owns a run (the next run marks runs of dead owners FAILED).
HOST_TAG = "abcompare.host"
PID_TAG = "abcompare.pid"
START_TAG = "abcompare.process_start"

# MLflow's own tags and experiment tags
PARENT_RUN_TAG = "mlflow.parentRunId"
NOTE_TAG = "mlflow.note.content"  # the run's description
#: The run's name: a treatment's run is renamed once compared (``outcome.sentences.verdict_run_name``).
RUN_NAME_TAG = "mlflow.runName"
LOGGED_ARTIFACTS_TAG = "mlflow.loggedArtifacts"  # which JSON files the UI shows as tables
#: The experiment kind: MLflow 3 UIs that read it open the classic runs view ("Machine learning").
EXPERIMENT_KIND_TAG = "mlflow.experimentKind"
EXPERIMENT_KIND = "custom_model_development"
#: A saved view of the runs table (the headline columns), opened by ``?viewStateShareKey=abcompare``.
VIEW_KEY = "abcompare"
VIEW_TAG = f"mlflow.sharedViewState.{VIEW_KEY}"


def verdict_tag(treatment: str) -> str:
    """The parent's tag holding one treatment's verdict sentence: ``abcompare.verdict.dbsf``."""
    return f"{VERDICT_TAG}.{mlflow_safe_name(treatment)}"


def secondary_tag(treatment: str) -> str:
    """The parent's tag holding one treatment's secondary line: ``abcompare.secondary.dbsf``."""
    return f"abcompare.secondary.{mlflow_safe_name(treatment)}"


# ------------------------------------------------------------------------------------------ metrics
#: What is a metric (searchable, plotted): each variant's means, and the primary metric's comparison with
#: the control. The secondary metrics' full statistics are in ``tables/comparison`` only, so the
#: comparison people look for is not one row among a hundred.
#: The primary comparison's fields, on the parent per treatment and on each treatment's own run.
COMPARISON_FIELDS = ("delta", "ci_low", "ci_high", "p_raw", "p_adjusted", "verdict")
#: With ``significance.non_inferiority_margin``, the non-inferiority test's fields beside them: its raw
#: one-sided p, its p adjusted over the treatments (the one its verdict uses) and the verdict (1
#: non-inferior, 0 not shown): ``_vs_control.dbsf.ndcg_at_10.non_inferiority_p``.
NON_INFERIORITY_FIELDS = ("non_inferiority_p_raw", "non_inferiority_p", "non_inferiority")
#: The primary comparison's key prefix. MLflow's compare view sorts metric keys by code unit, where ``_``
#: comes before every lowercase letter and every other key here is lowercase (metric names, ``efficiency.*``,
#: ``mean.*``, ``tuned.*``; user-given names only ever follow a fixed prefix): these rows come first.
VS_CONTROL = "_vs_control"
#: The rest of a treatment's primary comparison (where its delta comes from, what the unjudged hits could
#: do, the queries needed) under a prefix that sorts after every other key, so the first rows MLflow shows
#: stay the six figures of ``_vs_control`` (delta, interval, p, verdict).
VS_CONTROL_DETAIL = "vs_control"
#: What the unjudged hits could do to the primary comparison, on each treatment's run
#: (``vs_control.ndcg_at_10.unjudged_min``): the range of the delta, the hits, whether the verdict holds
#: over the range (1/0) and the fewest judgments found that flip it (absent when it holds).
ROBUSTNESS_FIELDS = (
    "unjudged_hits",
    "unjudged_min",
    "unjudged_max",
    "unjudged_holds",
    "unjudged_flip_judgments",
)
#: The queries needed to detect min_effect (or the observed delta) and the bootstrap range, on each
#: treatment's run (``vs_control.ndcg_at_10.queries_needed``; absent when there is no change to detect).
QUERIES_NEEDED_FIELDS = ("queries_needed", "queries_needed_low", "queries_needed_high")
MEAN_PREFIX = "mean"  # the parent's means: mean.control.ndcg_at_10
N_QUERIES_METRIC = "n_queries"
TUNED_PREFIX = "tuned"  # a sweep's parent: tuned.delta, tuned.ci_low, tuned.ci_high, tuned.p_value


#: A treatment's run: its cost against the control, from the cost table (``efficiency.vs_control.*``:
#: the treatment's time or size over the control's, below 1 faster or smaller; ``query_within_noise`` 1
#: when the two latencies are within the noise). Every variant's run has its own ``efficiency.*``. Not
#: under ``_vs_control``: the primary comparison's keys stay first in the compare view.
COST_RATIO_FIELDS = (
    "query_ratio", "query_ratio_low", "query_ratio_high", "query_within_noise", "encode_ratio", "model_ratio",
    "index_ratio",
)  # fmt: skip
#: A treatment's run: its cost sentence (on the parent: ``abcompare.cost.<treatment>``).
COST_TAG = "abcompare.cost"


def cost_ratio_key(field: str) -> str:
    """A treatment run's key of one cost ratio: ``efficiency.vs_control.query_ratio``."""
    return f"efficiency.vs_control.{field}"


def cost_tag(treatment: str) -> str:
    """The parent's tag holding one treatment's cost sentence: ``abcompare.cost.dbsf``."""
    return f"{COST_TAG}.{mlflow_safe_name(treatment)}"


def metric_key(metric: str) -> str:
    """An MLflow metric key for a metric name: ``ndcg@10`` -> ``ndcg_at_10``."""
    return mlflow_key(metric)


def comparison_key(treatment: str, metric: str, field: str) -> str:
    """The parent's key of one primary comparison figure: ``_vs_control.dbsf.ndcg_at_10.delta``."""
    return f"{VS_CONTROL}.{mlflow_safe_name(treatment)}.{metric_key(metric)}.{field}"


def vs_control_key(metric: str, field: str) -> str:
    """A treatment run's key of its primary comparison with the control: ``_vs_control.ndcg_at_10.delta``."""
    return f"{VS_CONTROL}.{metric_key(metric)}.{field}"


#: A treatment run's parts of its primary delta (``vs_control.ndcg_at_10.attr.new``): where it comes from.
ATTRIBUTION_FIELDS = ("new", "lost", "reorder", "ideal")


def detail_key(metric: str, field: str) -> str:
    """A treatment run's key of a detail of its primary comparison: ``vs_control.ndcg_at_10.unjudged_min``."""
    return f"{VS_CONTROL_DETAIL}.{metric_key(metric)}.{field}"


def attribution_key(metric: str, part: str) -> str:
    """A treatment run's key of one part of its primary delta: ``vs_control.ndcg_at_10.attr.new``."""
    return detail_key(metric, f"attr.{part}")


def mean_key(variant: str, metric: str) -> str:
    """The parent's key of a variant's mean: ``mean.control.ndcg_at_10``."""
    return f"{MEAN_PREFIX}.{mlflow_safe_name(variant)}.{metric_key(metric)}"


# ------------------------------------------------------------------------------------------ artifacts
TABLES_DIR = "tables"
COMPARISON_TABLE = "comparison"  # parent: the full statistics table
PER_QUERY_ALL_TABLE = "per_query_all_variants"  # parent: every variant's per-query metrics side by side
QUERIES_TABLE = "queries"  # parent: the query set (query_id, text, extra fields)
GRID_TABLE = "grid"  # a sweep's parent: one row per candidate, best first
COST_TABLE = "cost"  # parent: what each retrieved variant costs, and each treatment's ratios
HELD_OUT_TABLE = "tuned_held_out"  # a sweep's parent: the tuned comparison's per-query table
PER_QUERY_TABLE = "per_query_metrics"  # a variant's run: its per-query metrics
#: parent: where each treatment's change comes from, per (treatment, metric): the parts and their counts
ATTRIBUTION_TABLE = "attribution"
ATTRIBUTION_PER_QUERY_TABLE = "attribution_per_query"  # parent: the same per query

HITS_FILE = "run/hits.parquet"  # a variant's hits, with each hit's judgment ``grade`` (NaN: unjudged)
RUN_FILE = "run/run.trec"
ALIGNMENT_FILE = "alignment.json"
SUMMARY_FILE = "summary.md"
REPORT_FILE = "report.html"
RESULT_FILE = "result.json"  # parent: what the report needs besides the tables (judged@k, warnings, ...)
TIMINGS_FILE = "timings.json"
CONFIG_DIR = "config"
RESOLVED_CONFIG_FILE = f"{CONFIG_DIR}/resolved_config.json"
PLOTS_DIR = "plots"
DELTAS_PLOT = f"{PLOTS_DIR}/deltas.svg"
PARETO_PLOT = f"{PLOTS_DIR}/quality_vs_latency.svg"  # a sweep's parent
#: A variant's per-query score distribution, at the run's root: MLflow's compare view lists only the
#: root-level files that every compared run has, and shows them side by side.
DISTRIBUTION_PLOT = "metric_distribution.svg"


def table_file(name: str, fmt: str = "parquet") -> str:
    """``tables/comparison.parquet`` / ``tables/comparison.json``."""
    return f"{TABLES_DIR}/{name}.{fmt}"


def paired_plot(treatment: str) -> str:
    """The parent's per-query scatter of one treatment against the control."""
    return f"{PLOTS_DIR}/paired_{mlflow_safe_name(treatment)}.svg"


#: The query parameter every UI link carries: without it MLflow 3 opens its GenAI screens.
WORKFLOW_QUERY = "workflowType=machine_learning"


def ui_url(base: str, route: str, query: str = "") -> str:
    """Every link to MLflow's UI abcompare prints or writes: ``base/#/route?query&workflowType=...``, so it
    opens the classic "Machine learning" view, never the GenAI one. The route's own parameters come first:
    the compare view reads ``runs`` and ``experiments`` only there ("undefined is not valid JSON" else)."""
    head = f"{query}&" if query else ""
    return f"{base.rstrip('/')}/#/{route.strip('/')}?{head}{WORKFLOW_QUERY}"


def view_url(base: str, experiment_id: str) -> str:
    """The experiment's runs in MLflow's classic view with abcompare's headline columns."""
    return ui_url(base, f"experiments/{experiment_id}/runs", f"viewStateShareKey={VIEW_KEY}")


def run_url(base: str, experiment_id: str, run_id: str) -> str:
    """One run's page (the parent's: the description, verdict first)."""
    return ui_url(base, f"experiments/{experiment_id}/runs/{run_id}")


def compare_url(base: str, experiment_id: str, run_ids: list[str]) -> str:
    """MLflow's compare view of some runs (the control and a treatment), as the runs view opens it."""
    import json
    import urllib.parse

    runs = urllib.parse.quote(json.dumps(list(run_ids)), safe="")
    experiments = urllib.parse.quote(json.dumps([experiment_id]), safe="")
    return ui_url(base, "compare-runs", f"runs={runs}&experiments={experiments}")


# ------------------------------------------------------------------------------------------ collections
#: A comparison across several collections (``datasets:``): one top run of role ``collections`` holding the
#: pooled test, each collection's comparison nested under it (its parent run, tagged with the collection,
#: laid out exactly as a single-collection comparison: the variant runs nested under that).
ROLE_COLLECTIONS = "collections"
COLLECTION_TAG = "abcompare.collection"  # on a collection's comparison run: the collection's name
#: The top run's key prefix of each treatment's pooled figures (``_pooled.hybrid.ndcg_at_10.delta``);
#: ``_`` sorts before every lowercase key, so MLflow's compare view lists them first.
POOLED = "_pooled"
#: The pooled test's fields (``stats.pooled.pooled_comparison``'s columns): the weighted mean delta, its
#: interval at the verdict's level, the stratified sign-flip p (raw and adjusted over the treatments) and the
#: verdict code (1 better, -1 worse, 0 neither).
POOLED_FIELDS = ("delta", "ci_low", "ci_high", "p_value", "p_adjusted", "verdict")
#: The rest of a treatment's pooled figures, after every ``_pooled`` key (``pooled.hybrid.ndcg_at_10.i2``):
#: the random-effects meta-analysis (effect, interval, p, tau², I², Cochran's Q and its p) and the counts.
POOLED_DETAIL = "pooled"
POOLED_DETAIL_FIELDS = (
    "meta_effect", "meta_ci_low", "meta_ci_high", "meta_p_value", "tau2", "i2", "q", "q_p_value",
    "collections", "n_queries",
)  # fmt: skip
#: Each (collection, treatment)'s primary figures on the top run
#: (``collection.scifact.hybrid.ndcg_at_10.delta``), ``p_adjusted`` over the family of every collection's
#: primary tests.
COLLECTION_PREFIX = "collection"
PER_COLLECTION_FIELDS = ("delta", "ci_low", "ci_high", "p_value", "p_adjusted", "verdict", "n_queries")
POOLED_TABLE = "pooled"  # top run: one row per treatment
PER_COLLECTION_TABLE = "per_collection"  # top run: one row per (collection, treatment)
POOLED_FOREST_PLOT = f"{PLOTS_DIR}/collections_forest.svg"  # top run: per-collection deltas, pooled diamonds


def pooled_key(treatment: str, metric: str, field: str) -> str:
    """The top run's key of one pooled figure: ``_pooled.hybrid.ndcg_at_10.delta``."""
    return f"{POOLED}.{mlflow_safe_name(treatment)}.{metric_key(metric)}.{field}"


def pooled_detail_key(treatment: str, metric: str, field: str) -> str:
    """The top run's key of one meta-analysis figure or count: ``pooled.hybrid.ndcg_at_10.i2``."""
    return f"{POOLED_DETAIL}.{mlflow_safe_name(treatment)}.{metric_key(metric)}.{field}"


def collection_key(collection: str, treatment: str, metric: str, field: str) -> str:
    """The top run's key of one collection's primary figure: ``collection.scifact.hybrid.ndcg_at_10.delta``
    (the collection and the treatment MLflow-safe, the metric as :func:`metric_key` has it)."""
    names = f"{mlflow_safe_name(collection)}.{mlflow_safe_name(treatment)}"
    return f"{COLLECTION_PREFIX}.{names}.{metric_key(metric)}.{field}"
