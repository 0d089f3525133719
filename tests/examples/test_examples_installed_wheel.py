"""From ``pip install`` to a first comparison: the built wheel, installed into a fresh virtual environment,
lists its example configs and runs one from an empty folder, far from any checkout."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.cli import NO_TIMING, REPO
from support.readme import doc_raw, shell_words

#: What a wheel is built from (the rest of the checkout is not packaged).
SOURCES = ("pyproject.toml", "README.md", "abcompare", "configs")


def _run(command: list[str], cwd: Path, env: dict[str, str], timeout: float = 600) -> str:
    result = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert result.returncode == 0, (command, result.stdout[-2000:], result.stderr[-3000:])
    return result.stdout


@pytest.mark.slow
def test_the_installed_wheel_lists_and_runs_its_examples_from_an_empty_folder(
    tmp_path: Path, embedding_cache: Path
) -> None:
    source = tmp_path / "source"  # a copy, so the build leaves nothing in the checkout
    source.mkdir()
    for name in SOURCES:
        if (REPO / name).is_dir():
            shutil.copytree(
                REPO / name, source / name, symlinks=True, ignore=shutil.ignore_patterns("__pycache__")
            )
        else:
            shutil.copy2(REPO / name, source / name)
    # the environment of a user: no checkout on the path, no MLflow or Ray settings of ours
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH" and not k.startswith(("MLFLOW_", "RAY_"))}
    env.update(HF_HUB_OFFLINE="1", ABCOMPARE_CACHE_DIR=str(embedding_cache))
    wheels = tmp_path / "wheels"
    build = [sys.executable, "-m", "pip", "wheel", str(source), "--no-deps", "--no-build-isolation", "-q"]
    _run([*build, "-w", str(wheels)], tmp_path, env)
    (wheel,) = wheels.glob("abcompare-*.whl")

    venv = tmp_path / "venv"  # the heavy dependencies come from this Python's site-packages
    _run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(venv)], tmp_path, env)
    python, abcompare = venv / "bin" / "python", venv / "bin" / "abcompare"
    install = [str(python), "-m", "pip", "install", "--no-deps", "--ignore-installed", "-q", str(wheel)]
    _run(install, tmp_path, env)

    empty = tmp_path / "empty"
    empty.mkdir()
    imported = _run([str(python), "-c", "import abcompare; print(abcompare.__file__)"], empty, env)
    assert Path(imported.strip()).is_relative_to(venv), imported  # the wheel's copy, not a checkout

    # the README's commands for a wheel, as written (the run without the timing pass, as everywhere)
    (run_example,) = re.findall(r"`(abcompare run --example [^`]*)`", doc_raw())
    assert "`abcompare examples`" in doc_raw()
    listed = _run([str(abcompare), "examples"], empty, env)
    assert "rrf_vs_dbsf" in listed and "precomputed_run" in listed, listed
    env["MLFLOW_TRACKING_URI"] = f"sqlite:///{tmp_path / 'store' / 'mlflow.db'}"
    (tmp_path / "store").mkdir()
    program, *args = shell_words(run_example)
    assert program == "abcompare" and args == ["run", "--example", "rrf_vs_dbsf"], run_example
    ran = _run([str(abcompare), *args, *NO_TIMING], empty, env)
    assert "dbsf" in ran, ran
    assert (tmp_path / "store" / "mlflow.db").is_file()  # the store MLFLOW_TRACKING_URI names
