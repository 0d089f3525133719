"""The MLflow layout contract: everything the README's "In MLflow" section promises, read back from a real
run of the main job, by the names in ``abcompare.tracking.layout`` that both the writer and the reader use;
and what a sweep adds (``tuned.*``, ``tables/grid``, ``tables/tuned_held_out``,
``plots/quality_vs_latency.svg``), read back from the session's run of the shipped 24-point sweep.

If a name changes, it changes in ``mlflow_layout``, this test, the README and ``analysis`` together.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pandas as pd
import pytest
from mlflow import MlflowClient
from support.readme import doc_section

from abcompare.tracking import layout as L
from abcompare.tracking.reader import load_comparison


def logged_as(value: float) -> float:
    """A figure as the README says MLflow holds it: "logged as computed, every digit" (the --json figures
    are the computed floats, written with every digit)."""
    return float(value)


def primary_comparison(prefix: str, row: dict) -> dict[str, float]:
    """The README's primary-comparison metrics under ``prefix``, as MLflow holds them, from the --json row
    (verdict 0: the example's treatment shows no significant difference)."""
    fields = {"delta": "delta", "ci_low": "ci_low", "ci_high": "ci_high", "p_raw": "p_primary",
              "p_adjusted": "p_adjusted"}  # fmt: skip
    return {f"{prefix}.{key}": logged_as(row[column]) for key, column in fields.items()} | {
        f"{prefix}.verdict": 0.0
    }


def readme_mlflow_section() -> str:
    return doc_section("docs/mlflow.md", "In MLflow")


@pytest.fixture(scope="module")
def logged(example_run):
    workdir, result = example_run
    assert result.returncode == 0, result.stderr[-3000:]
    payload = json.loads(result.stdout)
    client = MlflowClient(tracking_uri=f"sqlite:///{workdir / 'mlflow.db'}")
    parent = client.get_run(payload["parent_run_id"])
    children = {name: client.get_run(run_id) for name, run_id in payload["variant_run_ids"].items()}
    return workdir, payload, client, parent, children


def files(client: MlflowClient, run_id: str, folder: str | None = None) -> set[str]:
    """Every file path of a run's artifacts (folders walked)."""
    found = set()
    for item in client.list_artifacts(run_id, folder):
        found |= files(client, run_id, item.path) if item.is_dir else {item.path}
    return found


def test_the_parent_run_holds_the_comparison(logged) -> None:
    _, payload, client, parent, children = logged
    tags, metrics = parent.data.tags, parent.data.metrics
    assert tags[L.ROLE_TAG] == L.ROLE_COMPARISON
    assert tags[L.COMPARISON_TAG] == "rrf-vs-dbsf"
    assert re.fullmatch(r"rrf-vs-dbsf \d{4}-\d\d-\d\d \d\d:\d\d:\d\d", parent.info.run_name)
    assert tags[L.PRIMARY_METRIC_TAG] == "ndcg@10" == parent.data.params["evaluation.primary_metric"]
    assert tags[L.DATASET_TAG] == "hr-docs" and tags["team"] == "search"
    for key in (
        L.CONFIG_HASH_TAG,
        L.DATASET_HASH_TAG,
        L.CODE_VERSION_TAG,
        L.JUDGMENTS_TAG,
        L.HOST_TAG,
        L.PID_TAG,
    ):
        assert tags[key]
    verdict = payload["verdicts"]["dbsf"]
    assert tags[L.verdict_tag("dbsf")] == verdict["sentence"] == tags[L.VERDICT_TAG]
    assert tags[L.secondary_tag("dbsf")] == verdict["secondary"]
    # the description opens with the verdict sentence, MDE included, then the compact table (a markdown
    # table, not a code block)
    note = tags[L.NOTE_TAG]
    head, rest = verdict["sentence"].split("; ", 1)  # the verdict itself, then its detectable effect
    assert note.startswith(f"**{head}**; {rest}\n")  # the verdict in bold, then the rest of its sentence
    assert "this query set detects differences of about 0.024 or more" in note
    assert note.index("| treatment | metric") > note.index(verdict["secondary"])
    assert "```" not in note
    # metrics: the primary comparison (the README's names) and every variant's means; nothing else
    primary = next(row for row in payload["comparison"] if row["role"] == "primary")
    expected = primary_comparison("_vs_control.dbsf.ndcg_at_10", primary)
    expected |= {
        f"mean.{variant}.{metric.replace('@', '_at_')}": logged_as(value)
        for variant, means in payload["means"].items()
        for metric, value in means.items()
    }
    assert metrics == expected
    assert len(metrics) == 6 + 2 * (5 * 3 + 3)  # per variant: 5 measures and judged@k at 1, 5 and 10
    # MLflow's compare view sorts keys by code unit (JavaScript's default sort): the primary's come first
    assert sorted(metrics)[:6] == sorted(k for k in expected if k.startswith("_vs_control."))
    assert parent.inputs.dataset_inputs[0].dataset.name == "hr-docs"
    tables = (L.COMPARISON_TABLE, L.PER_QUERY_ALL_TABLE, L.QUERIES_TABLE, L.ATTRIBUTION_TABLE,
              L.ATTRIBUTION_PER_QUERY_TABLE, L.COST_TABLE)  # fmt: skip
    assert files(client, parent.info.run_id) == {
        L.table_file(name, fmt)
        for name in tables
        for fmt in ("parquet", "json")  # Parquet for code, MLflow's JSON table view for the UI
    } | {
        L.ALIGNMENT_FILE,
        L.SUMMARY_FILE,
        L.REPORT_FILE,
        L.RESULT_FILE,
        L.TIMINGS_FILE,
        L.DELTAS_PLOT,
        L.paired_plot("dbsf"),
        L.RESOLVED_CONFIG_FILE,
        f"{L.CONFIG_DIR}/rrf_vs_dbsf.yaml",
    }
    views = {entry["path"] for entry in json.loads(tags[L.LOGGED_ARTIFACTS_TAG])}
    assert views == {L.table_file(n, "json") for n in tables}


def test_each_variant_run_holds_its_settings_means_tables_and_hits(logged, tmp_path: Path) -> None:
    _, payload, client, parent, children = logged
    assert {name: run.data.tags[L.ROLE_TAG] for name, run in children.items()} == {
        "control": L.ROLE_CONTROL,
        "dbsf": "treatment",
    }
    for name, run in children.items():
        assert run.data.tags[L.VARIANT_TAG] == name
        assert run.info.run_name == named(name, payload)
        assert run.data.tags[L.PARENT_RUN_TAG] == parent.info.run_id
        assert run.data.params["fusion.method"] == {"control": "rrf", "dbsf": "dbsf"}[name]
        assert run.data.metrics[L.metric_key("ndcg@10")] == logged_as(payload["means"][name]["ndcg@10"])
        assert run.data.metrics[L.N_QUERIES_METRIC] == 124
        assert run.data.metrics["efficiency.seconds_per_query"] > 0
        assert files(client, run.info.run_id) == {
            L.table_file(L.PER_QUERY_TABLE, "parquet"),
            L.table_file(L.PER_QUERY_TABLE, "json"),
            L.HITS_FILE,
            L.RUN_FILE,
            L.ALIGNMENT_FILE,
            L.DISTRIBUTION_PLOT,
        }
        hits = pd.read_parquet(client.download_artifacts(run.info.run_id, L.HITS_FILE, str(tmp_path / name)))
        assert list(hits.columns[:4]) == ["query_id", "rank", "key", "score"]
        judged = hits["grade"].notna()
        assert 0 < judged.sum() < len(hits) and set(hits.loc[judged, "grade"]) <= {0.0, 1.0, 2.0, 3.0}


def named(variant: str, payload: dict) -> str:
    """A variant run's name as the README's "In MLflow" section writes it out: the control's is its name; a
    treatment's adds its primary comparison (3 decimals, the adjusted p) and its verdict, read from --json."""
    if variant == "control":
        return variant
    row = next(r for r in payload["comparison"] if r["role"] == "primary" and r["treatment"] == variant)
    p = row["p_adjusted"]
    shown_p = "p < 0.0001" if p < 1e-4 else f"p = {p:.4f}" if p < 1e-3 else f"p = {p:.3f}"
    change = f"{row['delta']:+.3f} [{row['ci_low']:.3f}, {row['ci_high']:.3f}]"
    return f"{variant} · {row['metric']} {change}, {shown_p} · {row['verdict']}"


def test_a_treatment_run_is_named_with_its_primary_comparison_and_searchable_by_its_variant(logged) -> None:
    _, payload, client, parent, children = logged
    experiment = parent.info.experiment_id
    found = client.search_runs([experiment], filter_string="attributes.run_name LIKE 'dbsf%'")
    assert [run.info.run_id for run in found] == [children["dbsf"].info.run_id]
    assert children["dbsf"].info.run_name.startswith("dbsf · ndcg@10 ")
    assert children["dbsf"].data.tags[L.RUN_NAME_TAG] == children["dbsf"].info.run_name


def test_a_treatment_run_carries_its_comparison_with_the_control(logged) -> None:
    _, payload, _, _, children = logged
    metrics = children["dbsf"].data.metrics
    primary = next(row for row in payload["comparison"] if row["role"] == "primary")
    compared = {key: value for key, value in metrics.items() if key.startswith("_vs_control.")}
    figures = {f"_vs_control.ndcg_at_10.{field}" for field in L.COMPARISON_FIELDS}
    assert compared == primary_comparison(
        "_vs_control.ndcg_at_10", primary
    )  # the secondary metrics' statistics are in the parent's tables/comparison only
    assert set(compared) == figures
    assert sorted(metrics)[: len(compared)] == sorted(compared)  # first in MLflow's compare view
    detail = {key: value for key, value in metrics.items() if key.startswith("vs_control.")}
    parts = payload["attribution"]["dbsf"]["ndcg@10"]["parts"]  # where the delta comes from, adding up to it
    attributed = {L.attribution_key("ndcg@10", part): value for part, value in parts.items()}
    assert {k: v for k, v in detail.items() if k in attributed} == attributed
    assert set(parts) == set(L.ATTRIBUTION_FIELDS)
    assert sum(parts.values()) == pytest.approx(primary["delta"], abs=1e-12)
    robust = payload["robustness"]["dbsf"]
    extra = {L.detail_key("ndcg@10", f) for f in L.ROBUSTNESS_FIELDS + L.QUERIES_NEEDED_FIELDS}
    if robust["holds"]:  # the fewest judgments that flip it: only when some do
        extra.discard(L.detail_key("ndcg@10", "unjudged_flip_judgments"))
    assert set(detail) == set(attributed) | extra
    assert sorted(metrics)[-len(detail) :] == sorted(detail)  # after every other key
    assert children["dbsf"].data.tags[L.VERDICT_TAG] == payload["verdicts"]["dbsf"]["sentence"]
    assert not any(key.startswith("_vs_control") for key in children["control"].data.metrics)


def test_the_experiment_opens_in_the_classic_view_with_the_headline_columns(logged) -> None:
    _, _, client, parent, _ = logged
    experiment = client.get_experiment(parent.info.experiment_id)
    assert experiment.tags[L.EXPERIMENT_KIND_TAG] == L.EXPERIMENT_KIND
    view = json.loads(experiment.tags[L.VIEW_TAG])
    assert view["selectedColumns"][:4] == [
        "metrics.`_vs_control.dbsf.ndcg_at_10.delta`",
        "metrics.`_vs_control.dbsf.ndcg_at_10.p_adjusted`",
        "metrics.`ndcg_at_10`",
        "metrics.`_vs_control.ndcg_at_10.delta`",
    ]
    assert f"tags.`{L.VERDICT_TAG}`" in view["selectedColumns"]


def test_what_is_written_is_what_analysis_reads(logged) -> None:
    workdir, payload, _, parent, _ = logged
    loaded = load_comparison(parent.info.run_id, tracking_uri=f"sqlite:///{workdir / 'mlflow.db'}")
    assert loaded.name == "rrf-vs-dbsf" and loaded.treatments == ["dbsf"]
    assert loaded.summary.attrs["primary_metric"] == "ndcg@10"  # the stored settings, as notebooks read them
    said = loaded.settings  # typed, as the example config's significance section sets them
    expected = ("ndcg@10", ("t", "permutation", "bootstrap", "wilcoxon"), "permutation", "holm", 10000, 0)
    assert (
        said.primary_metric,
        said.tests,
        said.primary,
        said.correction,
        said.n_resamples,
        said.seed,
    ) == expected
    row = loaded.summary.set_index(["treatment", "metric"]).loc[("dbsf", "ndcg@10")]
    expected = next(r for r in payload["comparison"] if r["metric"] == "ndcg@10")
    assert row["delta"] == expected["delta"] and row["p_adjusted"] == expected["p_adjusted"]  # every digit
    # a mean summed again from the loaded column (the run took it frame-wide, maybe in another order)
    mean = loaded.per_query["control"]["ndcg@10"].mean()
    assert mean == pytest.approx(payload["means"]["control"]["ndcg@10"], rel=1e-12)
    assert loaded.extras["judged"]["control"]["cutoff"] == 10
    assert "grade" in loaded.hits["dbsf"]


def test_every_view_lists_the_primary_row_first(logged, tmp_path: Path) -> None:
    """One order everywhere, as the README says ("the primary metric first"): the --json rows, the
    logged tables/comparison, the comparison the notebook reads back, the description's table and
    report.html's "Every comparison" table all open with ndcg@10 (the stats table lists it last)."""
    workdir, payload, client, parent, _ = logged
    assert [row["metric"] for row in payload["comparison"]][:2] == ["ndcg@10", "precision@1"]
    logged_table = table(client, parent.info.run_id, L.COMPARISON_TABLE, tmp_path).reset_index()
    assert list(logged_table["metric"][:2]) == ["ndcg@10", "precision@1"]
    loaded = load_comparison(parent.info.run_id, tracking_uri=f"sqlite:///{workdir / 'mlflow.db'}")
    assert list(loaded.summary["metric"][:2]) == ["ndcg@10", "precision@1"]  # the notebook's table
    note = parent.data.tags[L.NOTE_TAG]
    rows = [line.split("|")[2].strip() for line in note.splitlines() if line.startswith("| dbsf ")]
    assert rows[:2] == ["ndcg@10", "precision@1"]
    html = Path(client.download_artifacts(parent.info.run_id, L.REPORT_FILE, str(tmp_path))).read_text()
    full = html[html.index("<h2>Every comparison</h2>") :]
    assert re.findall(r"<tr><td>dbsf</td><td>(?:<b>)?([a-z0-9@]+)", full)[:2] == ["ndcg@10", "precision@1"]


def test_the_readme_documents_every_name_of_the_layout() -> None:
    section = readme_mlflow_section()
    assert "Every metric is logged as computed, every digit" in " ".join(section.split())  # as logged_as()
    names = [
        L.ROLE_TAG,
        L.COMPARISON_TAG,
        L.PRIMARY_METRIC_TAG,
        L.CONFIG_HASH_TAG,
        L.DATASET_HASH_TAG,
        L.CODE_VERSION_TAG,
        L.VERDICT_TAG,
        "abcompare.verdict.<treatment>",
        "abcompare.secondary.<treatment>",
        L.VARIANT_TAG,
        L.RUN_NAME_TAG,
        L.EXPERIMENT_KIND_TAG,
        L.EXPERIMENT_KIND,
        L.VIEW_TAG,
        "viewStateShareKey",
        "dbsf.ndcg_at_10.delta",
        ".ci_low",
        ".ci_high",
        ".p_raw",
        ".p_adjusted",
        ".verdict",
        *(f".{field}" for field in L.NON_INFERIORITY_FIELDS),
        "_vs_control.dbsf.ndcg_at_10.delta",
        "_vs_control.ndcg_at_10.delta",
        *(f".{field}" for field in L.ROBUSTNESS_FIELDS + L.QUERIES_NEEDED_FIELDS),
        "mean.control.ndcg_at_10",
        "tables/comparison",
        "tables/per_query_all_variants",
        "tables/queries",
        "tables/attribution",
        "tables/attribution_per_query",
        "vs_control.ndcg_at_10.attr.new",
        ".attr.lost",
        ".attr.reorder",
        ".attr.ideal",
        "tables/per_query_metrics",
        "tables/grid",
        "tables/tuned_held_out",
        L.HITS_FILE,
        L.RUN_FILE,
        L.ALIGNMENT_FILE,
        L.SUMMARY_FILE,
        L.REPORT_FILE,
        L.RESULT_FILE,
        L.TIMINGS_FILE,
        L.DELTAS_PLOT,
        "plots/paired_<treatment>.svg",
        L.PARETO_PLOT,
        L.DISTRIBUTION_PLOT,
        L.RESOLVED_CONFIG_FILE,
        "tuned.delta",
    ]
    missing = [name for name in names if name not in section]
    assert not missing, missing


def test_abcompare_report_writes_the_latest_comparison_and_refuses_an_unknown_run(
    logged, tmp_path: Path, embedding_cache: Path
) -> None:
    """``abcompare report`` finds the store the main job wrote (here: the current folder's mlflow.db) and
    writes the parent's report.html for the latest comparison; an unknown run id is one located line."""
    from support.cli import invoke_cli

    workdir, payload, client, parent, _ = logged
    output = tmp_path / "shared.html"
    done = invoke_cli(["report", "-o", str(output)], workdir, embedding_cache)
    assert done.returncode == 0, done.stderr[-2000:]
    assert (
        f"wrote {output} for comparison 'rrf-vs-dbsf' (run {parent.info.run_id} in sqlite:///" in done.stderr
    )
    html = output.read_text(encoding="utf-8")
    assert payload["verdicts"]["dbsf"]["sentence"] in html
    assert "Largest wins" in html and "<script" not in html
    logged_html = Path(
        client.download_artifacts(parent.info.run_id, L.REPORT_FILE, str(tmp_path))
    ).read_text()
    assert payload["verdicts"]["dbsf"]["sentence"] in logged_html

    unknown = invoke_cli(["report", "0" * 32, "-o", str(tmp_path / "x.html")], workdir, embedding_cache)
    assert unknown.returncode == 2, unknown.stderr[-2000:]
    assert len(unknown.stderr.strip().splitlines()) == 1 and "Traceback" not in unknown.stderr
    assert unknown.stderr.startswith(f"error: RUN_ID: no run {'0' * 32} in sqlite:///")
    assert not (tmp_path / "x.html").exists()
    control_run = payload["variant_run_ids"]["control"]
    variant = invoke_cli(["report", control_run, "-o", str(tmp_path / "x.html")], workdir, embedding_cache)
    assert variant.returncode == 2 and "is not an abcompare comparison (role: control)" in variant.stderr


# -------------------------------------------------------------------------------- a sweep's additions
SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def logged_sweep(sweep_run):
    """The shipped sweep's parent run, read back with MlflowClient from the store it wrote."""
    workdir, payload, _ = sweep_run
    client = MlflowClient(tracking_uri=f"sqlite:///{workdir / 'mlflow.db'}")
    return payload, client, client.get_run(payload["parent_run_id"])


def table(client: MlflowClient, run_id: str, name: str, folder: Path) -> pd.DataFrame:
    return pd.read_parquet(client.download_artifacts(run_id, L.table_file(name, "parquet"), str(folder)))


def pareto_by_hand(cost: list[float], quality: list[float]) -> set[int]:
    """The candidates no other candidate beats on both axes: as fast or faster and as good or better, and
    strictly one of the two (brute force over every pair)."""
    return {
        i
        for i in range(len(cost))
        if not any(
            cost[j] <= cost[i] and quality[j] >= quality[i] and (cost[j] < cost[i] or quality[j] > quality[i])
            for j in range(len(cost))
        )
    }


def test_a_sweep_parent_logs_the_tuned_figures_and_sentence_the_readme_names(logged_sweep) -> None:
    payload, client, parent = logged_sweep
    names = re.findall(r"`(tuned\.\w+)`", readme_mlflow_section())
    assert names == ["tuned.delta", "tuned.ci_low", "tuned.ci_high", "tuned.p_value"]
    tuned = payload["tuned"]
    assert {name: parent.data.metrics[name] for name in names} == {
        name: logged_as(tuned[name.split(".", 1)[1]]) for name in names
    }
    tags = parent.data.tags
    assert tags[L.TUNED_TAG] == tags[L.VERDICT_TAG] == tuned["sentence"]  # a sweep's verdict: the tuned one
    view = json.loads(client.get_experiment(parent.info.experiment_id).tags[L.VIEW_TAG])
    assert view["selectedColumns"][:2] == ["metrics.`tuned.delta`", "metrics.`tuned.p_value`"]


def test_a_sweep_parent_holds_the_grid_the_held_out_table_and_the_pareto_plot(logged_sweep) -> None:
    payload, client, parent = logged_sweep
    candidates = [row["candidate"] for row in payload["grid"]]
    tables = (L.COMPARISON_TABLE, L.PER_QUERY_ALL_TABLE, L.QUERIES_TABLE, L.GRID_TABLE, L.HELD_OUT_TABLE,
              L.ATTRIBUTION_TABLE, L.ATTRIBUTION_PER_QUERY_TABLE, L.COST_TABLE)  # fmt: skip
    assert files(client, parent.info.run_id) == {
        L.table_file(name, fmt) for name in tables for fmt in ("parquet", "json")
    } | {L.paired_plot(name) for name in candidates} | {
        L.ALIGNMENT_FILE,
        L.SUMMARY_FILE,
        L.REPORT_FILE,
        L.RESULT_FILE,
        L.TIMINGS_FILE,
        L.DELTAS_PLOT,
        L.PARETO_PLOT,
        L.RESOLVED_CONFIG_FILE,
        f"{L.CONFIG_DIR}/fusion_sweep.yaml",
    }
    readme = readme_mlflow_section()
    sweep_files = [L.table_file(L.GRID_TABLE), L.table_file(L.HELD_OUT_TABLE), L.PARETO_PLOT]
    assert [name.removesuffix(".parquet") for name in sweep_files] == [
        "tables/grid",
        "tables/tuned_held_out",
        "plots/quality_vs_latency.svg",
    ]  # the names the README gives, in its words:
    assert all(f"`{name.removesuffix('.parquet')}`" in readme for name in sweep_files)
    views = {entry["path"] for entry in json.loads(parent.data.tags[L.LOGGED_ARTIFACTS_TAG])}
    assert {L.table_file(L.GRID_TABLE, "json"), L.table_file(L.HELD_OUT_TABLE, "json")} <= views


def test_the_logged_grid_is_the_json_grid_best_first(logged_sweep, tmp_path: Path) -> None:
    payload, client, parent = logged_sweep
    grid = table(client, parent.info.run_id, L.GRID_TABLE, tmp_path)
    assert grid.to_dict("records") == payload["grid"]  # every column, every digit, in order
    assert grid["delta"].is_monotonic_decreasing and len(grid) == 24
    assert {"fusion.method", "fusion.weights.bm25", "efficiency.seconds_per_query"} <= set(grid.columns)


def test_the_held_out_table_scores_each_query_by_the_choice_of_its_fold(logged_sweep, tmp_path: Path) -> None:
    payload, client, parent = logged_sweep
    tuned = payload["tuned"]
    held_out = table(client, parent.info.run_id, L.HELD_OUT_TABLE, tmp_path)
    assert list(held_out.columns) == ["fold", "choice", "control", "tuned", "delta"]
    assert held_out.index.name == "query_id" and len(held_out) == payload["n_queries"] == 124
    assert sorted(held_out["fold"].unique()) == list(range(tuned["folds"]))
    assert (held_out["choice"] == [tuned["choices"][f] for f in held_out["fold"]]).all()
    assert (held_out["delta"] == held_out["tuned"] - held_out["control"]).all()
    assert held_out["delta"].mean() == pytest.approx(tuned["delta"], abs=1e-12)
    side_by_side = table(client, parent.info.run_id, L.PER_QUERY_ALL_TABLE, tmp_path)
    metric = tuned["metric"]
    assert (held_out["control"] == side_by_side.loc[held_out.index, f"control/{metric}"]).all()
    chosen = [
        side_by_side.loc[q, f"{c}/{metric}"] for q, c in zip(held_out.index, held_out["choice"], strict=True)
    ]
    assert (held_out["tuned"] == chosen).all()


def test_the_pareto_plot_marks_every_candidate_and_labels_the_front(logged_sweep, tmp_path: Path) -> None:
    """One marker per candidate (its tooltip: name, delta, ms per query), and the labelled points are the
    Pareto front computed by brute force from the logged grid's delta and seconds per query."""
    payload, client, parent = logged_sweep
    svg = ET.parse(client.download_artifacts(parent.info.run_id, L.PARETO_PLOT, str(tmp_path))).getroot()
    grid = payload["grid"]
    assert (
        svg.tag == f"{SVG}svg" and svg.findtext(f"{SVG}title") == "Quality vs latency: 24 candidates, ndcg@10"
    )
    tooltips = sorted(circle.findtext(f"{SVG}title") or "" for circle in svg.iter(f"{SVG}circle"))
    expected = sorted(
        f"{r['candidate']}: {r['delta']:+.4f}, {1000 * r['efficiency.seconds_per_query']:.2f} ms"
        for r in grid
    )
    assert [t for t in tooltips if " ms" in t] == expected
    labels = {text.text for text in svg.iter(f"{SVG}text")} & {row["candidate"] for row in grid}
    # the front is the grid's noise-aware one (stats.cost.on_front, pinned in tests/stats/test_stats_cost.py);
    # every point on it is on the plain front too (beating a point beyond the noise beats it), and when
    # nothing is dominated no front is drawn, so nothing is labelled
    marked = [r for r in grid if r["pareto_front"]]
    plain = pareto_by_hand([r["efficiency.seconds_per_query"] for r in grid], [r["delta"] for r in grid])
    assert {grid[i]["candidate"] for i in plain} <= {r["candidate"] for r in marked}
    drawn = set() if len(marked) == len(grid) else {r["candidate"] for r in marked}
    assert labels == drawn
    assert any("ms per query" in (text.text or "") for text in svg.iter(f"{SVG}text"))
