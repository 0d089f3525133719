"""Helpers for end-to-end tests: run the installed `abcompare` command the way a user does."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from support.cli import cli_command

REPO = Path(__file__).resolve().parents[2]


def cli_env(cache_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MLFLOW_")}
    env["ABCOMPARE_CACHE_DIR"] = str(cache_dir)
    env["MLFLOW_SUPPRESS_PRINTING_URL_TO_STDOUT"] = "true"
    env["HF_HUB_OFFLINE"] = "1"
    return env


def run_cli(args: list[str], cwd: Path, cache_dir: Path, timeout: float = 600) -> subprocess.CompletedProcess:
    """Run the installed console script (the very command a user types) and capture its output."""
    return subprocess.run(
        cli_command() + args, cwd=cwd, env=cli_env(cache_dir), capture_output=True, text=True, timeout=timeout
    )


def execute_notebook(folder: Path) -> tuple[str, str, str]:
    """Execute ``notebooks/analysis.ipynb`` top to bottom as Jupyter does when started in ``folder`` (the
    kernel inherits this process's environment): its stdout, its stderr and its displayed tables' text."""
    import nbformat
    from nbclient import NotebookClient

    notebook = nbformat.read(REPO / "notebooks" / "analysis.ipynb", as_version=4)
    client = NotebookClient(
        notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(folder)}}
    )
    client.execute()
    outputs = [output for cell in notebook.cells if cell.cell_type == "code" for output in cell.outputs]
    streams = [output for output in outputs if output.get("output_type") == "stream"]
    stdout = "\n".join(str(o.get("text", "")) for o in streams if o.get("name") == "stdout")
    stderr = "\n".join(str(o.get("text", "")) for o in streams if o.get("name") == "stderr")
    tables = "\n".join(str(output.get("data", {}).get("text/plain", "")) for output in outputs)
    return stdout, stderr, tables
