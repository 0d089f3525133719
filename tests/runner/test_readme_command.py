"""The README's main command, run verbatim (minus the install) from a folder laid out like the checkout, and
the README's ``mlflow ui`` command, run as written in that run's folder."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import urllib.parse
import urllib.request
from pathlib import Path

from mlflow import MlflowClient
from support.cli import REPO, cli_env
from support.clock import Deadline, pause
from support.environment import needs
from support.readme import doc_raw, doc_text, readme_match, readme_run_command, readme_section
from support.servers import free_port


def test_the_documented_run_command_exits_zero(
    readme_main_job: tuple[Path, subprocess.CompletedProcess],
) -> None:
    """The run is ``readme_main_job`` (tests/runner/conftest.py), shared with the README sample's test."""
    assert readme_run_command()[:2] == ["abcompare", "run"]
    workdir, result = readme_main_job
    assert result.returncode == 0, result.stderr[-3000:]
    assert "dbsf vs control" in result.stdout
    assert "Verdict" in result.stdout
    assert "mlflow ui --backend-store-uri sqlite:///mlflow.db" in result.stdout
    assert (workdir / "mlflow.db").exists()


def test_the_treatment_run_name_docs_mlflow_quotes_is_the_main_jobs(
    readme_main_job: tuple[Path, subprocess.CompletedProcess],
) -> None:
    """docs/mlflow.md quotes what the compare view's "Run Name" row reads for the main job's treatment: the
    name the run was given (issue 41: no figure in the docs that no test produces)."""
    workdir, result = readme_main_job
    assert result.returncode == 0, result.stderr[-3000:]
    (run_id,) = [line.split(": ", 1)[1] for line in result.stdout.splitlines() if line.startswith("  dbsf: ")]
    client = MlflowClient(tracking_uri=f"sqlite:///{workdir / 'mlflow.db'}")
    name = client.get_run(run_id.strip()).info.run_name
    assert name.startswith("dbsf · ndcg@10 ")
    assert f"reads `{name}` beside `control`" in doc_text("docs/mlflow.md")


def readme_ui_command() -> str:
    """The README's ``mlflow ui`` command ("Two commands"), as written."""
    (command,) = re.findall(r"`(mlflow ui [^`]*)`", readme_section("Two commands"))
    return command


def start_as_written(command: str, folder: Path, port: int) -> tuple[subprocess.Popen, Path]:
    """``command`` run by bash as the README writes it, in ``folder``, with ``MLFLOW_PORT=port`` (the README's
    way to pick a port when 5000 is taken: on a shared machine a test cannot count on 5000) and no other
    MLflow variable; in a session of its own, so that its workers stop with it. Its log beside it."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith("MLFLOW_")}
    log = folder / f"mlflow-ui-{port}.log"
    with log.open("w") as sink:
        process = subprocess.Popen(
            ["bash", "-c", f"exec {command}"], cwd=folder, env={**environment, "MLFLOW_PORT": str(port)},
            stdout=sink, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
    return process, log


def stop(process: subprocess.Popen) -> None:
    """Stop the UI by its process id: its session (the command and the workers it started)."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=30)


def api(base: str, path: str, **query: str) -> dict:
    with urllib.request.urlopen(f"{base}{path}?{urllib.parse.urlencode(query)}", timeout=10) as response:
        return json.load(response)


def test_the_readme_mlflow_ui_command_serves_the_main_jobs_runs(
    readme_main_job: tuple[Path, subprocess.CompletedProcess],
) -> None:
    """The README's ``mlflow ui --backend-store-uri sqlite:///mlflow.db``, as written, in the folder the
    main job ran in: its REST API answers with the comparison's parent run and both variants' runs, in the
    experiment the run's printed link opens. The port is the README's ``MLFLOW_PORT``, a free one."""
    workdir, result = readme_main_job
    assert result.returncode == 0, result.stderr[-3000:]
    command = readme_ui_command()
    assert f"View: {command}, then open http://127.0.0.1:5000/" in result.stdout  # what the run prints
    parent = re.search(r"^MLflow: experiment (\S+), parent run .* \(([0-9a-f]{32})\)$", result.stdout, re.M)
    experiment = re.search(r"open http://127\.0\.0\.1:5000/#/experiments/(\d+)/runs", result.stdout)
    variants = dict(re.findall(r"^  (control|dbsf): ([0-9a-f]{32})$", result.stdout, re.M))
    assert parent and experiment and set(variants) == {"control", "dbsf"}, result.stdout[-2000:]

    port = free_port()
    base = f"http://127.0.0.1:{port}"
    process, log = start_as_written(command, workdir, port)
    try:
        deadline = Deadline(300)  # a hang guard: MLflow starts four workers, slow on two busy cores
        while True:
            assert process.poll() is None, log.read_text()[-3000:]
            assert not deadline.passed(), log.read_text()[-3000:]
            try:
                with urllib.request.urlopen(f"{base}/health", timeout=5) as response:
                    if response.status == 200:
                        break
            except OSError:
                pause(1)
        found = api(base, "/api/2.0/mlflow/experiments/get-by-name", experiment_name=parent[1])
        assert found["experiment"]["experiment_id"] == experiment[1]
        for run_id in [parent[2], *variants.values()]:
            info = api(base, "/api/2.0/mlflow/runs/get", run_id=run_id)["run"]["info"]
            assert (info["experiment_id"], info["status"]) == (experiment[1], "FINISHED"), info
    finally:
        stop(process)


def test_on_a_port_another_program_holds_the_readme_says_what_mlflow_does(
    readme_main_job: tuple[Path, subprocess.CompletedProcess],
) -> None:
    """The README: "Where another program holds port 5000, MLflow logs `Address already in use` and serves
    nothing": the same command as written, on a port this test holds, says so and stops."""
    assert "MLflow logs `Address already in use` and serves nothing" in doc_text()
    workdir, _ = readme_main_job
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        process, log = start_as_written(readme_ui_command(), workdir, holder.getsockname()[1])
        try:
            process.wait(timeout=300)  # a hang guard
        finally:
            stop(process)
    assert "Address already in use" in log.read_text(), log.read_text()[-3000:]


def cli_pipelines() -> list[str]:
    """docs/cli.md's ``--json | jq`` commands, as written (their trailing comments are the shell's)."""
    (block,) = re.findall(r"```bash\n(.*?)```", doc_raw("docs/cli.md"), re.S)
    return [line for line in block.splitlines() if line.strip()]


@needs("jq")
def test_the_cli_pages_jq_pipelines_print_the_primary_verdict_and_the_worse_rows(
    tmp_path: Path, embedding_cache: Path
) -> None:
    """docs/cli.md's two pipelines, run by bash as written (``pipefail``: a failed run or jq fails the
    line) in a folder laid out like the checkout: the first prints dbsf's primary verdict, the one the
    README's sample gives; the second the rows whose verdict is worse, none on the main job (the README's
    table), so nothing, where a wrong path would make jq fail."""
    (tmp_path / "configs").symlink_to(REPO / "configs")
    verdict = readme_match(r"Verdict dbsf: ([a-z ]+) on ndcg@10,").group(1)
    assert "│ worse" not in readme_section("What you see")
    first, second = cli_pipelines()
    outputs = []
    for command in (first, second):
        done = subprocess.run(
            ["bash", "-o", "pipefail", "-c", command], cwd=tmp_path, env=cli_env(embedding_cache),
            capture_output=True, text=True, timeout=1200,
        )  # fmt: skip
        assert done.returncode == 0, (command, done.stderr[-3000:])
        outputs.append(done.stdout)
    assert outputs == [f"{verdict}\n", ""]
