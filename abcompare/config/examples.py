"""The example configs shipped with abcompare (``abcompare examples``, ``abcompare run --example NAME``).

They are the checkout's ``configs/`` folder itself (``abcompare.examples.CONFIGS``), so a wheel runs the
same files a checkout does. Each config says the question it answers once, in its own header comment:
the first sentence of the comment that ends in ``?`` (else its ``description``), read from the file here,
so no list of questions can drift from the configs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from abcompare.config.yaml_reader import load_yaml
from abcompare.core.errors import ConfigError
from abcompare.examples import CONFIGS

__all__ = ["ExampleConfig", "example_config", "example_configs", "example_named_like", "header_question"]

_SENTENCE_END = re.compile(r"(?<=[.?!])\s+(?=[A-Z])")  # "e.g. production" is one sentence


@dataclass(frozen=True)
class ExampleConfig:
    """One shipped config: its name (the file's stem), where it is, and the question it answers."""

    name: str
    path: Path
    question: str


def header_question(text: str) -> str | None:
    """The question a config's header comment asks: its first sentence ending in ``?`` (the comment is
    the ``#`` lines before the first key), or None when the header asks none."""
    comment: list[str] = []
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped.startswith("#"):
            if stripped:
                break
            continue
        comment.append(stripped.lstrip("#").strip())
    sentences = _SENTENCE_END.split(" ".join(part for part in comment if part))
    return next((sentence for sentence in sentences if sentence.endswith("?")), None)


def _read_example(path: Path) -> ExampleConfig | None:
    """The example a YAML file in ``CONFIGS`` is, or None when it is no experiment config (a file of
    variants, a list): a config is a mapping with a ``dataset`` (or ``datasets``) and a ``control``."""
    text = path.read_text(encoding="utf-8")
    data = load_yaml(text, path).data
    if not (isinstance(data, dict) and ("dataset" in data or "datasets" in data) and "control" in data):
        return None
    question = header_question(text) or str(data.get("description") or "").strip()
    return ExampleConfig(path.stem, path, question)


def example_configs() -> list[ExampleConfig]:
    """Every shipped example config, by name."""
    found = (_read_example(path) for path in sorted(CONFIGS.glob("*.yaml")))
    return [example for example in found if example is not None]


def _key(name: str) -> str:
    return name.strip().lower().removesuffix(".yaml").replace("-", "_")


def example_config(name: str) -> Path:
    """The path of the shipped example config ``name`` (``rrf_vs_dbsf``; ``rrf-vs-dbsf`` and a ``.yaml``
    ending are the same name); an unknown name is a ``ConfigError`` at ``--example`` naming the known ones."""
    examples = {_key(example.name): example for example in example_configs()}
    example = examples.get(_key(name))
    if example is None:
        known = ", ".join(sorted(e.name for e in examples.values()))
        raise ConfigError(
            f"no example config named {name!r}",
            field="--example",
            hint=f"known examples: {known} (`abcompare examples` lists them with their questions)",
        )
    return example.path


def example_named_like(path: Path) -> str | None:
    """The shipped example whose file name ``path`` has (``configs/rrf_vs_dbsf.yaml``: ``rrf_vs_dbsf``), or
    None: what a missing config's error names, since outside a checkout ``--example`` runs that file."""
    if Path(path).suffix.lower() not in (".yaml", ".yml"):
        return None
    wanted = _key(Path(path).stem)
    return next((example.name for example in example_configs() if _key(example.name) == wanted), None)
