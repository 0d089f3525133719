"""Each distinct comparison runs once per pytest session.

:class:`Comparisons` runs `abcompare run` in the pytest process (:func:`support.cli.invoke_cli`: no
interpreter start, and a model loads once per session) the first time a test asks for a given command,
and hands every later asker the same finished run: its folder, the tracking store it logged to, its
stdout/stderr and its parsed ``--json``. Two asks are the same comparison exactly when they give the same
command line (config, overrides, ``--json``, timing pass, store) from the same kind of folder, so a
shared run can never stand in for a different one.

The session fixture ``comparison`` (tests/conftest.py) is the one way a test gets a shared run.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import pytest

from support.cli import NO_TIMING, REPO, CliResult, invoke_cli, run_cli

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
    session's `mlflow server`."""

    folder: Callable[[str], Path]
    cache_dir: Path
    server_url: Callable[[], str]
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
            workdir = self.folder(name)
            if checkout_layout:
                (workdir / "configs").symlink_to(REPO / "configs")
            tracking = next((a.split("=", 1)[1] for a in args if a.startswith("tracking.uri=")), None)
            uri = tracking or f"sqlite:///{workdir / 'mlflow.db'}"
            run = run_cli if checkout_layout else invoke_cli
            self._runs[key] = Comparison(workdir, uri, run(args, workdir, self.cache_dir))
        return self._runs[key]

    def __len__(self) -> int:
        return len(self._runs)


def session_comparisons(
    tmp_path_factory: pytest.TempPathFactory, cache_dir: Path, server_url: Callable[[], str]
) -> Comparisons:
    """The registry of one pytest session (each run in its own folder under pytest's temporary root)."""
    return Comparisons(lambda name: tmp_path_factory.mktemp(name), cache_dir, server_url)
