"""A model of the wrong kind for its key is refused at that key, from the model's own files: a bi-encoder
(all-MiniLM-L6-v2: ``config.json`` declares ``BertModel``, ``modules.json`` pools it) as a cross-encoder
rerank, where transformers would bolt on a randomly initialised head (two runs of one config gave nDCG@10
0.791 then 0.783); and a cross-encoder (a ``*ForSequenceClassification`` head) as an embedding model."""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path

import pytest
from support.cli import error_lines, invoke_cli
from support.configs import block_config

from abcompare.config import load_config
from abcompare.core.errors import ConfigError

write = partial(block_config, name="kind")


def cross_encoder_folder(folder: Path) -> Path:
    """The files a hub cross-encoder has (config.json naming its classification head, weights, a
    tokenizer); their contents are never loaded: the kind is refused first."""
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"architectures": ["BertForSequenceClassification"]}))
    (folder / "model.safetensors").write_bytes(b"\0")
    (folder / "tokenizer.json").write_text("{}")
    return folder


def test_a_bi_encoder_as_a_cross_encoder_rerank_is_refused_at_its_model_key(tmp_path: Path) -> None:
    rerank = {"type": "cross-encoder", "model": "all-MiniLM-L6-v2"}
    path = write(tmp_path, {"retrievers": {"bm25": {}}}, {"rerank": rerank})
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert info.value.field == "treatments.t.rerank.model"
    assert info.value.line == path.read_text().splitlines().index("      model: all-MiniLM-L6-v2") + 1
    assert "is not a cross-encoder (BertModel)" in info.value.message
    assert "bi-encoder" in (info.value.hint or "")


def test_the_same_config_on_the_command_line_is_one_error_line(tmp_path: Path, embedding_cache) -> None:
    path = write(
        tmp_path,
        {"retrievers": {"bm25": {}}},
        {"rerank": {"type": "cross-encoder", "model": "all-MiniLM-L6-v2"}},
    )
    result = invoke_cli(["validate", str(path)], tmp_path, embedding_cache)
    assert result.returncode == 2
    (line,) = error_lines(result.stderr)
    assert "treatments.t.rerank.model: model 'all-MiniLM-L6-v2' is not a cross-encoder" in line
    assert "Some weights" not in result.stderr  # no transformers load report: nothing was loaded


@pytest.mark.parametrize("key", ["retrievers.dense", "rerank"])
def test_a_cross_encoder_as_an_embedding_model_is_refused_at_its_model_key(tmp_path: Path, key: str) -> None:
    model = str(cross_encoder_folder(tmp_path / "ce"))
    treatment = (
        {"retrievers": {"dense": {"model": model}}, "fusion": {"method": "rrf"}}
        if key == "retrievers.dense"
        else {"rerank": {"type": "bi-encoder", "model": model}}
    )
    path = write(tmp_path, {"retrievers": {"bm25": {}}}, treatment)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert info.value.field == f"treatments.t.{key}.model"
    assert "is a cross-encoder (BertForSequenceClassification" in info.value.message


def test_a_cross_encoder_folder_passes_as_a_cross_encoder_rerank(tmp_path: Path) -> None:
    model = str(cross_encoder_folder(tmp_path / "ce"))
    path = write(
        tmp_path, {"retrievers": {"bm25": {}}}, {"rerank": {"type": "cross-encoder", "model": model}}
    )
    assert load_config(path).treatments["t"].rerank.model == model
