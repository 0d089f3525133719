"""What judging cost: calls made, tokens in and out, seconds spent (cache hits cost nothing and are counted
apart), for the cost table beside the variants' own cost."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class JudgeCost:
    """Counters a judge adds to as it works; ``unusable`` counts answers that gave no grade."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    cache_hits: int = 0
    unusable: int = 0
    retries: int = 0
    problems: dict[str, int] = field(default_factory=dict)

    def add_problem(self, problem: str) -> None:
        self.unusable += 1
        self.problems[problem] = self.problems.get(problem, 0) + 1

    def as_dict(self) -> dict[str, float | int]:
        return {
            "judge_calls": self.calls,
            "judge_prompt_tokens": self.prompt_tokens,
            "judge_completion_tokens": self.completion_tokens,
            "judge_seconds": round(self.seconds, 3),
            "judge_cache_hits": self.cache_hits,
            "judge_unusable": self.unusable,
            "judge_retries": self.retries,
        }
