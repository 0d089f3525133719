"""Real servers for tests, started on 127.0.0.1 and a free port: a PostgreSQL cluster in a temporary
folder (initdb and pg_ctl from PATH, or from Debian's /usr/lib/postgresql/<version>/bin, newest version),
and `mlflow server` (single worker, job execution off) backed by SQLite or by that PostgreSQL.

Nothing is mocked: the tests log to these exactly as a team's tracking server is used. Fixtures at the end;
a test module imports the ones it uses (``from support.servers import mlflow_server  # noqa: F401``).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from support.clock import Deadline, pause
from support.environment import PARTS, missing_part, postgres_tools, require, require_module

__all__ = [
    "MlflowServer",
    "Postgres",
    "free_port",
    "mlflow_server",
    "mlflow_server_on_postgres",
    "postgres",
    "start_mlflow_server",
    "start_postgres",
]


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# ------------------------------------------------------------------------------------------- PostgreSQL
@dataclass
class Postgres:
    """A running PostgreSQL cluster: ``uri`` is an SQLAlchemy URI of its ``mlflow`` database."""

    folder: Path
    port: int
    as_user: list[str]
    pg_ctl: str

    @property
    def uri(self) -> str:
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/mlflow"

    def stop(self) -> None:
        subprocess.run(
            [*self.as_user, self.pg_ctl, "-D", str(self.folder / "data"), "stop", "-m", "fast", "-w"],
            capture_output=True,
            timeout=60,
            check=False,
        )
        shutil.rmtree(self.folder, ignore_errors=True)


def _as_postgres_user(folder: Path) -> list[str]:
    """As root, PostgreSQL runs as the ``postgres`` user, on a folder it owns; otherwise as ourselves."""
    if os.geteuid() != 0:
        return []
    import pwd

    require("postgres_user")
    account = pwd.getpwnam("postgres")
    os.chown(folder, account.pw_uid, account.pw_gid)
    return ["runuser", "-u", "postgres", "--"]


def start_postgres() -> Postgres:
    """initdb + pg_ctl start into a new temporary folder (trust authentication, fsync off: test data only),
    then create the ``mlflow`` database. Without PostgreSQL or psycopg the test is skipped (failed in CI)."""
    tools = postgres_tools()
    if tools is None:
        missing_part(PARTS["postgresql"])
    initdb, pg_ctl = tools
    psycopg = require_module("psycopg")
    folder = Path(tempfile.mkdtemp(prefix="abcompare-test-pg-"))
    folder.chmod(0o755)
    as_user = _as_postgres_user(folder)
    port = free_port()
    data = folder / "data"
    subprocess.run(
        [*as_user, initdb, "-D", str(data), "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8"],
        capture_output=True,
        timeout=120,
        check=True,
    )
    options = f"-c listen_addresses=127.0.0.1 -p {port} -k {folder} -c fsync=off -c max_connections=100"
    started = subprocess.run(
        [*as_user, pg_ctl, "-D", str(data), "-o", options, "-l", str(folder / "server.log"), "-w", "start"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    server = Postgres(folder, port, as_user, pg_ctl)
    if started.returncode != 0:
        log = (folder / "server.log").read_text() if (folder / "server.log").exists() else ""
        server.stop()
        pytest.fail(f"PostgreSQL did not start: {started.stderr}{log[-2000:]}")
    with psycopg.connect(f"host=127.0.0.1 port={port} user=postgres dbname=postgres", autocommit=True) as db:
        db.execute("CREATE DATABASE mlflow")
    return server


# ---------------------------------------------------------------------------------------- mlflow server
@dataclass
class MlflowServer:
    """A running `mlflow server`; ``url`` is its tracking URI."""

    url: str
    process: subprocess.Popen
    folder: Path
    log: object

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=20)
        self.log.close()

    def kill(self) -> None:
        """Kill the server and every worker it started (the test of a server dying mid-run)."""
        import signal

        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=20)


def start_mlflow_server(folder: Path, backend_uri: str | None = None, timeout: float = 180) -> MlflowServer:
    """`mlflow server --workers 1` on a free port, storing runs in ``backend_uri`` (default SQLite in
    ``folder``) and artifacts in ``folder/artifacts``; waits until ``/health`` answers."""
    folder.mkdir(parents=True, exist_ok=True)
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("MLFLOW_")}
    env["MLFLOW_SERVER_ENABLE_JOB_EXECUTION"] = "false"
    command = [
        sys.executable, "-m", "mlflow", "server",
        "--host", "127.0.0.1", "--port", str(port), "--workers", "1",
        "--backend-store-uri", backend_uri or f"sqlite:///{folder / 'server.db'}",
        "--artifacts-destination", str(folder / "artifacts"),
    ]  # fmt: skip
    log = open(folder / "server.log", "w")  # noqa: SIM115 - closed by stop()
    process = subprocess.Popen(
        command, cwd=folder, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    server = MlflowServer(f"http://127.0.0.1:{port}", process, folder, log)
    deadline = Deadline(timeout)
    while not deadline.passed():
        if process.poll() is not None:
            server.stop()
            pytest.fail(f"mlflow server exited: {(folder / 'server.log').read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(f"{server.url}/health", timeout=2) as response:
                if response.status == 200:
                    return server
        except OSError:
            pause(0.5)
    server.kill()
    server.stop()
    pytest.fail(f"mlflow server did not come up within {timeout:.0f} s")


# --------------------------------------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def mlflow_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The URL of a real `mlflow server` on SQLite, for the module's tests."""
    server = start_mlflow_server(tmp_path_factory.mktemp("mlflow-server"))
    yield server.url
    server.stop()


@pytest.fixture(scope="module")
def postgres() -> Iterator[Postgres]:
    """A real PostgreSQL cluster in a temporary folder, for the module's tests."""
    server = start_postgres()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def mlflow_server_on_postgres(tmp_path_factory: pytest.TempPathFactory, postgres: Postgres) -> Iterator[str]:
    """The URL of a real `mlflow server` whose backend store is the PostgreSQL cluster."""
    server = start_mlflow_server(tmp_path_factory.mktemp("mlflow-server-pg"), backend_uri=postgres.uri)
    yield server.url
    server.stop()
