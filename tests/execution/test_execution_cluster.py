"""The ray backend against a real Ray head node started by the test (``ray start --head --block`` on
127.0.0.1, token authentication), an address where nothing listens, and ``auto`` with no cluster or with
the stale record of one. ``auto`` is tested in a Ray environment of the test's own (no RAY_ADDRESS, Ray's
temp folder moved by RAY_TMPDIR), so what else runs on this machine cannot change the outcome."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
from pathlib import Path

import pytest
from execution_support import SWEEP_OVERRIDES, same_numbers
from support.cli import REPO, error_lines, run_cli
from support.clock import Deadline, pause
from support.environment import needs, require_module
from support.servers import free_port

pytestmark = [pytest.mark.slow, needs("ray")]
# keeps Ray on the loopback interface: without it Ray swaps 127.0.0.1 for this machine's network address
LOOPBACK = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}


def ray_environment(folder: Path) -> dict[str, str]:
    """Environment for a CLI whose ``auto`` must see only ``folder``: run_cli drops every RAY_ variable
    (RAY_ADDRESS too) and RAY_TMPDIR moves Ray's temp folder, with its ``ray_current_cluster`` record of the
    last ``ray start --head``, from /tmp/ray to ``folder/ray``."""
    folder.mkdir(parents=True, exist_ok=True)
    return {**LOOPBACK, "RAY_TMPDIR": str(folder)}


def wait_for_port(port: int, head: subprocess.Popen, log: Path, timeout: float = 120) -> None:
    deadline = Deadline(timeout)
    while not deadline.passed():
        assert head.poll() is None, log.read_text()[-3000:]
        if "Ray runtime started" in log.read_text():
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", port)) == 0:
                    return
        pause(0.5)
    raise AssertionError(f"the head node did not start: {log.read_text()[-3000:]}")


def runs_in(db: Path) -> list:
    if not db.exists():
        return []
    from mlflow import MlflowClient

    client = MlflowClient(tracking_uri=f"sqlite:///{db}")
    return client.search_runs([e.experiment_id for e in client.search_experiments()])


def stop(head: subprocess.Popen) -> None:
    """SIGTERM to the ``ray start --block`` process stops its GCS, raylet and workers; its own process
    group (started for it) is killed only if it does not."""
    if head.poll() is None:
        head.send_signal(signal.SIGTERM)
        try:
            head.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(head.pid, signal.SIGKILL)
            head.wait(timeout=30)


def test_a_head_node_gives_the_local_numbers_and_refuses_a_driver_without_its_token(
    tmp_path: Path, embedding_cache: Path, local_sweep: dict
) -> None:
    ray = require_module("ray")
    ray_bin = Path(ray.__file__).parents[3].parent / "bin" / "ray"
    command = [str(ray_bin) if ray_bin.exists() else shutil.which("ray") or "ray"]
    temp = tempfile.mkdtemp(prefix="abhead-")  # short: Ray's socket paths must stay under 108 characters
    token = tmp_path / "token"
    token.write_text("abcompare-test-" + os.urandom(16).hex())
    auth = {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN_PATH": str(token)}
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_") and k != "PYTHONPATH"}
    env.update(LOOPBACK, **auth)  # no PYTHONPATH: the driver's abcompare must travel with the tasks
    log = tmp_path / "head.log"
    with log.open("w") as out:
        head = subprocess.Popen(
            [*command, "start", "--head", "--block", "--node-ip-address", "127.0.0.1", "--port", str(port),
             "--num-cpus", "2", "--temp-dir", temp, "--include-dashboard", "false", "--disable-usage-stats"],
            env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
    try:
        wait_for_port(port, head, log)
        args = ["run", str(REPO / "configs" / "fusion_sweep.yaml"), "--json", *SWEEP_OVERRIDES,
                "--set", "execution.backend=ray", "--set", f"execution.address=127.0.0.1:{port}"]  # fmt: skip

        refused = run_cli(args, tmp_path, embedding_cache, timeout=120, **LOOPBACK)
        assert refused.returncode == 2, refused.stderr[-3000:]
        (line,) = error_lines(refused.stderr)
        expected = f"execution.address: the Ray cluster at 127.0.0.1:{port} requires an authentication token"
        assert expected in line
        assert "RAY_AUTH_MODE=token" in line and "Traceback" not in refused.stderr

        joined = run_cli(args, tmp_path, embedding_cache, timeout=600, **LOOPBACK, **auth)
        assert joined.returncode == 0, joined.stderr[-3000:]
        same_numbers(json.loads(joined.stdout), local_sweep)
    finally:
        stop(head)
        shutil.rmtree(temp, ignore_errors=True)
    assert head.returncode is not None


def test_an_address_where_no_cluster_listens_is_exit_2_naming_the_setting(
    tmp_path: Path, embedding_cache: Path
) -> None:
    port = free_port()  # nothing listens there
    config = REPO / "configs" / "rrf_vs_dbsf.yaml"
    address = f"execution.address=127.0.0.1:{port}"
    args = ["run", str(config), "--set", "execution.backend=ray", "--set", address]
    result = run_cli(args, tmp_path, embedding_cache, timeout=60, **LOOPBACK)
    assert result.returncode == 2, result.stderr[-3000:]
    (line,) = error_lines(result.stderr)
    assert line.startswith(f"error: execution.address: no Ray cluster answers at 127.0.0.1:{port}"), line
    assert "Traceback" not in result.stderr
    assert runs_in(tmp_path / "mlflow.db") == []  # the address is checked before any run opens


AUTO = ["run", str(REPO / "configs" / "rrf_vs_dbsf.yaml"), "--set", "execution.backend=ray",
        "--set", "execution.address=auto"]  # fmt: skip


def test_auto_without_a_cluster_says_how_to_start_one(tmp_path: Path, embedding_cache: Path) -> None:
    env = ray_environment(tmp_path / "ray-temp")  # empty: no record, no RAY_ADDRESS
    result = run_cli(AUTO, tmp_path, embedding_cache, timeout=60, **env)
    assert result.returncode == 2, result.stderr[-3000:]
    (line,) = error_lines(result.stderr)
    assert line == (
        "error: execution.address: 'auto' found no Ray cluster: none was started on this machine and "
        "RAY_ADDRESS is not set (start one with `ray start --head`, or give the head's HOST:PORT)"
    )
    assert "Traceback" not in result.stderr
    assert runs_in(tmp_path / "mlflow.db") == []


def test_auto_with_the_stale_record_of_a_stopped_cluster_names_the_record(
    tmp_path: Path, embedding_cache: Path
) -> None:
    """A ``ray_current_cluster`` record left by a head that is gone: ``auto`` reads it, and the error says
    that nothing answers at that address and where the address came from (not that a cluster runs)."""
    env = ray_environment(tmp_path / "ray-temp")
    record = tmp_path / "ray-temp" / "ray" / "ray_current_cluster"
    record.parent.mkdir()
    port = free_port()  # nothing listens there
    record.write_text(f"127.0.0.1:{port}")
    result = run_cli(AUTO, tmp_path, embedding_cache, timeout=60, **env)
    assert result.returncode == 2, result.stderr[-3000:]
    (line,) = error_lines(result.stderr)
    assert line.startswith(
        f"error: execution.address: no Ray cluster answers at 127.0.0.1:{port}, the address 'auto' read "
        f"from {record} (connection refused) (the record was left by a `ray start --head` whose cluster "
        "has stopped"
    ), line
    assert "Traceback" not in result.stderr
    assert runs_in(tmp_path / "mlflow.db") == []
