"""The command as a function of its arguments (``abcompare.cli.main(argv) -> int``) and the test helper that
calls it in this process (``support.cli.invoke_cli``): the README's exit codes and one-line errors come back
from the call, the helper gives the call a new process's globals and puts this one's back, even when the
command fails, and it returns what the console script returns.

Expected values are the README's promises ("The run exits with code 0 on success, 2 on bad input ... Every
failure is one line on stderr"; "Bad input gets one line naming the file and the line (or the field)").
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import tempfile
import warnings
from pathlib import Path

import mlflow
import pytest
from mlflow import MlflowClient
from support.cli import error_lines, invoke_cli, run_cli
from support.configs import bm25_control

from abcompare.cli import main

CONFIG = (
    bm25_control("name: hr-docs\nlevel: chunk", top_k=10, name="in-process")
    + "treatments:\n  other:\n    run: {path: prod.trec, format: trec}\n"
    + "significance:\n  n_resamples: 200\ntracking:\n  experiment: in-process\n"
)


def test_main_returns_2_and_one_error_line_for_a_missing_config(tmp_path: Path, capsys) -> None:
    """Bad input (a config file that is not there) is exit code 2, returned, not raised, with one line on
    stderr that names the file; nothing on stdout."""
    missing = tmp_path / "nope.yaml"
    assert main(["validate", str(missing)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.splitlines() == error_lines(err)  # nothing but the error line
    (line,) = error_lines(err)
    assert str(missing) in line


def test_main_returns_2_and_one_error_line_for_an_unknown_option(capsys) -> None:
    """A bad option is bad input too: code 2 and one line naming the command and the option, from the
    arguments given to ``main`` (this process's own ``sys.argv`` is pytest's)."""
    assert main(["run", "--no-such-option"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    (line,) = err.splitlines()
    assert line.startswith("error: abcompare run: ") and "--no-such-option" in line


def test_main_returns_0_for_the_version(capsys) -> None:
    from abcompare import __version__

    assert main(["--version"]) == 0
    assert capsys.readouterr() == (f"abcompare {__version__}\n", "")


def test_main_puts_back_the_process_settings_a_command_sets(tmp_path: Path, capsys) -> None:
    """``run`` installs its Ctrl-C handler and warning display; a caller of ``main`` gets its own back."""
    handler, showwarning, unraisable = (
        signal.getsignal(signal.SIGINT),
        warnings.showwarning,
        sys.unraisablehook,
    )
    assert main(["run", str(tmp_path / "nope.yaml")]) == 2
    capsys.readouterr()
    assert signal.getsignal(signal.SIGINT) is handler
    assert warnings.showwarning is showwarning and sys.unraisablehook is unraisable


def snapshot() -> dict[str, object]:
    """The globals a command may change, as this process has them."""
    return {
        "env": dict(os.environ),
        "cwd": os.getcwd(),
        "argv": sys.argv[:],
        "sigint": signal.getsignal(signal.SIGINT),
        "sigterm": signal.getsignal(signal.SIGTERM),
        "unraisablehook": sys.unraisablehook,
        "showwarning": warnings.showwarning,
        "filters": list(warnings.filters),
        "tempdir": tempfile.tempdir,
        "mlflow_level": logging.getLogger("mlflow").level,
        "root_handlers": logging.getLogger().handlers[:],
        "tracking_uri": mlflow.tracking._tracking_service.utils._tracking_uri,
        "active_run": mlflow.active_run(),
    }


def write_failing_comparison(folder: Path) -> Path:
    """A comparison that fails after its MLflow runs are open: the treatment's run file has a malformed
    third line (README: a malformed line is bad input, and every run that was opened is marked FAILED)."""
    lines = [f"qa-001 Q0 expense-reimbursement#chunk-{i} {i + 1} {10 - i} prod" for i in range(3)]
    lines.insert(2, "qa-001 Q0 broken-line")
    (folder / "prod.trec").write_text("\n".join(lines) + "\n")
    config = folder / "config.yaml"
    config.write_text(CONFIG)
    return config


def test_a_failed_run_in_process_leaves_no_running_run_and_every_global_as_it_was(
    tmp_path: Path, embedding_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import abcompare.inputs

    config = write_failing_comparison(tmp_path)
    # without the inputs' check (which refuses the malformed line before any run opens), the line fails
    # the control's run stage: a failure after runs are open, which is what this test is about
    monkeypatch.setattr(abcompare.inputs, "check_inputs", lambda config, dataset: None)
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "http://127.0.0.1:9")  # the helper strips it (cli_env)
    before = snapshot()
    result = invoke_cli(["run", str(config)], tmp_path, embedding_cache, ABCOMPARE_SOME_SETTING="x")
    assert snapshot() == before
    assert "ABCOMPARE_SOME_SETTING" not in os.environ
    assert result.returncode == 2, result.stderr[-3000:]
    (line,) = error_lines(result.stderr)
    assert "prod.trec:3" in line
    # the runs went to the folder's own store (the environment's MLFLOW_TRACKING_URI was not passed on),
    # and none is left RUNNING: the comparison and the control it had opened are FAILED
    client = MlflowClient(tracking_uri=f"sqlite:///{tmp_path / 'mlflow.db'}")
    runs = client.search_runs([e.experiment_id for e in client.search_experiments()])
    assert sorted(run.info.status for run in runs) == ["FAILED", "FAILED"]
    assert mlflow.active_run() is None


def test_an_uncaught_error_is_a_traceback_and_exit_1_and_the_globals_come_back(
    tmp_path: Path, embedding_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With ABCOMPARE_DEBUG=1 the command lets an unexpected error through (README: the traceback); the
    helper shows it as the interpreter would, exit code 1, and still restores what it changed."""
    import abcompare.runner

    def broken(*args, **kwargs):
        raise RuntimeError("planted")

    monkeypatch.setattr(abcompare.runner, "run_comparison", broken)
    config = write_failing_comparison(tmp_path)
    before = snapshot()
    result = invoke_cli(["run", str(config)], tmp_path, embedding_cache, ABCOMPARE_DEBUG="1")
    assert snapshot() == before
    assert result.returncode == 1
    assert "Traceback" in result.stderr and result.stderr.rstrip().endswith("RuntimeError: planted")


