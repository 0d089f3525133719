"""Helpers for end-to-end tests: the notebook run as Jupyter runs it (the CLI helpers are in support.cli)."""

from __future__ import annotations

from pathlib import Path

from support.cli import REPO


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
