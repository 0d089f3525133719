"""A sweep end to end: 24 fusion settings run as treatments, the grid table, and the tuned comparison."""

from __future__ import annotations

import pytest
from mlflow import MlflowClient
from support.cli import REPO, invoke_cli
from support.corrections import holm_by_hand, retested
from support.readme import as_printed, doc_section, readme_match

from abcompare import load_comparison

SWEEP = str(REPO / "configs" / "fusion_sweep.yaml")


def readme_sweep() -> str:
    return doc_section("docs/sweeps.md", "Sweeps: many settings, and a verdict that survives the choosing")


def best_point_claim() -> dict[str, str]:
    """The README's best grid point: its adjusted p under max-T and under Holm."""
    found = readme_match(
        r"on the example: adjusted p (?P<maxt>[0-9.]+) under max-T, (?P<holm>[0-9.]+) under Holm, for the "
        r"best point",
        readme_sweep(),
    )
    return found.groupdict()


def tuned_claim() -> dict[str, str]:
    """The console's tuned sentence the README quotes, whole, and its figures by name."""
    found = readme_match(
        r"`(?P<sentence>Tuning over this grid of (?P<n>\d+) settings changes (?P<delta>[+-][0-9.]+) "
        r"ndcg@10 on unseen queries \[(?P<low>-?[0-9.]+), (?P<high>-?[0-9.]+)\], p = (?P<p>[0-9.]+) "
        r"\((?P<folds>\d+)-fold cross-validation; [^)]*\); the setting chosen most often is "
        r"(?P<chosen>\S+) \((?P<times>\d+) of (?P=folds) folds\)\.)`",
        readme_sweep(),
    )
    return found.groupdict()


def test_the_grid_lists_every_candidate_best_first_with_its_settings_and_cost(sweep_run):
    _, payload, _ = sweep_run
    grid = payload["grid"]
    assert len(grid) == 24
    assert [row["delta"] for row in grid] == sorted((row["delta"] for row in grid), reverse=True)
    methods = {row["fusion.method"] for row in grid}
    assert methods == {"rrf", "rsf", "dbsf", "dbsf-3sigma"}
    assert {row["fusion.weights.bm25"] for row in grid} == {0.25, 0.5, 1.0, 1.5, 2.0, 4.0}
    assert all(row["metric"] == "ndcg@10" and row["efficiency.seconds_per_query"] > 0 for row in grid)
    same_as_control = next(r for r in grid if r["fusion.method"] == "rrf" and r["fusion.weights.bm25"] == 1.0)
    assert same_as_control["delta"] == 0.0  # the control's own setting is a candidate too
    rows = {(r["treatment"], r["metric"]): r for r in payload["comparison"]}
    for row in grid:
        assert row["p_adjusted"] == rows[(row["candidate"], "ndcg@10")]["p_adjusted"]


def test_the_tuned_comparison_reports_the_choice_made_without_the_queries_it_scores(sweep_run):
    _, payload, _ = sweep_run
    tuned = payload["tuned"]
    assert tuned["metric"] == "ndcg@10" and tuned["folds"] == 5 and len(tuned["choices"]) == 5
    assert tuned["ci_low"] <= tuned["delta"] <= tuned["ci_high"]
    assert tuned["most_chosen"] in {row["candidate"] for row in payload["grid"]}
    assert tuned["choices"].count(tuned["most_chosen"]) == max(map(tuned["choices"].count, tuned["choices"]))


def test_the_tuned_comparison_gives_the_readme_sentence_and_figures(sweep_run):
    """The README quotes the console's sentence for the shipped sweep: it is this run's, and so are its
    figures, to the digits printed."""
    _, payload, _ = sweep_run
    claim, tuned = tuned_claim(), payload["tuned"]
    assert tuned["sentence"] == claim["sentence"]
    shown = {
        "n": str(len(payload["grid"])),
        "delta": as_printed(tuned["delta"], claim["delta"]),
        "low": as_printed(tuned["ci_low"], claim["low"]),
        "high": as_printed(tuned["ci_high"], claim["high"]),
        "p": as_printed(tuned["p_value"], claim["p"]),
        "folds": str(tuned["folds"]),
        "chosen": tuned["most_chosen"],
        "times": str(tuned["choices"].count(tuned["most_chosen"])),
    }
    assert shown == {key: claim[key] for key in shown}


def test_the_best_point_has_the_readme_adjusted_p_under_max_t_and_under_holm(sweep_run):
    """max-T is the shipped correction; Holm re-tests the same logged per-query tables (no second sweep),
    and its adjusted p is also checked against Holm's procedure by hand over the 24 candidates' raw p."""
    workdir, payload, _ = sweep_run
    claim = best_point_claim()
    best = payload["grid"][0]
    assert best["candidate"] == max(payload["grid"], key=lambda row: row["delta"])["candidate"]
    assert as_printed(best["p_adjusted"], claim["maxt"]) == claim["maxt"]
    logged = load_comparison(payload["parent_run_id"], tracking_uri=f"sqlite:///{workdir / 'mlflow.db'}")
    assert logged.summary.attrs["correction"] == "maxt"
    holm = retested(logged, "holm")
    primary = holm[holm["role"] == "primary"].set_index("treatment")
    assert len(primary) == 24 and (primary["family_size"] == 24).all()
    raw = {row["treatment"]: row["p_primary"] for row in payload["comparison"] if row["role"] == "primary"}
    assert primary["p_primary"].to_dict() == raw  # the same sign flips: only the correction differs
    by_hand = dict(zip(raw, holm_by_hand(list(raw.values())), strict=True))
    assert primary["p_adjusted"].to_dict() == pytest.approx(by_hand, rel=1e-12)
    assert as_printed(primary.loc[best["candidate"], "p_adjusted"], claim["holm"]) == claim["holm"]


def test_every_grid_point_is_a_child_run_with_its_settings_as_params(sweep_run):
    workdir, payload, _ = sweep_run
    client = MlflowClient(tracking_uri=f"sqlite:///{workdir / 'mlflow.db'}")
    children = {name: client.get_run(run_id) for name, run_id in payload["variant_run_ids"].items()}
    assert len(children) == 25
    point = children["fusion.method=dbsf,fusion.weights.bm25=4.0"]
    assert point.data.params["fusion.method"] == "dbsf"
    assert point.data.params["fusion.weights.bm25"] == "4.0"
    assert point.data.metrics["efficiency.seconds_per_query"] > 0
    assert all(run.info.status == "FINISHED" for run in children.values())


def test_the_console_shows_the_grid_and_the_tuned_sentence(tmp_path, embedding_cache):
    args = ["run", SWEEP, "--set", "significance.n_resamples=200", "--set", "tracking.enabled=false"]
    result = invoke_cli(args, tmp_path, embedding_cache)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "sweep: 24 candidates vs control on ndcg@10, best first" in result.stdout
    opening = tuned_claim()["sentence"].split(" [")[0]  # the interval and p that follow depend on B
    assert opening in " ".join(result.stdout.split())
    assert "sweep: 24 grid points -> 24 candidates" in result.stderr  # said before any work starts
