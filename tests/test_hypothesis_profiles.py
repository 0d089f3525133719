"""Which hypothesis profile a run loads: ``ci`` (the same examples every run, no example database) under
``CI=true``, ``dev`` (new examples each run) otherwise. Each case runs pytest in a subprocess on a tiny
property test whose conftest executes this suite's ``tests/conftest.py``, where the profile is chosen."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent
CONFTEST = f"""\
import importlib.util
import sys

sys.path.insert(0, {str(TESTS)!r})  # for support.environment, as when pytest runs the suite
spec = importlib.util.spec_from_file_location("suite_conftest", {str(TESTS / "conftest.py")!r})
spec.loader.exec_module(importlib.util.module_from_spec(spec))
"""
PROBE = """\
import json
import os

from hypothesis import given, settings
from hypothesis import strategies as st

DRAWN = []


@settings(max_examples=30)
@given(st.integers())
def draw(value):
    DRAWN[-1].append(value)


def test_report():
    for _ in range(2):  # the same property twice: the same examples only when derandomized
        DRAWN.append([])
        draw()
    profile = settings.default
    record = {"derandomize": profile.derandomize, "database": profile.database is not None, "drawn": DRAWN}
    with open(os.environ["PROBE_OUT"], "w") as handle:
        json.dump(record, handle)
"""


def probe(folder: Path, ci: str | None, run: int) -> dict:
    """Run the tiny test once with ``CI`` set to ``ci`` (unset when None): its profile and its draws."""
    (folder / "conftest.py").write_text(CONFTEST)
    (folder / "test_probe.py").write_text(PROBE)
    out = folder / f"probe-{ci}-{run}.json"
    env = {k: v for k, v in os.environ.items() if k not in {"CI", "HYPOTHESIS_PROFILE"}}
    env.update({"PROBE_OUT": str(out), **({"CI": ci} if ci is not None else {})})
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # the installed plugins play no part in the profile
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_probe.py"]
    result = subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return json.loads(out.read_text())


def test_ci_true_loads_the_derandomized_profile_without_a_database(tmp_path: Path) -> None:
    first, second = probe(tmp_path, "true", 1), probe(tmp_path, "true", 2)
    assert first["derandomize"] is True and first["database"] is False
    drawn = first["drawn"] + second["drawn"]
    assert len(drawn[0]) > 10 and all(run == drawn[0] for run in drawn)  # the same examples every run


def test_without_ci_the_dev_profile_explores_and_remembers(tmp_path: Path) -> None:
    record = probe(tmp_path, None, 1)
    assert record["derandomize"] is False and record["database"] is True
    assert record["drawn"][0] != record["drawn"][1]  # new random draws (30 equal integers in a row: never)


def test_ci_false_is_not_ci_for_the_profile(tmp_path: Path) -> None:
    """``CI=false`` loads ``dev``: it explores. (Hypothesis itself drops its example database whenever a
    CI variable is set at all, whatever its value, so the database is not checked here.)"""
    record = probe(tmp_path, "false", 1)
    assert record["derandomize"] is False and record["drawn"][0] != record["drawn"][1]
