"""Shared fixtures: where the shared collections live (``../shared`` beside the checkout, also in CI);
hypothesis' profiles: ``ci`` draws the same examples on every run, ``dev`` explores new ones; and the rule
for missing parts (``support.environment``): a CI run checks them all before the first test, and a test
marked ``needs(...)`` requires its parts before it runs."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from hypothesis import Phase, settings
from hypothesis.database import DirectoryBasedExampleDatabase
from support.cli import NO_TIMING, REPO, run_cli
from support.environment import SHARED_DIR, in_ci, missing_parts, require
from support.tiers import mark as mark_tiers

# ``ci``: derandomized (the examples follow from each test's name), no example database, every failure
# printed with the blob that reproduces it (``@reproduce_failure``); the budget is each test's own
# ``max_examples``. ``dev``: random draws, remembered failures replayed first. HYPOTHESIS_PROFILE picks one.
settings.register_profile("ci", derandomize=True, database=None, print_blob=True, deadline=None)
settings.register_profile(
    "dev", derandomize=False, print_blob=True, deadline=None,
    database=DirectoryBasedExampleDatabase(str(REPO / ".hypothesis" / "examples")),  # even where CI=false
    phases=(Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink),
)  # fmt: skip
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if in_ci() else "dev"))

MISSING_PARTS_EXIT = 4  # pytest's own code for a run that could not start as asked


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "needs(*parts): the parts (support.environment.PARTS) the test needs")


def pytest_sessionstart(session: pytest.Session) -> None:
    """With ``CI=true``, stop before the first test when any part is missing, one line per part: CI must
    provide them all (``.ci/run``), so a green run has exercised every one."""
    if in_ci():
        lines = missing_parts()
        if lines:
            print("the CI run lacks parts the suite needs:", *lines, sep="\n", file=sys.stderr)
            pytest.exit(f"{len(lines)} missing part(s), listed above", MISSING_PARTS_EXIT)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tiers ``e2e`` and ``docs`` (``support/tiers.py``); the fast loop deselects both."""
    mark_tiers(items)


@pytest.hookimpl(tryfirst=True)  # before any fixture of the test is set up
def pytest_runtest_setup(item: pytest.Item) -> None:
    """A test marked ``needs("ray", ...)`` runs only with those parts (skip, or fail in CI, naming them)."""
    for mark in item.iter_markers("needs"):
        for key in mark.args:
            require(key)


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """The shared folder with real collections and trec_eval's conformance data; skip when absent (fail in
    CI)."""
    require("shared_data")
    return SHARED_DIR


@pytest.fixture(scope="session")
def datasets_dir(shared_dir: Path) -> Path:
    return shared_dir / "datasets"


@pytest.fixture(scope="session")
def trec_conformance_dir(shared_dir: Path) -> Path:
    return shared_dir / "conformance" / "trec_eval"


# ------------------------------------------------------------------------- runs the whole suite shares
@pytest.fixture(scope="session")
def embedding_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One embedding cache for the whole session (every CLI run and the execution backends' tests), so the
    example corpus is encoded once per session."""
    return tmp_path_factory.mktemp("embedding-cache")


@pytest.fixture(scope="session")
def example_run(tmp_path_factory: pytest.TempPathFactory, embedding_cache: Path):
    """`abcompare run configs/rrf_vs_dbsf.yaml --json` in a fresh folder with the default SQLite store."""
    workdir = tmp_path_factory.mktemp("example-run")
    result = run_cli(["run", str(REPO / "configs" / "rrf_vs_dbsf.yaml"), "--json"], workdir, embedding_cache)
    return workdir, result


@pytest.fixture(scope="session")
def sweep_run(tmp_path_factory: pytest.TempPathFactory, embedding_cache: Path):
    """`abcompare run configs/fusion_sweep.yaml --json` as shipped (B = 10,000, the README's figures), once
    per session: its folder (with ``mlflow.db``), the parsed JSON and stderr."""
    workdir = tmp_path_factory.mktemp("sweep")
    result = run_cli(["run", str(REPO / "configs" / "fusion_sweep.yaml"), "--json"], workdir, embedding_cache)
    assert result.returncode == 0, result.stderr[-3000:]
    return workdir, json.loads(result.stdout), result.stderr


@pytest.fixture(scope="session")
def shipped_run(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, embedding_cache: Path
):
    """``shipped_run("rerank")``: `abcompare run configs/rerank.yaml --json` as shipped, in a fresh folder
    with the default SQLite store, once per session per config (``rrf_vs_dbsf`` is the ``example_run``):
    its folder and the finished process. Every test of a shipped config's verdict shares its one run.

    Only the latency timing pass is off (``efficiency.repeats=0``): no test of these runs reads their cost,
    and no quality number depends on it (the ``example_run``, whose cost is tested, keeps it)."""
    runs: dict[str, tuple[Path, object]] = {}

    def run(name: str):
        if name == "rrf_vs_dbsf":
            return request.getfixturevalue("example_run")
        if name not in runs:
            workdir = tmp_path_factory.mktemp(name)
            args = ["run", str(REPO / "configs" / f"{name}.yaml"), "--json", *NO_TIMING]
            runs[name] = (workdir, run_cli(args, workdir, embedding_cache))
        return runs[name]

    return run
