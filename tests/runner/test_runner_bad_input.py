"""Bad input: one clear line naming the file and line or field, exit code 2, no traceback, no RUNNING run."""

from __future__ import annotations

from pathlib import Path

from mlflow import MlflowClient
from support.cli import cli_command, error_lines, invoke_cli
from support.clock import Deadline, pause
from support.configs import bm25_control, braced

BASE = (
    braced(bm25_control("name: hr-docs\nlevel: chunk", top_k=20, name="bad-input"))
    + """\
treatments:
  other:
{treatment}
significance:
  n_resamples: 200
tracking:
  experiment: bad-input
"""
)


def write_config(folder: Path, treatment: str) -> Path:
    path = folder / "config.yaml"
    path.write_text(BASE.format(treatment=treatment))
    return path


def assert_clean_failure(result, *fragments: str) -> None:
    assert result.returncode == 2, (result.returncode, result.stderr[-3000:])
    assert "Traceback" not in result.stderr
    lines = error_lines(result.stderr)
    assert len(lines) == 1, result.stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


def run_statuses(workdir: Path) -> list[tuple[str, str]]:
    """(role, status) of every run in the folder's SQLite store, which must exist: a test that inspects the
    runs of a failed comparison fails when there are none to inspect."""
    db = workdir / "mlflow.db"
    assert db.is_file(), f"no MLflow store at {db}: the comparison opened no run"
    client = MlflowClient(tracking_uri=f"sqlite:///{db}")
    runs = client.search_runs([e.experiment_id for e in client.search_experiments()])
    return sorted((run.data.tags.get("abcompare.role", "?"), run.info.status) for run in runs)


def assert_opened_runs_failed(workdir: Path, *roles: str) -> None:
    """The README: "If anything fails, every run that was opened is marked FAILED". ``roles`` are the runs
    opened before the failure: the comparison's parent always, the control's once the control has run."""
    assert run_statuses(workdir) == sorted((role, "FAILED") for role in ("comparison", *roles))


def test_unknown_config_key_exits_2_with_file_line_and_suggestion(
    tmp_path: Path, embedding_cache: Path
) -> None:
    config = write_config(tmp_path, "    fusion: {method: rrf, kk: 3}")
    result = invoke_cli(["run", str(config)], tmp_path, embedding_cache)
    assert_clean_failure(result, "config.yaml:11", "unknown key 'kk'", "did you mean 'k'")
    assert not (tmp_path / "mlflow.db").exists()


def test_validate_reports_the_same_error_without_running(tmp_path: Path, embedding_cache: Path) -> None:
    config = write_config(tmp_path, "    top_k: many")
    result = invoke_cli(["validate", str(config)], tmp_path, embedding_cache)
    assert_clean_failure(result, "config.yaml:11", "treatments.other.top_k")


def test_malformed_run_file_fails_cleanly_and_marks_runs_failed(
    tmp_path: Path, embedding_cache: Path
) -> None:
    run_file = tmp_path / "prod.trec"
    lines = [
        f"{q} Q0 expense-reimbursement#chunk-{i} {i + 1} {10 - i} prod" for q in ("qa-001",) for i in range(3)
    ]
    lines.insert(2, "qa-001 Q0 broken-line")
    run_file.write_text("\n".join(lines) + "\n")
    config = write_config(tmp_path, "    run: {path: prod.trec, format: trec}")
    result = invoke_cli(["run", str(config)], tmp_path, embedding_cache)
    assert_clean_failure(result, "prod.trec:3")
    # refused with the inputs' check, before any retrieval: no MLflow run was ever opened
    assert not (tmp_path / "mlflow.db").exists()


