"""What a comparison writes to MLflow: a parent run for the comparison, a child run per variant.

The layout is fixed so the MLflow UI's compare view lines the variants up: every variant run has the same
metric keys, the same table names and the same plot file names.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pandas as pd

from abcompare.errors import AbcompareWarning
from abcompare.naming import mlflow_safe_name
from abcompare.report import save_delta_forest, save_metric_distribution, save_paired_scatter
from abcompare.summary import markdown_table, secondary_summary, settings_line, verdict_sentence
from abcompare.tracking import Tracker, flatten, mlflow_key
from abcompare.vocabulary import SECONDARY, VERDICT_CODE


def _safe(name: str) -> str:
    """A variant name (validated by the config: never a path, unique in this form) as a key or file name."""
    return mlflow_safe_name(name)


def summary_markdown(result: Any) -> str:
    """The comparison for the parent run's description: the verdict sentences, then the compact table."""
    cfg = result.config
    comparison = result.comparison
    lines = [
        f"**{cfg.name}** — {cfg.description}".rstrip(" —"),
        "",
        f"Dataset `{result.dataset_name}`, {result.n_queries} queries, level `{cfg.dataset.level}`, "
        f"convention `{cfg.evaluation.convention}`.",
        "",
    ]
    for name in cfg.treatments:
        secondary = secondary_summary(comparison, name)
        lines.append(f"- {verdict_sentence(comparison, name)}" + (f" {secondary}" if secondary else ""))
    lines += ["", markdown_table(comparison), "", f"_{settings_line(comparison)}_"]
    return "\n".join(lines)


