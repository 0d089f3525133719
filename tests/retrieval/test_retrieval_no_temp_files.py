"""Nothing is written outside the store, the artifact root and the cache folder: loading an ONNX model
(the packaged int8 one) left onnxruntime's session file ``.ses`` in ``$TMPDIR``, and a refused
cross-encoder left ``$TMPDIR/torchinductor_root``. Each runs with its own empty ``$TMPDIR`` here."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import yaml
from support.cli import run_cli

LOAD_INT8 = """
from abcompare.retrieval.dense import OnnxEncoder, check_model
OnnxEncoder(check_model("all-MiniLM-L6-v2-int8")).encode(["where do apples grow"], 8)
"""


def test_loading_an_onnx_model_leaves_nothing_in_tmpdir(tmp_path: Path) -> None:
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp)}
    subprocess.run([sys.executable, "-c", LOAD_INT8], env=env, check=True, cwd=tmp_path, timeout=600)
    assert sorted(p.name for p in tmp.iterdir()) == []


def test_a_refused_cross_encoder_leaves_nothing_in_tmpdir(tmp_path: Path, embedding_cache) -> None:
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    config = tmp_path / "ce.yaml"
    rerank = {"type": "cross-encoder", "model": "all-MiniLM-L6-v2"}
    document = {"name": "ce", "dataset": {"name": "hr-docs"}, "control": {"retrievers": {"bm25": {}}}}
    config.write_text(yaml.safe_dump(document | {"treatments": {"t": {"rerank": rerank}}}))
    for command in ("validate", "run"):
        result = run_cli([command, str(config)], tmp_path, embedding_cache, TMPDIR=str(tmp))
        assert result.returncode == 2, result.stderr[-2000:]
        assert sorted(p.name for p in tmp.iterdir()) == [], command
