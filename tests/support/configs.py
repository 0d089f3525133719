"""Config texts the tests write: the smallest valid comparison on the shipped example, a BM25 control on any
collection, and the pieces they share (each written once)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml


def bm25_control(dataset: str, *, top_k: int | None = None, name: str = "t", chunking: str = "") -> str:
    """A config's head: its ``name``, the ``dataset`` block (YAML lines, indented two spaces) and a BM25
    control (optionally its ``chunking`` flow mapping and ``top_k``); treatments and the rest follow."""
    lines = [f"name: {name}", "dataset:", *(f"  {line}" for line in dataset.splitlines()), "control:"]
    if chunking:
        lines.append(f"  chunking: {chunking}")
    lines += ["  retrievers:", "    bm25: {}"]
    if top_k is not None:
        lines.append(f"  top_k: {top_k}")
    return "\n".join(lines) + "\n"


#: The smallest valid comparison: BM25 against BM25 with another k1, on the shipped example.
MINIMAL = bm25_control("name: hr-docs") + "treatments:\n  loose:\n    retrievers:\n      bm25: {k1: 0.9}\n"


def braced(text: str) -> str:
    """``text`` as a literal part of a ``str.format`` template (its braces doubled)."""
    return text.replace("{", "{{").replace("}", "}}")


def cranfield_bm25(folder: Path, name: str) -> str:
    """The head of a document-level BM25 comparison on the shared Cranfield copy at ``folder``."""
    return bm25_control(f"path: {folder}\nlevel: document", top_k=50, name=name, chunking="{strategy: none}")


def block_config(folder: Path, control: dict[str, Any], treatment: dict[str, Any], *, name: str) -> Path:
    """``folder/<name>.yaml``: a control and one treatment ``t`` on the shipped example, in block style (one
    key a line), so the line of every key can be found in the text."""
    document = {
        "name": name,
        "dataset": {"name": "hr-docs"},
        "control": control,
        "treatments": {"t": treatment},
    }
    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump(document, default_flow_style=False, sort_keys=False))
    return path


#: A comparison across two collections small enough for a UI or stage test: the shipped example and the shared
#: Cranfield copy (``{cranfield}``), both at document level, BM25 against BM25 with a lower k1, untimed. A
#: ``str.format`` template's body (its braces doubled); a test adds its name and its own sections.
TWO_COLLECTIONS = """\
datasets:
  - {{name: hr-docs, level: document}}
  - {{name: cranfield, path: {cranfield}, level: document}}
control: {{chunking: {{strategy: none}}, retrievers: {{bm25: {{}}}}}}
treatments:
  bm25-k1: {{retrievers: {{bm25: {{k1: 0.6}}}}}}
evaluation: {{convention: trec}}
significance: {{n_resamples: 1000}}
efficiency: {{repeats: 0}}
"""
