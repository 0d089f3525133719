"""The tracking layer's defences, on real SQLite stores and real processes: a store path that is not a store,
runs and folders left by processes that no longer exist, PID reuse."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from abcompare.core.errors import AbcompareWarning, TrackingError
from abcompare.core.process_identity import current_process, is_alive, start_time
from abcompare.core.scratch import remove_dead_scratch_folders
from abcompare.tracking.store import check_reachable, open_tracker

# the owner tags as the README names them ("abcompare.host, abcompare.pid, abcompare.process_start")
HOST_TAG, PID_TAG, START_TAG = "abcompare.host", "abcompare.pid", "abcompare.process_start"


def dead_pid() -> int:
    """The PID of a process that has ended (and been reaped)."""
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def sqlite_uri(path: Path) -> str:
    return f"sqlite:///{path}"


@pytest.mark.parametrize("kind", ["folder", "text file", "foreign database"])
def test_a_sqlite_uri_that_is_not_an_mlflow_store_is_refused_before_opening(
    tmp_path: Path, kind: str
) -> None:
    target = tmp_path / "store.db"
    if kind == "folder":
        target.mkdir()
    elif kind == "text file":
        target.write_text("name,value\na,1\n")
    else:
        with sqlite3.connect(target) as connection:
            connection.execute("create table invoices (id integer)")
    with pytest.raises(TrackingError) as info:
        check_reachable(sqlite_uri(target))
    assert info.value.field == "tracking.uri"
    assert str(target) in str(info.value)
    if kind == "foreign database":
        with sqlite3.connect(target) as connection:
            tables = {row[0] for row in connection.execute("select name from sqlite_master")}
        assert tables == {"invoices"}, "a stranger's database is never migrated into an MLflow store"


def test_an_empty_file_or_a_new_path_is_a_fine_store(tmp_path: Path) -> None:
    (tmp_path / "empty.db").write_bytes(b"")
    check_reachable(sqlite_uri(tmp_path / "empty.db"))
    check_reachable(sqlite_uri(tmp_path / "new.db"))


def test_a_process_is_alive_only_while_it_is_the_same_process() -> None:
    me = current_process()
    assert me.pid == os.getpid() and me.started == start_time(os.getpid())
    assert is_alive(me.pid, me.started)
    assert not is_alive(me.pid, str(int(me.started or 0) + 1)), "a reused PID is not the owner"
    assert not is_alive(dead_pid())
    assert not is_alive(0)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("store") / "mlflow.db"


def test_runs_left_running_by_dead_processes_of_this_host_are_marked_failed(store: Path) -> None:
    tracker = open_tracker(sqlite_uri(store), "orphans", (store.parent / "art").as_uri())
    orphan = tracker.start_run("killed", {})
    mine = tracker.start_run("alive", {})
    elsewhere = tracker.start_run("other host", {})
    gone = dead_pid()
    tracker.set_tags(orphan, {PID_TAG: str(gone), START_TAG: ""})
    tracker.set_tags(elsewhere, {HOST_TAG: "another-machine", PID_TAG: str(gone)})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        again = open_tracker(sqlite_uri(store), "orphans")
    notices = [str(w.message) for w in caught if issubclass(w.category, AbcompareWarning)]
    assert len(notices) == 1 and f"PID {gone}" in notices[0] and "1 run(s) FAILED" in notices[0]
    status = {r.info.run_name: r.info.status for r in again.client.search_runs([again.experiment_id])}
    assert status == {"killed": "FAILED", "alive": "RUNNING", "other host": "RUNNING"}
    assert again.client.get_run(orphan).data.tags["abcompare.failure"].startswith("its process ended")
    for run_id in (mine, elsewhere):
        tracker.end_run(run_id)


def test_every_run_names_its_owner_process(store: Path) -> None:
    tracker = open_tracker(sqlite_uri(store), "owners")
    run_id = tracker.start_run("r", {"team": "search"})
    tracker.end_run(run_id)
    tags = tracker.client.get_run(run_id).data.tags
    me = current_process()
    assert (tags[HOST_TAG], tags[PID_TAG], tags[START_TAG]) == (me.host, str(me.pid), me.started)
    assert tags["team"] == "search"


def test_only_real_scratch_folders_of_dead_processes_are_removed(tmp_path: Path) -> None:
    me = current_process()
    gone = dead_pid()
    dead = tmp_path / f"abcompare-{gone}-{me.started}-abc123"
    alive = tmp_path / f"abcompare-{me.pid}-{me.started}-def456"
    reused = tmp_path / f"abcompare-{me.pid}-{int(me.started or 0) + 1}-ghi789"
    unrelated = tmp_path / "abcompare-notours"
    for folder in (dead, alive, reused, unrelated):
        folder.mkdir()
        (folder / "run.trec").write_text("x")
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "keep.txt").write_text("keep")
    trap = tmp_path / f"abcompare-{gone}-{me.started}-link00"
    trap.symlink_to(precious, target_is_directory=True)
    removed = remove_dead_scratch_folders(tmp_path)
    assert sorted(removed) == sorted([dead, reused])
    assert alive.is_dir() and unrelated.is_dir() and trap.is_symlink()
    assert (precious / "keep.txt").read_text() == "keep"
