"""RM3 on Cranfield and CISI: docs/retrieval.md shows what scripts/rm3_cranfield.py prints, and its prose
the P@30 changes of that table."""

from __future__ import annotations

import importlib.util
import re

import pytest
from support.cli import REPO

DOC = REPO / "docs" / "retrieval.md"


def script():
    spec = importlib.util.spec_from_file_location("rm3_cranfield", REPO / "scripts" / "rm3_cranfield.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_the_rm3_table_in_the_docs_is_the_scripts_output(datasets_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("ABCOMPARE_CACHE_DIR", str(tmp_path))
    lines = script().table_lines(datasets_dir)
    text = DOC.read_text(encoding="utf-8")
    block = re.search(
        r"<!-- the output of: python scripts/rm3_cranfield.py -->\n(.*?)<!-- end of output -->", text, re.S
    )
    assert block, "docs/retrieval.md has the script's output block"
    assert block.group(1).splitlines() == lines, (
        "run `python scripts/rm3_cranfield.py` into docs/retrieval.md"
    )
    # RM3 helps both collections significantly, and the prose quotes the table's P@30 changes
    assert all("better" in line for line in lines if "| ndcg@10 |" in line)
    changes = [line.split(" | ")[5] for line in lines if "| precision@30 |" in line]
    prose = " ".join(text.split())
    assert f"by a similar amount at P@30 ({changes[0]} and {changes[1]})" in prose
