"""A comparison across collections in MLflow, read back from a real SQLite store: the top run (the pooled
test, ``tables/pooled``, ``tables/per_collection``, the forest, the description, ``report.html``), each
collection's comparison nested under it laid out exactly as a single-collection comparison,
``load_comparison`` on both levels, ``abcompare report`` on the top run, and nothing left RUNNING when a
collection fails half-way.

The comparison is a real one (BM25 against BM25 with another k1 on the bundled example, two query subsets),
run once by ``run_comparison`` with its writers forked, as ``abcompare run`` does. The faults replay its
collections through the very calls the runner makes (``tracking_session``, ``collection(name)``,
``log_variant``, ``log_comparison``, ``experiment``), failing one half-way.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest
from mlflow import MlflowClient
from support.cli import REPO, invoke_cli

from abcompare.config import load_config
from abcompare.data.experiment import load_dataset_for_experiment
from abcompare.outcome.pooled_sentences import pooled_sentence
from abcompare.outcome.results import Comparison, ComparisonResult
from abcompare.runner import run_comparison
from abcompare.tracking import layout as L
from abcompare.tracking.artifacts import comparison_files, variant_files
from abcompare.tracking.lifecycle import Part, tracking_session
from abcompare.tracking.reader import (
    LoadedCollection,
    LoadedComparison,
    load_comparison,
    logged_markdown,
    logged_report,
)

CONFIG = """\
name: two-hr
description: BM25 against a looser BM25 on two query sets.
datasets:
  - name: hr-docs
    max_queries: 20
  - name: hr-small
    path: {example}
    max_queries: 12
control:
  retrievers:
    bm25: {{}}
treatments:
  loose:
    retrievers:
      bm25: {{k1: 0.9}}
efficiency: {{repeats: 0}}
significance: {{n_resamples: 2000}}
tracking:
  enabled: false
  experiment: collections
"""
TREATMENT, PRIMARY = "loose", "ndcg@10"


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory):
    """The whole comparison as ``abcompare run`` runs it (``run_comparison`` with the forked MLflow writers),
    tracked to a SQLite store of its own."""
    folder = tmp_path_factory.mktemp("collections")
    path = folder / "two.yaml"
    path.write_text(CONFIG.format(example=REPO / "abcompare" / "examples" / "hr_docs"))
    config = load_config(path)
    uri = f"sqlite:///{folder / 'mlflow.db'}"
    result = run_comparison(
        tracked(config, uri, "collections", folder), config_path=path, background_tracking=True
    )
    assert isinstance(result, ComparisonResult) and result.pooled is not None
    return path, uri, folder, result


@pytest.fixture(scope="module")
def compared(ran):
    """The whole config, each collection's comparison, the pooled tables (``pooled_test``'s) and their
    settings."""
    path, _, _, result = ran
    settings = (result.pooled_settings, result.family)
    return path, result.config, result.collections, result.pooled, result.per_collection, settings


def tracked(config, uri: str, experiment: str, folder: Path):
    """The config with tracking on, to ``uri`` (artifacts under ``folder``)."""
    tracking = config.tracking.model_copy(
        update={"enabled": True, "uri": uri, "experiment": experiment, "artifact_location": folder.as_uri()}
    )
    return config.model_copy(update={"tracking": tracking})


def log_collection(result: Comparison, logger, scratch: Path, *, fail_after=None) -> None:
    """One collection's comparison logged as the runner logs it (``fail_after``: raise that exception after
    the control's run, as a comparison failing half-way would)."""
    config = result.config
    for name, variant in config.variants().items():
        outcome = result.variants[name]
        settings = variant.model_dump(mode="json", exclude_none=True)
        logger.log_variant(outcome, settings, variant_files(config, outcome, scratch))
        if fail_after is not None:
            raise fail_after
    logger.log_comparison(result, comparison_files(result, logger.part_of()))


