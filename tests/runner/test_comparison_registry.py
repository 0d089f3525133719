"""The session's registry of comparisons (tests/support/comparisons.py): a command runs once, every later
asker reads that same run, and only the same command line is the same comparison. Real `abcompare`
processes on commands that finish at once (a listing, a config that does not exist)."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.cli import REPO
from support.comparisons import Comparisons, config_path, session_comparisons


@pytest.fixture
def registry(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path):
    """A registry of its own (not the session's), whose tracking server is a URL nothing listens on: the
    commands here stop before they log anything."""
    return session_comparisons(tmp_path_factory, tmp_path / "cache", lambda: "http://127.0.0.1:9")


def test_a_command_runs_once_and_every_asker_reads_the_same_run(registry) -> None:
    first = registry.command(["examples"])
    assert first.returncode == 0 and "rrf_vs_dbsf" in first.stdout, first.stderr[-2000:]
    assert registry.command(["examples"]) is first and len(registry) == 1
    laid_out = registry.command(["examples"], checkout_layout=True)  # another folder: another run
    assert laid_out is not first and len(registry) == 2
    assert (laid_out.workdir / "configs").resolve() == REPO / "configs"
    assert laid_out.tracking_uri == f"sqlite:///{laid_out.workdir / 'mlflow.db'}"


def test_untimed_unless_asked_and_each_store_and_timing_is_its_own_run(registry, tmp_path: Path) -> None:
    missing = tmp_path / "missing.yaml"
    untimed = registry(missing, "significance.seed=1")
    assert untimed.returncode == 2  # the config does not exist: nothing runs
    assert list(untimed.process.args[-7:]) == [
        "run", str(missing), "--json", "--set", "significance.seed=1", "--set", "efficiency.repeats=0",
    ]  # fmt: skip
    assert registry(missing, "significance.seed=1") is untimed
    timed = registry(missing, "significance.seed=1", timed=True)
    assert timed is not untimed and "efficiency.repeats=0" not in timed.process.args
    served = registry(missing, "significance.seed=1", store="server", as_json=False)
    assert served not in (untimed, timed) and "--json" not in served.process.args
    assert served.process.args[-2:] == ["--set", "tracking.uri=http://127.0.0.1:9"]
    assert served.tracking_uri == "http://127.0.0.1:9" and len(registry) == 3
    with pytest.raises(ValueError, match="store must be one of"):
        registry(missing, store="postgres")


def test_a_shipped_config_is_named_without_its_folder() -> None:
    assert config_path("rrf_vs_dbsf") == REPO / "configs" / "rrf_vs_dbsf.yaml"
    assert config_path("elsewhere/x.yaml") == Path("elsewhere/x.yaml")


def test_a_run_left_by_another_worker_is_read_not_run_again(tmp_path_factory, tmp_path: Path) -> None:
    """Two registries on one shared folder (the two xdist workers of a session): the second reads the first's
    run (its folder, exit code and output) and makes no folder of its own; a command it has not seen, or a
    registry without the shared folder, runs."""
    shared = tmp_path / "shared"
    shared.mkdir()
    first = session_comparisons(tmp_path_factory, tmp_path / "cache", lambda: "http://127.0.0.1:9", shared)
    ran = first.command(["examples"])
    assert ran.returncode == 0 and "rrf_vs_dbsf" in ran.stdout, ran.stderr[-2000:]

    made: list[str] = []

    def folder(name: str) -> Path:
        made.append(name)
        path = tmp_path / f"{name}-{len(made)}"
        path.mkdir()
        return path

    second = Comparisons(folder, tmp_path / "cache", lambda: "http://127.0.0.1:9", shared)
    read = second.command(["examples"])
    assert made == [] and read is not ran
    assert (read.workdir, read.tracking_uri, read.returncode, read.stdout, read.stderr) == (
        ran.workdir, ran.tracking_uri, ran.returncode, ran.stdout, ran.stderr,
    )  # fmt: skip
    assert list(read.process.args) == list(ran.process.args)
    laid_out = second.command(["examples"], checkout_layout=True)  # no worker ran it: this one runs it
    assert made == ["comparison"] and laid_out.returncode == 0, laid_out.stderr[-2000:]
    alone = Comparisons(folder, tmp_path / "cache", lambda: "http://127.0.0.1:9")  # no shared folder
    assert alone.command(["examples"]).returncode == 0 and made == ["comparison", "comparison"]
