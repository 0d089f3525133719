"""A Ray worker killed by its PID in the middle of a run: with retries Ray redoes the work and the numbers
are the local ones; with ``execution.retries: 0`` the comparison fails in one line, exit 1, its MLflow runs
FAILED. Never a hang (each run has a deadline)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest
from execution_support import REPO, cli_command, cli_env, run_cli, same_numbers
from mlflow import MlflowClient

pytestmark = pytest.mark.slow
CONFIG = REPO / "configs" / "rrf_vs_dbsf.yaml"
LEAN = ["--set", "significance.n_resamples=200", "--set", "execution.backend=ray"]
TICKS = os.sysconf("SC_CLK_TCK")


def descendants(root: int) -> list[int]:
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parents.setdefault(int(stat.rsplit(")", 1)[1].split()[1]), []).append(int(entry.name))
    found, todo = [], [root]
    while todo:
        children = parents.get(todo.pop(), [])
        found += children
        todo += children
    return found


def title_and_cpu(pid: int) -> tuple[str, float]:
    try:
        title = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return "", 0.0
    return title, (int(fields[11]) + int(fields[12])) / TICKS


def kill_an_encoder(root: int, killed: list[int], done: threading.Event, cpu: float = 4.0) -> None:
    """SIGKILL the first encoder actor under ``root`` once it has worked ``cpu`` seconds (the model is
    loaded and it is encoding)."""
    while not done.is_set():
        for pid in descendants(root):
            title, seconds = title_and_cpu(pid)
            if "BlockEncoder" in title and seconds >= cpu:
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
                return
        time.sleep(0.2)


def run_and_kill(args: list[str], workdir: Path, cache: Path, deadline: float = 420):
    process = subprocess.Popen(
        cli_command() + args, cwd=workdir, env=cli_env(cache), stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    killed: list[int] = []
    done = threading.Event()
    killer = threading.Thread(target=kill_an_encoder, args=(process.pid, killed, done), daemon=True)
    killer.start()
    try:
        stdout, stderr = process.communicate(timeout=deadline)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        raise AssertionError("the comparison hung after its encoder was killed") from None
    finally:
        done.set()
    return process.returncode, stdout, stderr, killed


@pytest.fixture(scope="module")
def local_reference(tmp_path_factory, execution_cache: Path) -> dict:
    workdir = tmp_path_factory.mktemp("local-reference")
    args = ["run", str(CONFIG), "--json", *LEAN[:2], "--set", "tracking.enabled=false"]
    result = run_cli(args, workdir, execution_cache)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout)


def test_a_killed_encoder_is_restarted_by_ray_and_the_numbers_stay(tmp_path: Path, local_reference) -> None:
    args = ["run", str(CONFIG), "--json", *LEAN, "--set", "tracking.enabled=false"]
    code, stdout, stderr, killed = run_and_kill(args, tmp_path, tmp_path / "cold-cache")
    assert killed, "no encoder actor was seen working"
    assert code == 0, stderr[-3000:]
    same_numbers(json.loads(stdout), local_reference)


def test_with_no_retries_a_killed_encoder_fails_the_run_in_one_line(tmp_path: Path) -> None:
    args = ["run", str(CONFIG), *LEAN, "--set", "execution.retries=0", "--set", "tracking.experiment=faults"]
    code, _, stderr, killed = run_and_kill(args, tmp_path, tmp_path / "cold-cache")
    assert killed, "no encoder actor was seen working"
    assert code == 1, stderr[-3000:]
    lines = [line for line in stderr.splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and "Traceback" not in stderr, stderr[-3000:]
    assert lines[0].startswith("error: execution: encoding on Ray failed after"), lines[0]
    client = MlflowClient(tracking_uri=f"sqlite:///{tmp_path / 'mlflow.db'}")
    runs = client.search_runs([client.get_experiment_by_name("faults").experiment_id])
    assert runs and {run.info.status for run in runs} == {"FAILED"}