def log_all(compared, uri: str, experiment: str, folder: Path, *, fail_in=None, error=None, background=False):
    """The whole comparison logged as the runner logs it, in one tracking session; ``fail_in``: the
    collection that raises ``error`` half-way. Returns the result with where it was recorded."""
    path, config, results, pooled, per_collection, (settings, family) = compared
    config = tracked(config, uri, experiment, folder)
    collections = {
        name: replace(r, config=tracked(r.config, uri, experiment, folder)) for name, r in results.items()
    }
    scratch = folder / "scratch"
    parts = {
        name: Part(r.config, load_dataset_for_experiment(r.config.dataset), scratch / name)
        for name, r in collections.items()
    }
    for part in parts.values():
        part.scratch.mkdir(parents=True, exist_ok=True)
    with tracking_session(config, path, parts, scratch, background=background) as log:
        for name, r in collections.items():
            failing = error if name == fail_in else None
            with log.collection(name) as logger:
                log_collection(r, logger, parts[name].scratch, fail_after=failing)
        result = ComparisonResult(
            config=config, primary_metric=PRIMARY, collections=collections, pooled=pooled,
            per_collection=per_collection, weighting=config.significance.pooling, pooled_settings=settings,
            family=family,
        )  # fmt: skip
        log.experiment(result)
    return replace(result, where=log.where)


@pytest.fixture(scope="module")
def logged(ran):
    _, uri, folder, result = ran
    client = MlflowClient(tracking_uri=uri)
    return uri, folder, result, client, client.get_run(result.parent_run_id)


def files(client: MlflowClient, run_id: str, folder: str | None = None) -> set[str]:
    """Every file path of a run's artifacts (folders walked)."""
    found = set()
    for item in client.list_artifacts(run_id, folder):
        found |= files(client, run_id, item.path) if item.is_dir else {item.path}
    return found


def children(client: MlflowClient, run) -> list:
    return client.search_runs(
        [run.info.experiment_id], filter_string=f"tags.`{L.PARENT_RUN_TAG}` = '{run.info.run_id}'"
    )


def test_the_top_run_holds_the_pooled_comparison(logged, compared) -> None:
    _, _, result, client, top = logged
    *_, pooled, per_collection, (settings, _) = compared
    tags, metrics, params = top.data.tags, top.data.metrics, top.data.params
    assert tags[L.ROLE_TAG] == L.ROLE_COLLECTIONS and tags[L.COMPARISON_TAG] == "two-hr"
    assert tags[L.PRIMARY_METRIC_TAG] == PRIMARY
    assert top.info.status == "FINISHED" and L.PARENT_RUN_TAG not in tags
    assert params["collections"] == "hr-docs,hr-small"
    assert params["significance.pooling"] == "collection" and params["datasets.hr-small.max_queries"] == "12"
    row = pooled.set_index("treatment").loc[TREATMENT]
    for field in ("delta", "ci_low", "ci_high", "p_value", "p_adjusted"):
        assert metrics[f"_pooled.loose.ndcg_at_10.{field}"] == float(row[field])  # as computed
    assert metrics["_pooled.loose.ndcg_at_10.verdict"] == {"better": 1, "worse": -1}.get(row["verdict"], 0)
    assert metrics["pooled.loose.ndcg_at_10.i2"] == float(row["i2"])
    assert metrics["pooled.loose.ndcg_at_10.meta_effect"] == float(row["meta_effect"])
    assert metrics["n_queries"] == 32.0  # 20 + 12
    # each collection's figure on the top run is the delta its own comparison logged on its own run
    for name, run_id in result.collection_run_ids.items():
        own = client.get_run(run_id).data.metrics["_vs_control.loose.ndcg_at_10.delta"]
        assert metrics[f"collection.{name}.loose.ndcg_at_10.delta"] == own
        assert (
            metrics[f"collection.{name}.loose.ndcg_at_10.n_queries"] == {"hr-docs": 20, "hr-small": 12}[name]
        )
    # equal weight per collection: the pooled delta is the mean of the two collections' deltas
    deltas = [metrics[f"collection.{n}.loose.ndcg_at_10.delta"] for n in ("hr-docs", "hr-small")]
    assert metrics["_pooled.loose.ndcg_at_10.delta"] == pytest.approx(sum(deltas) / 2, abs=1e-12)
    sentence = pooled_sentence(pooled, per_collection, settings, TREATMENT)
    assert tags[L.VERDICT_TAG] == sentence == tags[L.verdict_tag(TREATMENT)]
    note = tags[L.NOTE_TAG]
    verdict, rest = sentence.split("; ", 1)  # the verdict in bold, as a comparison's description sets it
    assert f"- **{verdict}**; {rest}" in note and "| hr-small" in note and "| hr-docs" in note
    inputs = [i.dataset.name for i in top.inputs.dataset_inputs]  # each collection's query set, in order
    assert inputs == list(result.collections)
    assert files(client, top.info.run_id) >= {
        "tables/pooled.parquet", "tables/pooled.json", "tables/per_collection.parquet",
        "tables/per_collection.json", L.POOLED_FOREST_PLOT, L.REPORT_FILE, L.RESULT_FILE, L.SUMMARY_FILE,
        L.RESOLVED_CONFIG_FILE, "config/two.yaml", L.TIMINGS_FILE,
    }  # fmt: skip
    # where it was recorded, for the console: the top run, each collection's, the link, the runs view
    assert result.recorded[0].startswith("MLflow: experiment collections, run two-hr ")
    assert top.info.run_id in result.recorded[0]
    assert result.recorded[1:3] == [f"  {n}: {i}" for n, i in result.collection_run_ids.items()]
    assert result.recorded[3].endswith(f"/runs/{top.info.run_id}?workflowType=machine_learning")
    assert result.ui_hint.endswith("viewStateShareKey=abcompare&workflowType=machine_learning")
    view = json.loads(client.get_experiment(top.info.experiment_id).tags[L.VIEW_TAG])
    assert view["selectedColumns"][:3] == [
        "metrics.`_pooled.loose.ndcg_at_10.delta`",
        "metrics.`_pooled.loose.ndcg_at_10.p_adjusted`",
        "metrics.`_vs_control.loose.ndcg_at_10.delta`",  # then each collection's, as a single comparison's
    ]
    shown = json.loads(tags[L.LOGGED_ARTIFACTS_TAG])
    assert {"path": "tables/pooled.json", "type": "table"} in shown