class ComparisonLogger:
    """Logs one comparison through a :class:`Tracker`; the runner calls it stage by stage."""

    def __init__(self, tracker: Tracker, config: Any, config_path: Path | None, dataset: Any, version: str):
        self.tracker = tracker
        self.config = config
        self.config_path = config_path
        self.dataset = dataset
        self.version = version
        self.parent_id: str | None = None
        self.variant_ids: dict[str, str] = {}
        self.config_hash = config.fingerprint()
        self.dataset_hash = dataset.fingerprint()

    def _common_tags(self) -> dict[str, str]:
        tags = {
            "abcompare.config_hash": self.config_hash,
            "abcompare.dataset_hash": self.dataset_hash,
            "abcompare.dataset": self.dataset.name,
            "abcompare.code_version": self.version,
            "abcompare.comparison": self.config.name,
            **self.config.tracking.tags,
        }
        return tags

    def _judgment_tags(self) -> dict[str, str]:
        """Which judgments the comparison used, so two comparisons on different judgment sets are never
        confused: the files with their sha256, and how many judgments they hold."""
        annotations = self.dataset.annotations
        threshold = self.config.evaluation.relevance_threshold
        relevant = int((annotations["grade"] >= threshold).sum()) if "grade" in annotations else 0
        files = "; ".join(
            f"{Path(p).name} sha256:{digest[:16]}" for p, digest in self.dataset.annotation_files
        )
        tags = {
            "abcompare.judgments": f"{len(annotations)} judgments ({relevant} at grade >= {threshold}) on "
            f"{annotations['query_id'].nunique()} queries",
        }
        if files:
            tags["abcompare.annotation_files"] = files
        return tags

    def start(self) -> None:
        cfg = self.config
        tags = {**self._common_tags(), **self._judgment_tags(), "abcompare.role": "comparison"}
        self.parent_id = self.tracker.start_run(
            cfg.tracking.run_name or cfg.name, tags, description=cfg.description
        )
        settings = {
            "dataset": cfg.dataset.model_dump(mode="json"),
            "evaluation": cfg.evaluation.model_dump(mode="json"),
            "significance": cfg.significance.model_dump(mode="json"),
            "treatments": ",".join(cfg.treatments),
        }
        self.tracker.log_params(self.parent_id, flatten(settings))
        if self.config_path is not None:
            self.tracker.log_file(self.parent_id, self.config_path, "config")
        self.tracker.log_dict(self.parent_id, cfg.model_dump(mode="json"), "config/resolved_config.json")
        queries = self.dataset.queries
        self.tracker.log_table(self.parent_id, queries.set_index("query_id"), "queries")
        self.tracker.log_dataset(
            self.parent_id,
            queries,
            name=self.dataset.name,
            source=str(self.dataset.source or self.dataset.name),
            digest=self.dataset_hash[:36],
        )

    def log_variant(self, outcome: Any, variant: Any, tmp: Path) -> None:
        """A child run: flattened settings, mean metrics, per-query table, the run file, plots."""
        from abcompare.data.runs import write_run

        tags = {**self._common_tags(), "abcompare.role": outcome.role, "abcompare.variant": outcome.name}
        run_id = self.tracker.start_run(outcome.name, tags, parent_id=self.parent_id)
        self.variant_ids[outcome.name] = run_id
        self.tracker.log_params(run_id, flatten(variant.model_dump(mode="json", exclude_none=True)))
        metrics = dict(outcome.means)
        counts = outcome.per_query
        metrics["n_queries"] = float(len(counts))
        if "retrieved_count" in counts:
            metrics["mean_retrieved_count"] = float(counts["retrieved_count"].mean())
        metrics.update(outcome.efficiency)
        self.tracker.log_metrics(run_id, metrics)
        self.tracker.log_table(run_id, outcome.per_query, "per_query_metrics")
        folder = tmp / "variants" / _safe(outcome.name)
        folder.mkdir(parents=True, exist_ok=True)
        with warnings.catch_warnings():
            # tied fused scores get rank-derived scores in the TREC file; hits.parquet keeps the real ones
            warnings.simplefilter("ignore", AbcompareWarning)
            run_path = write_run(outcome.run, folder / "run.trec", fmt="trec", run_name=outcome.name)
        self.tracker.log_file(run_id, Path(run_path), "run")
        hits_path = folder / "hits.parquet"
        outcome.run.to_parquet(hits_path)
        self.tracker.log_file(run_id, hits_path, "run")
        self.tracker.log_dict(run_id, outcome.alignment.to_dict(), "alignment.json")
        plot = save_metric_distribution(
            outcome.per_query, self._plot_metrics(), folder / "metric_distribution.png", outcome.name
        )
        self.tracker.log_file(run_id, plot, "plots")
        self.tracker.end_run(run_id)

    def _plot_metrics(self) -> list[str]:
        k = max(self.config.evaluation.cutoffs)
        return [f"{m}@{k}" for m in self.config.evaluation.metrics]

    def log_comparison(self, result: Any, tmp: Path) -> None:
        """The parent run: deltas, CIs, raw and adjusted p-values, verdicts; tables, plots, description."""
        parent = self.parent_id
        comparison = result.comparison
        metrics: dict[str, float] = {}
        for row in comparison.itertuples(index=False):
            prefix = f"{_safe(row.treatment)}.{mlflow_key(row.metric)}"
            metrics[f"{prefix}.delta"] = row.delta
            metrics[f"{prefix}.ci_low"] = row.ci_low
            metrics[f"{prefix}.ci_high"] = row.ci_high
            metrics[f"{prefix}.p_raw"] = row.p_primary
            metrics[f"{prefix}.p_adjusted"] = row.p_adjusted
            metrics[f"{prefix}.verdict"] = VERDICT_CODE.get(row.verdict, 0)
            if row.role == SECONDARY:
                metrics[f"{prefix}.secondary"] = 1.0
        for name, means in result.means.items():
            for metric, value in means.items():
                metrics[f"{_safe(name)}.{mlflow_key(metric)}"] = value
        self.tracker.log_metrics(parent, metrics)
        self.tracker.log_table(parent, comparison.set_index(["treatment", "metric"]), "comparison")
        self.tracker.log_dict(
            parent, {name: report.to_dict() for name, report in result.alignment.items()}, "alignment.json"
        )
        markdown = summary_markdown(result)
        self.tracker.log_text(parent, markdown, "summary.md")
        tags = {"mlflow.note.content": markdown, "abcompare.primary_metric": result.primary_metric}
        for name in result.config.treatments:
            tags[f"abcompare.verdict.{_safe(name)}"] = verdict_sentence(comparison, name)
            secondary = secondary_summary(comparison, name)
            if secondary:
                tags[f"abcompare.secondary.{_safe(name)}"] = secondary
        self.tracker.set_tags(parent, tags)
        folder = tmp / "comparison"
        plot = save_delta_forest(comparison, folder / "deltas.png")
        self.tracker.log_file(parent, plot, "plots")
        primary = result.primary_metric
        control = result.per_query["control"][primary]
        for name in result.config.treatments:
            scatter = save_paired_scatter(
                control,
                result.per_query[name][primary],
                primary,
                name,
                folder / f"paired_{_safe(name)}.png",
            )
            self.tracker.log_file(parent, scatter, "plots")
        per_query = pd.concat(
            {name: frame[[c for c in frame.columns if "@" in c]] for name, frame in result.per_query.items()},
            axis=1,
        )
        per_query.columns = [f"{variant}/{metric}" for variant, metric in per_query.columns]
        self.tracker.log_table(parent, per_query, "per_query_all_variants")
        self.tracker.log_dict(parent, {"timings_seconds": result.timings}, "timings.json")

    def finish(self) -> None:
        if self.parent_id:
            self.tracker.end_run(self.parent_id)
