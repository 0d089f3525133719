"""Shared fixtures: where the shared collections live (``../shared`` beside the checkout, also in CI);
hypothesis' profiles: ``ci`` draws the same examples on every run, ``dev`` explores new ones; and the rule
for missing parts (``support.environment``): a CI run checks them all before the first test, and a test
marked ``needs(...)`` requires its parts before it runs."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import Phase, settings
from hypothesis.database import DirectoryBasedExampleDatabase
from support.caches import suite_cache_dir
from support.cli import REPO
from support.comparisons import Comparisons, session_comparisons
from support.environment import SHARED_DIR, in_ci, missing_parts, require
from support.groups import mark as mark_groups
from support.ray_local import shared_ray, stop_shared_ray, stop_when_leaving
from support.servers import start_mlflow_server
from support.tiers import mark as mark_tiers
from support.workers import shared_folder

# The suite keeps bytecode (some machines set PYTHONDONTWRITEBYTECODE): pytest's rewritten test modules and,
# in every process the tests start (the CLI, servers, Ray workers), abcompare's own modules compile once per
# checkout instead of on every start (about half a second per process).
sys.dont_write_bytecode = False
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

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


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tiers ``e2e`` and ``docs`` (``support/tiers.py``), which the fast loop deselects; the xdist
    groups (``support/groups.py``), which decide what runs on one worker and in what order."""
    mark_tiers(items)
    mark_groups(items)


@pytest.hookimpl(tryfirst=True)  # before any fixture of the test is set up
def pytest_runtest_setup(item: pytest.Item) -> None:
    """A test marked ``needs("ray", ...)`` runs only with those parts (skip, or fail in CI, naming them)."""
    for mark in item.iter_markers("needs"):
        for key in mark.args:
            require(key)


@pytest.hookimpl(trylast=True)  # after the test's own fixtures are torn down
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """The shared in-process Ray (``ray_in_process``) is stopped when the worker moves to another group."""
    stop_when_leaving(item, nextitem)


def pytest_sessionfinish(session: pytest.Session) -> None:
    stop_shared_ray()


@pytest.fixture
def ray_in_process():
    """``ray.init(address="local", num_cpus=2)`` in the test process, on the loopback interface, with its
    own short temp folder: started by the first test that asks and shared by the next ones, until the
    worker moves to another xdist group (``support.ray_local``)."""
    return shared_ray()


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
def embedding_cache() -> Path:
    """The suite's embedding cache, kept between sessions so the example corpus is encoded once per machine,
    not once per session (the runs on the real collections use it too): ``$ABCOMPARE_TEST_CACHE_DIR``,
    else abcompare's own cache (``$ABCOMPARE_CACHE_DIR`` or ``~/.cache/abcompare``). Keeping it is safe
    because an entry is content-addressed: keyed by the model's identity (its files' sha256, backend,
    pooling, normalisation, token limit and the encoding software's versions) and the sha256 of the very
    text encoded (a document prefix included), so no change of model, corpus or setting can be served an
    old vector. The tests of the cache itself use their own temporary folders. For a cold-cache run, point
    the variable at an empty folder."""
    return suite_cache_dir()


@pytest.fixture(scope="session")
def tracking_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The session's one `mlflow server` on SQLite (its URL): the store of every comparison asked for with
    ``store="server"`` (the browser's and the tracking-server test's), started on first use."""
    server = start_mlflow_server(tmp_path_factory.mktemp("session-mlflow-server"))
    yield server.url
    server.stop()


@pytest.fixture(scope="session")
def comparison(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, embedding_cache: Path
) -> Comparisons:
    """``comparison(config, *overrides, timed=False, store="sqlite", as_json=True)``: `abcompare run` of a
    config (a shipped one by name, e.g. ``"rrf_vs_dbsf"``, or a path) with ``--set`` overrides, run once per
    session per distinct command (support.comparisons): every test that asks for the same one reads the
    same folder, store, stdout/stderr and parsed JSON (``.payload``). Untimed unless ``timed=True`` (a test
    reading a run's cost asks for it); ``store="server"`` logs to the session's ``tracking_server``.

    A shared run is read, never changed. Tests that need a run of their own keep it, because what they
    check is the run itself or they change its store: the tracking-URI-from-the-environment test (its
    environment is the point), the faults (a killed encoder, a dead server, a full disk, SIGINT/SIGKILL:
    tests/runner/test_runner_faults.py, tests/execution/test_execution_faults.py' killed runs), the four
    concurrent main jobs on PostgreSQL (the race is the point), the installed wheel's run (another
    install), the error paths (a run that stops before or at its first stage) and every test writing its
    own config.

    Under xdist the two workers share these runs (``support.comparisons``): a comparison runs once per
    session, on whichever worker asks first."""
    return session_comparisons(
        tmp_path_factory,
        embedding_cache,
        lambda: request.getfixturevalue("tracking_server"),
        shared_folder(tmp_path_factory),
    )


@pytest.fixture(scope="session")
def example_run(comparison: Comparisons):
    """The main job, `abcompare run configs/rrf_vs_dbsf.yaml --json` as shipped (timed: its cost is read)
    in a fresh folder with the default SQLite store: its folder and the finished process."""
    run = comparison("rrf_vs_dbsf", timed=True)
    return run.workdir, run.process


@pytest.fixture(scope="session")
def sweep_run(comparison: Comparisons):
    """`abcompare run configs/fusion_sweep.yaml --json` as shipped (B = 10,000, the README's figures; timed:
    the grid's cost is read): its folder (with ``mlflow.db``), the parsed JSON and stderr."""
    run = comparison("fusion_sweep", timed=True)
    return run.workdir, run.payload, run.stderr


@pytest.fixture(scope="session")
def shipped_run(comparison: Comparisons):
    """``shipped_run("rerank")``: `abcompare run configs/rerank.yaml --json` as shipped, in a fresh folder
    with the default SQLite store (``rrf_vs_dbsf`` is the ``example_run``): its folder and the finished
    process. Every test of a shipped config's verdict shares its one run. Untimed (no test of these runs
    reads their cost, and no quality number depends on the timing pass), except the main job's."""

    def run(name: str):
        found = comparison(name, timed=name == "rrf_vs_dbsf")
        return found.workdir, found.process

    return run
