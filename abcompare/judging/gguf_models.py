"""A GGUF model converted once into a plain transformers folder (safetensors weights and its tokenizer), kept
under the GGUF file's sha256 and the transformers version that converted it.

transformers parses and de-quantises a GGUF file on every load (three parses for the tokenizer, the config and
the weights: tens of seconds for SmolLM2-135M on two cores); the converted folder loads in about a second.
Every load goes through the converted folder, the first one included, so the weights a judge or generator runs
are the same float32 de-quantised ones whichever process converted them. A conversion is written into a
scratch folder beside its place and renamed into it when complete: a killed process or a full disk leaves
no half-written model, and two processes converting at once both end with one complete folder.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from abcompare.retrieval.models import file_digest

#: The files a complete conversion holds (the rename makes them appear together).
CONVERTED_FILES = ("config.json", "model.safetensors", "tokenizer_config.json")


def converted_folder(folder: Path, gguf_file: str, models_dir: Path) -> Path:
    """The converted folder of ``folder/gguf_file`` under ``models_dir``, converting it when absent."""
    import transformers

    key = f"{file_digest(folder / gguf_file)[:32]}-transformers-{transformers.__version__}"
    kept = Path(models_dir) / "gguf-converted" / key
    if all((kept / name).is_file() for name in CONVERTED_FILES):
        return kept
    kept.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".{key}-", dir=kept.parent))
    try:
        export_gguf(folder, gguf_file, scratch)
        scratch.chmod(0o755)  # mkdtemp's 0o700 would hide the folder from other users of a shared cache
        os.rename(scratch, kept)
    except OSError:
        if not all((kept / name).is_file() for name in CONVERTED_FILES):
            raise  # not another process's complete conversion: a real failure (a full disk, permissions)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return kept


def export_gguf(folder: Path, gguf_file: str, target: Path) -> Path:
    """``folder/gguf_file`` loaded by transformers' GGUF loader and written to ``target`` as safetensors with
    its tokenizer (a GGUF-loaded model refuses ``save_pretrained``, so its weights go into a plain model of
    the same class, loaded strictly: every weight, nothing else)."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    source = str(folder)
    tokenizer = AutoTokenizer.from_pretrained(source, gguf_file=gguf_file)
    loaded = AutoModelForCausalLM.from_pretrained(source, gguf_file=gguf_file, dtype=torch.float32)
    config = AutoConfig.from_pretrained(source, gguf_file=gguf_file)
    config.architectures = [type(loaded).__name__]
    plain = type(loaded)(config)
    plain.load_state_dict(loaded.state_dict(), strict=True)
    plain.save_pretrained(target)
    tokenizer.save_pretrained(target)
    return target