def test_misaligned_annotations_fail_loudly_with_the_fix(tmp_path: Path, embedding_cache: Path) -> None:
    # document-level qrels judged against chunk keys: every annotated id misses every hit key
    config = write_config(tmp_path, "    top_k: 10")
    text = config.read_text().replace("level: chunk", "level: chunk\n  annotations: qrels.tsv")
    qrels = tmp_path / "qrels.tsv"
    qrels.write_text(
        "query-id\tcorpus-id\tscore\nqa-001\texpense-reimbursement\t1\nqa-002\tcorporate-card\t1\n"
    )
    config.write_text(text)
    result = invoke_cli(["run", str(config)], tmp_path, embedding_cache)
    assert_clean_failure(
        result,
        f"error: {qrels}: annotations: variant 'control': only 0 of 2 annotated ids (0%) appear among the "
        "hit keys: annotation ids look like document ids (e.g. 'expense-reimbursement', 'corporate-card') "
        "while hit keys look like chunk keys",
        "100% of annotated ids match once the '#...' chunk suffix is dropped (use level: document",
        "or set evaluation.allow_misaligned to report anyway)",
    )
    # refused with the inputs' check, before any retrieval or encoding: no MLflow run was ever opened
    assert not (tmp_path / "mlflow.db").exists()


def test_unreachable_tracking_server_is_reported_before_any_work(
    tmp_path: Path, embedding_cache: Path
) -> None:
    config = write_config(tmp_path, "    top_k: 10")
    result = invoke_cli(
        ["run", str(config), "--set", "tracking.uri=http://127.0.0.1:9"], tmp_path, embedding_cache
    )
    assert_clean_failure(result, "tracking.uri", "cannot reach the MLflow tracking server")
    assert "connecting to MLflow" in result.stderr
    assert "loading the dataset" not in result.stderr, "nothing is loaded or retrieved before the check"


def test_missing_config_file_exits_2(tmp_path: Path, embedding_cache: Path) -> None:
    result = invoke_cli(["run", str(tmp_path / "nope.yaml")], tmp_path, embedding_cache)
    assert_clean_failure(result, "nope.yaml", "config file not found")
    assert not (tmp_path / "mlflow.db").exists(), "a config that cannot be read opens no store"


def running_runs(db: Path) -> int:
    """RUNNING runs in a SQLite store, read with sqlite3 so the poll never competes with MLflow's setup."""
    import sqlite3

    if not db.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1) as connection:
            return connection.execute("select count(*) from runs where status = 'RUNNING'").fetchone()[0]
    except sqlite3.Error:
        return 0


def control_logged(db: Path) -> bool:
    """Whether the control's run has its metrics in a SQLite store (read as ``running_runs`` reads)."""
    import sqlite3

    if not db.exists():
        return False
    query = (
        "select count(*) from metrics m join tags t on m.run_uuid = t.run_uuid "
        "where t.key = 'abcompare.role' and t.value = 'control' and m.key = 'ndcg_at_10'"
    )
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1) as connection:
            return connection.execute(query).fetchone()[0] > 0
    except sqlite3.Error:
        return False


def test_ctrl_c_marks_the_open_runs_killed(tmp_path: Path, embedding_cache: Path) -> None:
    """SIGINT while a run is open: exit 130, and the open runs are KILLED. Event-driven: the treatment's
    run file is a named pipe nobody writes to, so the comparison waits there, with the parent run and the
    control's run open (variant runs end with the comparison), until the signal comes (no race with a
    fast machine)."""
    import os
    import signal
    import subprocess

    from support.cli import cli_env

    pipe = tmp_path / "production.trec"
    os.mkfifo(pipe)
    config = write_config(tmp_path, f"    run: {{path: {pipe}, format: trec}}")
    process = subprocess.Popen(
        [*cli_command(), "run", str(config)],
        cwd=tmp_path,
        env=cli_env(embedding_cache),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    db = tmp_path / "mlflow.db"
    hang_guard = Deadline(600)  # not a speed check: only so a broken build cannot hang the suite
    while process.poll() is None and not (running_runs(db) == 2 and control_logged(db)):
        assert not hang_guard.passed(), "the comparison never reached the pipe"
        pause(0.2)  # the parent and the control are open, the control written: it waits on the pipe
    assert process.poll() is None, process.communicate()[1][-2000:]
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, stderr[-2000:]
    assert "Traceback" not in stderr
    client = MlflowClient(tracking_uri=f"sqlite:///{db}")
    runs = client.search_runs([e.experiment_id for e in client.search_experiments()])
    status = {run.data.tags["abcompare.role"]: run.info.status for run in runs}
    assert status == {"comparison": "KILLED", "control": "KILLED"}  # an interrupted comparison: none FINISHED
    control = next(run for run in runs if run.data.tags["abcompare.role"] == "control")
    assert "ndcg_at_10" in control.data.metrics  # what the control had produced was written before the end
