"""What ``run`` refuses about the inputs, ``validate`` refuses too, and ``run`` refuses it before any
retrieval or encoding (one shared stage, ``abcompare.runner.check_inputs``): a rewrites line naming an
unknown query id, a dense model folder torch cannot load (only a ``model.onnx``, no tokenizer), and a
level whose keys cannot meet the judgments' ids (chunk level against document judgments)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.cli import REPO, error_lines, invoke_cli

from abcompare.config import load_config
from abcompare.core.errors import AlignmentError, ConfigError
from abcompare.runner import run_comparison

REWRITES = REPO / "configs" / "query_variants" / "hr_docs.jsonl"


def beir_folder(folder: Path) -> Path:
    """A three-document collection judged at document level (ids without '#chunk-')."""
    folder.mkdir()
    (folder / "qrels").mkdir()
    docs = {"d1": "apples grow on trees", "d2": "rivers flow to the sea", "d3": "trains run on rails"}
    (folder / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": d, "title": "", "text": t}) + "\n" for d, t in docs.items())
    )
    queries = {"q1": "where do apples grow", "q2": "where do rivers flow"}
    (folder / "queries.jsonl").write_text(
        "".join(json.dumps({"_id": q, "text": t}) + "\n" for q, t in queries.items())
    )
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t1\n")
    return folder


def config_file(folder: Path, control: str, treatment: str, level: str = "chunk") -> Path:
    path = folder / "parity.yaml"
    path.write_text(
        f"name: parity\ndataset: {{path: {beir_folder(folder / 'beir')}, level: {level}}}\n"
        f"control:\n{control}\ntreatments:\n  t:\n{treatment}\n"
        "evaluation: {cutoffs: [1], convention: trec}\ntracking: {enabled: false}\n"
    )
    return path


def test_validate_refuses_chunk_level_against_document_judgments(tmp_path: Path, embedding_cache) -> None:
    path = config_file(tmp_path, "  retrievers: {bm25: {}}", "    depth: 5")
    result = invoke_cli(["validate", str(path)], tmp_path, embedding_cache)
    assert result.returncode == 2, result.stdout + result.stderr[-2000:]
    (line,) = error_lines(result.stderr)
    assert "qrels/test.tsv" in line and "annotation ids look like document ids" in line
    assert "valid" not in result.stdout
    level_document = invoke_cli(
        ["validate", str(path), "--set", "dataset.level=document"], tmp_path, embedding_cache
    )
    assert level_document.returncode == 0, level_document.stderr[-2000:]


def test_run_refuses_misaligned_ids_before_any_variant_retrieves(tmp_path: Path) -> None:
    """The control is a Python retriever whose document-id hits align; the treatment's BM25 would return
    chunk keys that cannot: refused before the control's retriever is even asked."""
    asked: list[int] = []

    def documents(queries):
        asked.append(len(queries))
        return {q: [{"id": "d1", "score": 1.0}] for q in queries["query_id"]}

    path = config_file(tmp_path, "  run: {python: documents}", "    run: null\n    retrievers: {bm25: {}}")
    config = load_config(path)
    with pytest.raises(AlignmentError, match="annotation ids look like document ids"):
        run_comparison(config, config_path=path, retrievers={"documents": documents})
    assert asked == []


def test_validate_refuses_a_rewrites_line_naming_an_unknown_query(tmp_path: Path, embedding_cache) -> None:
    rewrites = tmp_path / "rewrites.jsonl"
    rewrites.write_text(
        REWRITES.read_text() + json.dumps({"query_id": "no-such-query", "variants": ["x"]}) + "\n"
    )
    unknown_line = len(rewrites.read_text().splitlines())
    path = tmp_path / "planned.yaml"
    path.write_text(
        "name: planned\ndataset: {name: hr-docs}\ncontrol:\n  retrievers: {bm25: {}}\n"
        f"treatments:\n  planned:\n    query_planning: {{variants: {rewrites}}}\n"
    )
    result = invoke_cli(["validate", str(path)], tmp_path, embedding_cache)
    assert result.returncode == 2, result.stdout + result.stderr[-2000:]
    (line,) = error_lines(result.stderr)
    assert f"{rewrites}:{unknown_line}:" in line and "unknown query id 'no-such-query'" in line


def test_a_model_folder_with_only_an_onnx_file_is_refused_at_its_key(tmp_path: Path) -> None:
    model = tmp_path / "model"
    model.mkdir()
    (model / "model.onnx").write_bytes(b"\x08\x07")  # never read: what is missing is refused first
    path = tmp_path / "dense.yaml"
    path.write_text(
        f"name: d\ndataset: {{name: hr-docs}}\ncontrol:\n  retrievers:\n    dense: {{model: {model}}}\n"
        "treatments:\n  t: {depth: 5}\n"
    )
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert (info.value.field, info.value.line) == ("control.retrievers.dense.model", 5)
    assert "no torch model" in info.value.message and "tokenizer" in info.value.message
    assert "backend: onnx" in (info.value.hint or "")