def test_each_collection_is_nested_laid_out_as_a_single_comparison(logged, compared, tmp_path) -> None:
    uri, folder, result, client, top = logged
    nested = {run.data.tags[L.COLLECTION_TAG]: run for run in children(client, top)}
    assert list(result.collection_run_ids) == ["hr-docs", "hr-small"]
    assert {n: r.info.run_id for n, r in nested.items()} == result.collection_run_ids
    for name, run in nested.items():
        assert run.data.tags[L.ROLE_TAG] == L.ROLE_COMPARISON and run.info.status == "FINISHED"
        assert name in run.info.run_name
        variants = {r.data.tags[L.VARIANT_TAG]: r for r in children(client, run)}
        assert set(variants) == {"control", TREATMENT}
        assert all(r.info.status == "FINISHED" for r in variants.values())
    # the same collection compared on its own (``dataset:``): the same files, metric keys, params, tag keys
    # and quality figures (the timed efficiency.* differ from run to run)
    config = compared[1]
    own = tracked(config.collections()["hr-small"], uri, "alone", tmp_path)
    assert own.datasets is None and own.dataset.max_queries == 12
    single = client.get_run(run_comparison(own, config_path=compared[0]).parent_run_id)
    inside = nested["hr-small"]
    assert files(client, inside.info.run_id) == files(client, single.info.run_id)
    assert set(inside.data.metrics) == set(single.data.metrics)
    assert inside.data.params == single.data.params
    assert set(inside.data.tags) - set(single.data.tags) == {L.PARENT_RUN_TAG, L.COLLECTION_TAG}
    assert set(single.data.tags) <= set(inside.data.tags)
    quality = {k: v for k, v in single.data.metrics.items() if "efficiency" not in k}
    assert {k: inside.data.metrics[k] for k in quality} == quality


