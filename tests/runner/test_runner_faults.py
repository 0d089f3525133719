"""Faults a real user meets: concurrent first runs, a run killed with SIGKILL, a tracking server that dies
mid-run, a full disk. Real processes, real MLflow stores, real signals; nothing mocked. What needs no
process of its own (the run after the concurrent ones, the runs on a full disk: what they check is the
store and the one-line error) calls the command in the test process (``support.cli.invoke_cli``)."""

from __future__ import annotations

import contextlib
import json
import signal
import sqlite3
import subprocess
from pathlib import Path

import pytest
from mlflow import MlflowClient
from support.cli import cli_command, cli_env, error_lines, invoke_cli
from support.clock import Deadline, pause
from support.environment import PARTS, missing_part, require
from support.servers import start_mlflow_server

BM25_CONFIG = """\
name: faults
dataset:
  name: hr-docs
control:
  retrievers:
    bm25: {}
  top_k: 20
treatments:
  shallow:
    top_k: 10
significance:
  n_resamples: 200
tracking:
  experiment: faults
efficiency:
  repeats: 0  # no latency timing pass: these faults strike the comparison and its store, not its cost
"""


def command(*args: str) -> list[str]:
    return [*cli_command(), *args]


def start(workdir: Path, cache: Path, *args: str, tmpdir: Path | None = None) -> subprocess.Popen:
    env = cli_env(cache)
    if tmpdir is not None:
        env["TMPDIR"] = str(tmpdir)
    return subprocess.Popen(
        command("run", "config.yaml", *args),
        cwd=workdir,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def run_statuses(db: Path) -> list[str]:
    """Run statuses in a SQLite store, read with sqlite3 (read-only) so a poll never writes to it."""
    if not db.exists():
        return []
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as connection:
            return [row[0] for row in connection.execute("select status from runs")]
    except sqlite3.Error:
        return []


def wait_for_running(db: Path, process: subprocess.Popen, timeout: float = 180) -> None:
    deadline = Deadline(timeout)
    while not deadline.passed():
        assert process.poll() is None, process.communicate()[1][-3000:]
        if "RUNNING" in run_statuses(db):
            return
        pause(0.05)
    pytest.fail("no run became RUNNING")


def comparisons(client: MlflowClient, experiment: str) -> list:
    found = client.get_experiment_by_name(experiment)
    runs = client.search_runs([found.experiment_id]) if found else []
    return [r for r in runs if r.data.tags.get("abcompare.role") == "comparison"]


def test_four_concurrent_first_runs_on_a_fresh_folder_all_complete(
    tmp_path: Path, embedding_cache: Path
) -> None:
    (tmp_path / "config.yaml").write_text(BM25_CONFIG)
    processes = [start(tmp_path, embedding_cache, "--json") for _ in range(4)]
    outputs = [p.communicate(timeout=600) for p in processes]
    for process, (_, stderr) in zip(processes, outputs, strict=True):
        assert process.returncode == 0, stderr[-3000:]
    client = MlflowClient(tracking_uri=f"sqlite:///{tmp_path / 'mlflow.db'}")
    parents = comparisons(client, "faults")
    assert sorted(p.info.run_id for p in parents) == sorted(
        json.loads(out)["parent_run_id"] for out, _ in outputs
    )
    for parent in parents:
        assert parent.info.status == "FINISHED"
        assert "_vs_control.shallow.ndcg_at_10.delta" in parent.data.metrics
        children = client.search_runs(
            [parent.info.experiment_id], filter_string=f"tags.`mlflow.parentRunId` = '{parent.info.run_id}'"
        )
        assert sorted(c.data.tags["abcompare.variant"] for c in children) == ["control", "shallow"]
        assert {c.info.status for c in children} == {"FINISHED"}
    # the store is whole: a fifth run in the same folder works
    fifth = invoke_cli(["run", "config.yaml"], tmp_path, embedding_cache)
    assert fifth.returncode == 0, fifth.stderr[-3000:]


def test_a_run_killed_with_sigkill_is_marked_failed_by_the_next_run(
    tmp_path: Path, embedding_cache: Path
) -> None:
    (tmp_path / "config.yaml").write_text(BM25_CONFIG)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    db = tmp_path / "mlflow.db"
    victim = start(tmp_path, embedding_cache, tmpdir=scratch)
    wait_for_running(db, victim)
    victim.send_signal(signal.SIGKILL)
    victim.communicate(timeout=60)
    assert "RUNNING" in run_statuses(db), "the killed run could not close its runs"
    leftovers = [p.name for p in scratch.iterdir() if p.name.startswith(f"abcompare-{victim.pid}-")]
    assert leftovers, "the killed run left its temporary folder behind"

    survivor = start(tmp_path, embedding_cache, tmpdir=scratch)
    _, stderr = survivor.communicate(timeout=600)
    assert survivor.returncode == 0, stderr[-3000:]
    notices = [line for line in stderr.splitlines() if "FAILED" in line and "no longer exist" in line]
    assert len(notices) == 1, stderr
    assert f"PID {victim.pid}" in notices[0]
    assert "RUNNING" not in run_statuses(db)
    client = MlflowClient(tracking_uri=f"sqlite:///{db}")
    runs = client.search_runs([client.get_experiment_by_name("faults").experiment_id])
    killed = [r for r in runs if r.data.tags.get("abcompare.pid") == str(victim.pid)]
    assert killed and {r.info.status for r in killed} == {"FAILED"}
    assert {r.info.status for r in runs if r not in killed} == {"FINISHED"}
    assert not [p for p in scratch.iterdir() if p.name in leftovers], "the dead run's folder was removed"


def test_a_tracking_server_that_dies_mid_run_loses_the_record_not_the_result(
    tmp_path: Path, embedding_cache: Path
) -> None:
    server = start_mlflow_server(tmp_path / "server")
    workdir = tmp_path / "work"
    workdir.mkdir()
    (workdir / "config.yaml").write_text(BM25_CONFIG)
    try:
        process = start(workdir, embedding_cache, "--json", "--set", f"tracking.uri={server.url}")
        wait_for_running(server.folder / "server.db", process)
        server.kill()
        stdout, stderr = process.communicate(timeout=300)
    finally:
        server.stop()
    assert process.returncode == 3, stderr[-3000:]
    assert "Traceback" not in stderr
    errors = error_lines(stderr)
    assert len(errors) == 1, stderr
    assert f"the tracking server at {server.url} stopped answering while logging" in errors[0]
    assert "the comparison is not recorded" in errors[0]
    result = json.loads(stdout)
    assert {row["treatment"] for row in result["comparison"]} == {"shallow"}
    assert result["parent_run_id"] is None
    saved = list(workdir.glob("abcompare-unrecorded-faults-*.json"))
    assert len(saved) == 1 and str(saved[0]) in errors[0]
    assert json.loads(saved[0].read_text()) == result


@pytest.fixture
def small_disk(tmp_path: Path):
    """A 16 MB tmpfs, unmounted afterwards. It needs root: skipped elsewhere, and in CI (root) a mount
    that fails is a failure."""
    require("tmpfs")
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(mount)], capture_output=True
    )
    if done.returncode != 0:
        missing_part(PARTS["tmpfs"], f"mount -t tmpfs failed: {done.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True)


def fill(folder: Path) -> Path:
    """Write a file until the file system is full (ENOSPC)."""
    filler = folder / "filler"
    with filler.open("wb", buffering=0) as handle, contextlib.suppress(OSError):
        while True:
            handle.write(b"\0" * 65536)
    return filler


def test_a_full_disk_says_so_and_leaves_earlier_comparisons_intact(
    small_disk: Path, embedding_cache: Path
) -> None:
    (small_disk / "config.yaml").write_text(BM25_CONFIG)
    first = invoke_cli(["run", "config.yaml", "--json"], small_disk, embedding_cache)
    assert first.returncode == 0, first.stderr[-3000:]
    earlier = json.loads(first.stdout)
    fill(small_disk)

    full = invoke_cli(["run", "config.yaml"], small_disk, embedding_cache)
    stderr = full.stderr
    assert full.returncode == 1, stderr[-3000:]
    assert "Traceback" not in stderr
    errors = error_lines(stderr)
    assert len(errors) == 1, stderr
    assert "disk full while writing the MLflow store sqlite:///" in errors[0]

    # the store elsewhere, the artifact root on the full disk: the message names the artifact
    elsewhere = small_disk.parent / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "config.yaml").write_text(BM25_CONFIG)
    artifacts = f"tracking.artifact_location={(small_disk / 'artifacts').as_uri()}"
    full = invoke_cli(["run", "config.yaml", "--set", artifacts], elsewhere, embedding_cache)
    stderr = full.stderr
    assert full.returncode == 1, stderr[-3000:]
    errors = error_lines(stderr)
    assert len(errors) == 1 and "Traceback" not in stderr, stderr
    assert f"disk full while writing {small_disk / 'artifacts'}/" in errors[0]  # the file on the full disk

    (small_disk / "filler").unlink()
    client = MlflowClient(tracking_uri=f"sqlite:///{small_disk / 'mlflow.db'}")
    parent = client.get_run(earlier["parent_run_id"])
    assert parent.info.status == "FINISHED"
    delta = next(r["delta"] for r in earlier["comparison"] if r["metric"] == "ndcg@10")
    assert parent.data.metrics["_vs_control.shallow.ndcg_at_10.delta"] == delta  # as computed
    for run_id in earlier["variant_run_ids"].values():
        assert client.get_run(run_id).info.status == "FINISHED"
        local = client.download_artifacts(run_id, "tables/per_query_metrics.parquet", str(small_disk))
        assert Path(local).stat().st_size > 0
