"""A judge's grade of one (query, hit) pair on the 0-3 relevance scale, with where it came from, and the one
rule that reads a grade out of a model's free-text answer."""

from __future__ import annotations

import re
from dataclasses import dataclass

#: The graded relevance scale every judge answers on (UMBRELA's: 0 irrelevant .. 3 perfectly relevant).
SCALE: tuple[int, ...] = (0, 1, 2, 3)
GRADE_TOKENS: tuple[str, ...] = tuple(str(g) for g in SCALE)

_FINAL = re.compile(r"final\s+score\s*[:=]?\s*(-?\d+(?:\.\d+)?)", re.IGNORECASE)
_ALONE = re.compile(r"^\s*(?:##\s*)?(?:score|grade)?\s*[:=]?\s*(-?\d+(?:\.\d+)?)\s*[.!]?\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class Grade:
    """One pair's label from a judge.

    ``value`` is the grade on :data:`SCALE`, or None when the answer was unusable (``problem`` says why: the
    pair then counts as not judged, never as a silent 0). ``judge`` names the judge (provider and model),
    ``prompt_version`` the prompt it was asked with, ``source`` the kind of label (``judge``, or the file's
    own source name for imported labels). ``answer`` is what the model said (cut to 200 characters),
    ``cached`` whether it came from the cache rather than a call.
    """

    value: int | None
    judge: str
    prompt_version: str
    source: str = "judge"
    answer: str = ""
    problem: str | None = None
    cached: bool = False

    @property
    def usable(self) -> bool:
        return self.value is not None


def read_grade(answer: str | None) -> tuple[int | None, str | None]:
    """The grade a model's answer states, as ``(grade, None)``, or ``(None, why)`` for an empty answer, one
    with no grade in it, or a grade outside the scale. An answer that is just a number, or that says
    ``final score: N`` (UMBRELA's answer form; the last one counts), states a grade; nothing else does."""
    text = (answer or "").strip()
    if not text:
        return None, "empty answer"
    found = _FINAL.findall(text)
    number = found[-1] if found else None
    if number is None:
        alone = _ALONE.match(text)
        number = alone.group(1) if alone else None
    if number is None:
        return None, "no grade in the answer"
    if number not in GRADE_TOKENS:
        return None, f"grade {number} is outside the scale 0-3"
    return int(number), None