def test_load_comparison_reads_both_levels(logged, compared) -> None:
    uri, _, result, _, top = logged
    *_, pooled, per_collection, (settings, family) = compared
    loaded = load_comparison(top.info.run_id, tracking_uri=uri, with_hits=False)
    assert isinstance(loaded, LoadedComparison) and loaded.held == {}  # its collections are nested runs
    assert (loaded.pooled_settings, loaded.family) == (settings, family)  # the typed settings read back
    assert loaded.collections == ["hr-docs", "hr-small"] and loaded.treatments == [TREATMENT]
    pd.testing.assert_frame_equal(loaded.pooled, pooled.reset_index(drop=True), check_like=False)
    pd.testing.assert_frame_equal(loaded.per_collection, per_collection.reset_index(drop=True))
    assert set(loaded.runs["run_id"]) == set(result.collection_run_ids.values())
    small = loaded.collection("hr-small")
    assert (
        isinstance(small, LoadedCollection) and small.parent_run_id == result.collection_run_ids["hr-small"]
    )
    expected = result.collections["hr-small"].per_query[TREATMENT][PRIMARY]
    assert small.per_query[TREATMENT][PRIMARY].tolist() == expected.tolist()
    assert len(small.queries) == 12
    paired = loaded.paired_by_collection(TREATMENT, PRIMARY)
    assert len(paired) == 32 and set(paired.index.get_level_values("collection")) == {"hr-docs", "hr-small"}
    by_collection = paired.groupby(level="collection")["delta"].mean()  # each collection's mean delta
    logged_deltas = per_collection.set_index("collection")["delta"]
    assert by_collection.to_dict() == pytest.approx(logged_deltas.to_dict(), abs=1e-12)
    with pytest.raises(KeyError, match="hr-docs, hr-small"):
        loaded.collection("cranfield")
    one = load_comparison(result.collection_run_ids["hr-docs"], tracking_uri=uri, with_hits=False)
    # one collection's own run is an experiment of one collection, its comparison's fields read through
    assert isinstance(one, LoadedComparison) and one.collections == ["hr-docs"] and one.pooled is None
    assert len(one.per_query["control"]) == 20 and one.collection("hr-docs").summary is one.summary
    assert len(one.paired_by_collection(TREATMENT, PRIMARY)) == 20
    # the latest comparison of the experiment is the whole one, never a collection's nested run
    latest = load_comparison(tracking_uri=uri, experiment="collections", with_hits=False)
    assert latest.pooled is not None and latest.parent_run_id == top.info.run_id


def test_the_top_report_links_each_collection_run(logged, compared) -> None:
    uri, _, result, client, top = logged
    *_, pooled, per_collection, (settings, _) = compared
    html, loaded = logged_report(top.info.run_id, tracking_uri=uri)
    logged_html = Path(client.download_artifacts(top.info.run_id, L.REPORT_FILE)).read_text()
    for page in (html, logged_html):
        assert pooled_sentence(pooled, per_collection, settings, TREATMENT).replace("'", "&#x27;") in page
        assert page.count("<svg") == 1 and "<script" not in page
        for name, run_id in result.collection_run_ids.items():
            url = f"#/experiments/{top.info.experiment_id}/runs/{run_id}?workflowType=machine_learning"
            assert f'{url}">{name}</a>' in page
    assert f"run {top.info.run_id}" in html  # the footer names where it was read from


def test_each_collection_report_leads_back_to_the_top_run(logged) -> None:
    """A collection's report.html (logged, and rebuilt from MLflow as ``abcompare report`` does) links the
    comparison across collections it is part of, by the top run's name, to the top run's page."""
    uri, _, result, client, top = logged
    url = f"#/experiments/{top.info.experiment_id}/runs/{top.info.run_id}?workflowType=machine_learning"
    for run_id in result.collection_run_ids.values():
        logged_html = Path(client.download_artifacts(run_id, L.REPORT_FILE)).read_text()
        html, _ = logged_report(run_id, tracking_uri=uri)
        for page in (logged_html, html):
            assert f'{url}">{top.info.run_name}</a>: the comparison across collections' in page


def test_abcompare_report_on_the_top_run(logged, tmp_path, embedding_cache) -> None:
    uri, _, result, _, top = logged
    output = tmp_path / "top.html"
    args = ["report", top.info.run_id, "--tracking-uri", uri, "-o", str(output)]
    done = invoke_cli(args, tmp_path, embedding_cache)
    assert done.returncode == 0, done.stderr
    assert "two-hr" in done.stderr and top.info.run_id in done.stderr
    page = output.read_text()
    assert "Per collection" in page and result.collection_run_ids["hr-small"] in page
    markdown, _ = logged_markdown(top.info.run_id, tracking_uri=uri)  # what --format markdown prints
    assert markdown == top.data.tags[L.NOTE_TAG]
    assert "| hr-small" in markdown and "Verdict loose across 2 collections" in markdown


