"""The ``python`` provider: a callable handed over from Python (``run_comparison(..., judges={...})``) that
takes the query text and the hit text and returns a grade (an int) or an answer to read one from (a str)."""

from __future__ import annotations

from collections.abc import Callable

from abcompare.judging.base import Answer, ModelJudge
from abcompare.judging.cache import GradeCache
from abcompare.judging.grades import SCALE, read_grade
from abcompare.judging.prompt import PROMPT_VERSION

#: What ``run_comparison(..., judges={name: fn})`` hands over: ``fn(query_text, hit_text)`` returns a grade
#: 0-3, or a text to read one from (None: no answer).
JudgeFunction = Callable[[str, str], int | str | None]


class PythonJudge(ModelJudge):
    """``function(query_text, hit_text)`` as a judge named ``python:<name>``."""

    def __init__(
        self,
        function: JudgeFunction,
        name: str,
        prompt_version: str = PROMPT_VERSION,
        cache: GradeCache | None = None,
    ) -> None:
        super().__init__(f"python:{name}", prompt_version, cache)
        self.function = function

    def ask(self, query_text: str, hit_text: str) -> Answer:
        said = self.function(query_text, hit_text)
        if isinstance(said, bool) or not isinstance(said, (int, str, type(None))):
            return Answer(
                repr(said)[:200], None, f"the callable returned a {type(said).__name__}, not a grade"
            )
        if isinstance(said, int):
            if said not in SCALE:
                return Answer(str(said), None, f"grade {said} is outside the scale 0-3")
            return Answer(str(said), said)
        grade, problem = read_grade(said)
        return Answer(said or "", grade, problem)
