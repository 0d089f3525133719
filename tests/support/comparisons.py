"""Each distinct comparison runs once per pytest session.

:class:`Comparisons` runs `abcompare run` in the pytest process (:func:`support.cli.invoke_cli`: no
interpreter start, and a model loads once per session) the first time a test asks for a given command,
and hands every later asker the same finished run: its folder, the tracking store it logged to, its
stdout/stderr and its parsed ``--json``. Two asks are the same comparison exactly when they give the same
command line (config, overrides, ``--json``, timing pass, store) from the same kind of folder, so a
shared run can never stand in for a different one.

The session fixture ``comparison`` (tests/conftest.py) is the one way a test gets a shared run.

Under pytest-xdist each worker has its own registry; with a ``shared`` folder (``support.workers``) the
workers share their runs too: the first worker to ask for a command runs it while holding that command's
lock and leaves a record of it (folder, tracking URI, exit code, stdout, stderr); the other worker waits
for the lock and reads the record, so a comparison runs once per session, not once per worker. Runs
logged to the session's tracking server are not shared (each worker has its own server).
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import pytest

from support.cli import NO_TIMING, REPO, CliResult, invoke_cli, run_cli
from support.workers import exclusive

#: Where a comparison logs: ``sqlite`` is the default local store (``mlflow.db`` in the run's own folder),
#: ``server`` the session's one `mlflow server` on SQLite (shared by every test that asks for it).
STORES = ("sqlite", "server")


@dataclass(frozen=True)
class Comparison:
    """One finished `abcompare run`: the folder it ran in, the tracking URI it logged to, the process."""

    workdir: Path
    tracking_uri: str
    process: subprocess.CompletedProcess | CliResult

    @property
    def returncode(self) -> int:
        return self.process.returncode

    @property
    def stdout(self) -> str:
        return self.process.stdout

    @property
    def stderr(self) -> str:
        return self.process.stderr

    @cached_property
    def payload(self) -> dict:
        """The parsed ``--json`` output (the run must have succeeded)."""
        assert self.returncode == 0, self.stderr[-3000:]
        return json.loads(self.stdout)


def config_path(config: str | Path) -> Path:
    """A shipped config by name (``"rrf_vs_dbsf"`` is ``configs/rrf_vs_dbsf.yaml``), else the path given."""
    if isinstance(config, str) and "/" not in config and not config.endswith((".yaml", ".yml")):
        return REPO / "configs" / f"{config}.yaml"
    return Path(config)


@dataclass
class Comparisons:
    """The session's comparisons by command line. ``folder(name)`` makes a fresh folder for a run,
    ``cache_dir`` is the embedding cache every run reads, ``server_url()`` starts (once) and returns the
    session's `mlflow server`; ``shared``, when given, is the folder where the session's workers leave
    and find each other's runs (see the module docstring)."""

    folder: Callable[[str], Path]
    cache_dir: Path
    server_url: Callable[[], str]
    shared: Path | None = None
    _runs: dict[tuple, Comparison] = field(default_factory=dict)

    def __call__(
        self,
        config: str | Path,
        *overrides: str,
        timed: bool = False,
        store: str = "sqlite",
        as_json: bool = True,
    ) -> Comparison:
        """``abcompare run CONFIG [--json] --set OVERRIDE ...``, once per session per distinct command.

        ``timed=False`` (the default) skips the latency timing pass (``efficiency.repeats=0``): no quality
        number depends on it, and it is most of a small run's time; a test that reads a run's cost asks for
        ``timed=True``. ``store`` is one of :data:`STORES`."""
        if store not in STORES:
            raise ValueError(f"store must be one of {STORES}, not {store!r}")
        args = ["run", str(config_path(config))]
        if as_json:
            args.append("--json")
        for override in overrides:
            args += ["--set", override]
        if not timed:
            args += NO_TIMING
        if store == "server":
            args += ["--set", f"tracking.uri={self.server_url()}"]
        return self.command(args, name=config_path(config).stem)

    def command(
        self, args: list[str], *, name: str = "comparison", checkout_layout: bool = False
    ) -> Comparison:
        """Any `abcompare` command line, run once per session: in a fresh folder, or with
        ``checkout_layout`` in one laid out like the checkout (``configs/`` beside it, so the README's
        relative paths work verbatim), which runs as the console script a user types (:func:`run_cli`)."""
        key = (tuple(args), checkout_layout)
        if key not in self._runs:
            tracking = next((a.split("=", 1)[1] for a in args if a.startswith("tracking.uri=")), None)
            if self.shared is None or tracking is not None:  # a worker's own server: its own run
                self._runs[key] = self._run(args, name, checkout_layout, tracking)
            else:
                self._runs[key] = self._shared_run(args, name, checkout_layout)
        return self._runs[key]

    def _run(self, args: list[str], name: str, checkout_layout: bool, tracking: str | None) -> Comparison:
        workdir = self.folder(name)
        if checkout_layout:
            (workdir / "configs").symlink_to(REPO / "configs")
        uri = tracking or f"sqlite:///{workdir / 'mlflow.db'}"
        run = run_cli if checkout_layout else invoke_cli
        return Comparison(workdir, uri, run(args, workdir, self.cache_dir))

    def _shared_run(self, args: list[str], name: str, checkout_layout: bool) -> Comparison:
        """The run of this command that another worker left in ``shared``, else this worker's, left there."""
        assert self.shared is not None
        identity = json.dumps([args, checkout_layout, str(self.cache_dir)])
        stem = f"{name}-{hashlib.sha256(identity.encode()).hexdigest()[:16]}"
        record = self.shared / f"{stem}.json"
        with exclusive(self.shared / f"{stem}.lock"):
            if record.exists():
                return _from_record(json.loads(record.read_text()), checkout_layout)
            done = self._run(args, name, checkout_layout, None)
            temporary = record.with_suffix(".part")
            temporary.write_text(json.dumps(_to_record(done)))
            temporary.replace(record)
            return done

    def __len__(self) -> int:
        return len(self._runs)


def _to_record(run: Comparison) -> dict:
    process = run.process
    return {
        "workdir": str(run.workdir), "tracking_uri": run.tracking_uri, "args": [str(a) for a in process.args],
        "returncode": process.returncode, "stdout": process.stdout, "stderr": process.stderr,
    }  # fmt: skip


def _from_record(record: dict, checkout_layout: bool) -> Comparison:
    """The run a record describes; its process is of the kind the command was run as (a console-script
    subprocess for the checkout layout, else the in-process call)."""
    outputs = (record["args"], record["returncode"], record["stdout"], record["stderr"])
    process = subprocess.CompletedProcess(*outputs) if checkout_layout else CliResult(*outputs)
    return Comparison(Path(record["workdir"]), record["tracking_uri"], process)


def session_comparisons(
    tmp_path_factory: pytest.TempPathFactory,
    cache_dir: Path,
    server_url: Callable[[], str],
    shared: Path | None = None,
) -> Comparisons:
    """The registry of one pytest session (each run in its own folder under pytest's temporary root), its
    runs shared with the session's other workers through ``shared`` when given."""
    return Comparisons(lambda name: tmp_path_factory.mktemp(name), cache_dir, server_url, shared)