@pytest.mark.parametrize(
    ("error", "status", "background"),
    [(RuntimeError("disk on fire"), "FAILED", True), (KeyboardInterrupt(), "KILLED", False)],
)
def test_a_collection_failing_half_way_leaves_nothing_running(
    logged, compared, error, status, background
) -> None:
    uri, folder, *_ = logged
    experiment = f"faults-{status}"
    with pytest.raises(type(error)):
        log_all(compared, uri, experiment, folder, fail_in="hr-small", error=error, background=background)
    client = MlflowClient(tracking_uri=uri)
    runs = client.search_runs([client.get_experiment_by_name(experiment).experiment_id])
    assert not [r for r in runs if r.info.status == "RUNNING"]
    parents = {
        run.data.tags.get(L.COLLECTION_TAG): run for run in runs if L.VARIANT_TAG not in run.data.tags
    }  # the top run (no collection) and each collection's comparison
    top = parents[None]
    assert top.data.tags[L.ROLE_TAG] == L.ROLE_COLLECTIONS and top.info.status == status
    finished, failing = parents["hr-docs"], parents["hr-small"]
    assert finished.info.status == "FINISHED" and finished.data.tags[L.PARENT_RUN_TAG] == top.info.run_id
    assert [r.info.status for r in children(client, finished)] == ["FINISHED", "FINISHED"]
    assert failing.info.status == status and failing.data.tags[L.PARENT_RUN_TAG] == top.info.run_id
    assert [r.info.status for r in children(client, failing)] == [status]  # the control ran, then it failed
    assert len(runs) == 1 + 3 + 2


FAILING = """\
name: half-way
datasets:
  - {{name: hr-docs, level: document, max_queries: 20}}
  - {{name: hr-small, path: {example}, level: document, max_queries: 12}}
control:
  run: {{path: {control}}}
treatments:
  other:
    run: {{python: flaky}}
significance: {{n_resamples: 500}}
efficiency: {{repeats: 0}}
tracking: {{uri: "{uri}", experiment: half-way, artifact_location: "{artifacts}"}}
"""


def test_the_runner_leaves_nothing_running_when_a_collection_fails_half_way(tmp_path) -> None:
    """Through ``run_comparison``: the second collection's treatment (a Python retriever) fails after its
    control was logged; the first collection stays FINISHED, the second and the top run are FAILED."""
    from abcompare.data.runs import hits_from_run_frame, read_run

    production = REPO / "configs" / "runs" / "hr_docs_production.trec"
    hits = hits_from_run_frame(read_run(production))

    def flaky(queries: pd.DataFrame):
        if len(queries) != 20:
            raise RuntimeError("the index is offline")
        return {query: hits[query] for query in queries["query_id"]}

    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    path = tmp_path / "half.yaml"
    example = REPO / "abcompare" / "examples" / "hr_docs"
    path.write_text(FAILING.format(example=example, control=production, uri=uri, artifacts=tmp_path.as_uri()))
    with pytest.raises(Exception, match="the index is offline"):
        run_comparison(load_config(path), config_path=path, retrievers={"flaky": flaky})
    client = MlflowClient(tracking_uri=uri)
    runs = client.search_runs([client.get_experiment_by_name("half-way").experiment_id])
    assert not [r for r in runs if r.info.status == "RUNNING"]
    parents = {r.data.tags.get(L.COLLECTION_TAG): r for r in runs if L.VARIANT_TAG not in r.data.tags}
    assert parents[None].info.status == "FAILED"
    assert parents["hr-docs"].info.status == "FINISHED"
    assert sorted(r.info.status for r in children(client, parents["hr-docs"])) == ["FINISHED", "FINISHED"]
    assert parents["hr-small"].info.status == "FAILED"
    assert [r.info.status for r in children(client, parents["hr-small"])] == ["FAILED"]  # its control
