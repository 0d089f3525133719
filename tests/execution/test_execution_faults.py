"""A Ray worker killed by its PID in the middle of a run: with retries Ray redoes the work and the numbers
are the local ones; with ``execution.retries: 0`` the comparison fails in one line, exit 1, its MLflow runs
FAILED. Never a hang (each run has a deadline).

The kill waits for an event, not a time: Ray titles an actor's process ``ray::<actor>.<method>`` while a
method runs, and the encoder actor's ``submit`` is the call that encodes a block of texts, so the actor is
killed as soon as its title says it is encoding (whatever the machine's speed, the block is in flight).

Both run on four documents of the example (``support.tiny``): what they pin is the restart and the one-line
error, which a tenth of the corpus shows as well as all of it (one cache block either way)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
from pathlib import Path

import pytest
from execution_support import same_numbers
from mlflow import MlflowClient
from support.cli import NO_TIMING, REPO, cli_command, cli_env, error_lines
from support.clock import Deadline, pause
from support.tiny import tiny_hr_docs

pytestmark = pytest.mark.slow
CONFIG = REPO / "configs" / "rrf_vs_dbsf.yaml"
# fewer resamples and no latency timing pass (the kill falls in the encoding; the costs are not compared)
LOCAL = ["--set", "significance.n_resamples=200", *NO_TIMING]
LEAN = [*LOCAL, "--set", "execution.backend=ray"]


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


def title(pid: int) -> str:
    """A process's title (Ray sets it through the command line); empty once the process is gone."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


def encoding_a_block(process_title: str) -> bool:
    """Whether Ray's title says the encoder actor is in its ``submit`` call (``ray::MapWorker(MapBatches(
    BlockEncoder)).submit``): loading the model is ``.__init__``, waiting for work is the bare actor name."""
    actor, _, method = process_title.partition(")).")
    return actor.startswith("ray::") and actor.endswith("BlockEncoder") and method == "submit"


def kill_an_encoder(root: int, killed: list[int], done: threading.Event) -> None:
    """SIGKILL the first encoder actor under ``root`` the moment it is encoding a block. The process tree
    is searched for encoder actors five times a second (they load the model for seconds first); only their
    titles are polled closely, so the watch costs little of a shared CPU."""
    encoders: set[int] = set()
    next_search = Deadline(0)
    while not done.is_set():
        if next_search.passed():
            encoders |= {pid for pid in descendants(root) if "BlockEncoder" in title(pid)}
            next_search = Deadline(0.2)
        for pid in encoders:
            if encoding_a_block(title(pid)):
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
                return
        pause(0.005)


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
def tiny(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, ...]:
    """The ``--set`` values of the four-document example these runs compare on."""
    return tiny_hr_docs(tmp_path_factory.mktemp("tiny-hr-docs"))


def with_sets(settings: tuple[str, ...]) -> list[str]:
    return [arg for setting in settings for arg in ("--set", setting)]


@pytest.fixture(scope="module")
def local_reference(comparison, tiny: tuple[str, ...]) -> dict:
    """The same comparison on the local backend (the session's one run of it), untimed like ``LOCAL``."""
    return comparison("rrf_vs_dbsf", "significance.n_resamples=200", "tracking.enabled=false", *tiny).payload


def test_a_killed_encoder_is_restarted_by_ray_and_the_numbers_stay(
    tmp_path: Path, tiny: tuple[str, ...], local_reference
) -> None:
    args = ["run", str(CONFIG), "--json", *LEAN, "--set", "tracking.enabled=false", *with_sets(tiny)]
    code, stdout, stderr, killed = run_and_kill(args, tmp_path, tmp_path / "cold-cache")
    assert killed, "no encoder actor was seen working"
    assert code == 0, stderr[-3000:]
    same_numbers(json.loads(stdout), local_reference)


def test_with_no_retries_a_killed_encoder_fails_the_run_in_one_line(
    tmp_path: Path, tiny: tuple[str, ...]
) -> None:
    args = ["run", str(CONFIG), *LEAN, "--set", "execution.retries=0", "--set", "tracking.experiment=faults",
            *with_sets(tiny)]  # fmt: skip
    code, _, stderr, killed = run_and_kill(args, tmp_path, tmp_path / "cold-cache")
    assert killed, "no encoder actor was seen working"
    assert code == 1, stderr[-3000:]
    lines = error_lines(stderr)
    assert len(lines) == 1 and "Traceback" not in stderr, stderr[-3000:]
    # killed in its first block: no block had reached the driver
    assert lines[0].startswith("error: execution: encoding on Ray failed after 0 of "), lines[0]
    client = MlflowClient(tracking_uri=f"sqlite:///{tmp_path / 'mlflow.db'}")
    runs = client.search_runs([client.get_experiment_by_name("faults").experiment_id])
    assert runs and {run.info.status for run in runs} == {"FAILED"}