def test_an_active_fluent_run_left_behind_is_ended_failed_and_fails_the_call(
    tmp_path: Path, embedding_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The command uses no fluent MLflow run; one a command left active would leak into the next test, so
    the helper ends it FAILED and the call fails."""
    store = f"sqlite:///{tmp_path / 'leak.db'}"

    def leaking() -> dict:
        mlflow.set_tracking_uri(store)
        mlflow.start_run()
        return {}

    monkeypatch.setattr("abcompare.config.config_schema", leaking)  # what `schema` calls
    before = snapshot()
    result = invoke_cli(["schema"], tmp_path, embedding_cache)
    assert result.returncode == 1 and "1 MLflow run(s) left active, ended FAILED" in result.stderr
    assert snapshot() == before  # the tracking URI the command set is put back too
    (run,) = MlflowClient(tracking_uri=store).search_runs(["0"])
    assert run.info.status == "FAILED"


@pytest.mark.parametrize(
    "args",
    [["validate", "{missing}"], ["run", "--bogus"], ["report", "--format", "pdf"], ["schema"], []],
    ids=["missing-config", "unknown-option", "unknown-format", "schema", "no-arguments"],
)
def test_in_process_and_console_script_say_the_same(args: list[str], tmp_path: Path, embedding_cache) -> None:
    """The same command both ways: the same exit code, stdout and stderr, to the character."""
    args = [a.replace("{missing}", str(tmp_path / "nope.yaml")) for a in args]
    here = invoke_cli(args, tmp_path, embedding_cache)
    there = run_cli(args, tmp_path, embedding_cache)
    assert (here.returncode, here.stdout, here.stderr) == (there.returncode, there.stdout, there.stderr)
