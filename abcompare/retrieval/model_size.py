"""Which files hold the weights a variant's models load, and how many bytes they are (the cost's
``model_bytes``): the dense retrievers' models and a rerank model, each counted once; BM25 has none.

A model folder's weights are, folder by folder, its ``*.safetensors`` files, else its PyTorch
``*.bin`` / ``*.pt`` / ``*.pth`` files (what sentence-transformers loads: safetensors first); exports for
other runtimes in ``onnx/`` or ``openvino/`` sub-folders are not loaded by the torch backend and are left
out. A folder with no torch weights at all counts its ``*.onnx`` files; a model given as one file is that
file.
"""

from __future__ import annotations

from pathlib import Path

from abcompare.retrieval.settings import DenseSettings, VariantSettings

TORCH_WEIGHTS = (".safetensors", (".bin", ".pt", ".pth"))
OTHER_RUNTIMES = frozenset({"onnx", "openvino"})


def weight_files(path: str | Path) -> list[Path]:
    """The weight files of a model folder (or the file itself), sorted (see the module docstring)."""
    root = Path(path)
    if root.is_file():
        return [root]
    found: list[Path] = []
    folders = [root, *(p for p in root.rglob("*") if p.is_dir())]
    for folder in sorted(folders):
        if OTHER_RUNTIMES & set(folder.relative_to(root).parts):
            continue
        files = sorted(p for p in folder.iterdir() if p.is_file())
        safetensors = [p for p in files if p.suffix == TORCH_WEIGHTS[0]]
        found += safetensors or [p for p in files if p.suffix in TORCH_WEIGHTS[1]]
    return found or sorted(p for p in root.rglob("*.onnx") if p.is_file())


def model_bytes(path: str | Path) -> int:
    """The bytes of a model's weight files (:func:`weight_files`)."""
    return sum(p.stat().st_size for p in weight_files(path))


def variant_models(variant: VariantSettings) -> list[str]:
    """The models a variant loads, once each, in order: its dense retrievers', then its rerank's."""
    names = [spec.model for spec in variant.retrievers.values() if isinstance(spec, DenseSettings)]
    if variant.rerank is not None:
        names.append(variant.rerank.model)
    return list(dict.fromkeys(names))


def variant_model_bytes(variant: VariantSettings) -> int:
    """The bytes of every model a variant loads (0 for BM25 alone)."""
    from abcompare.retrieval.dense import locate_model

    return sum(model_bytes(locate_model(name)) for name in variant_models(variant))
