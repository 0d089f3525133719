"""The README's main command, run verbatim (minus the install) from a folder laid out like the checkout."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from support.cli import REPO, run_cli


def readme_run_command() -> list[str]:
    text = (REPO / "README.md").read_text()
    block = re.search(r"## Two commands.*?```bash\n(.*?)```", text, re.S).group(1)
    line = next(line for line in block.splitlines() if "abcompare run" in line)
    return shlex.split(line.split("&&", 1)[1])


def test_the_documented_run_command_exits_zero(tmp_path: Path, embedding_cache: Path) -> None:
    command = readme_run_command()
    assert command[:2] == ["abcompare", "run"]
    (tmp_path / "configs").symlink_to(REPO / "configs")
    result = run_cli(command[1:], tmp_path, embedding_cache)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "dbsf vs control" in result.stdout
    assert "Verdict" in result.stdout
    assert "mlflow ui --backend-store-uri sqlite:///mlflow.db" in result.stdout
    assert (tmp_path / "mlflow.db").exists()
