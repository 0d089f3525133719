"""A local model's grades are cached under the digest of its files, not only its name: the same file answers
from the cache, a changed file of the same name is asked again. The model's answers are stood in for (the
rule is the cache key's; the real model runs in tests/judging/test_judging_transformers.py)."""

from __future__ import annotations

from pathlib import Path

from abcompare.judging import GradeCache
from abcompare.judging.base import Answer
from abcompare.judging.transformers_judge import TransformersJudge


def judge(folder: Path, cache: GradeCache, says: int) -> TransformersJudge:
    """A judge of the one GGUF file in ``folder`` whose model answers ``says`` to everything."""
    made = TransformersJudge(str(folder), cache=cache)
    made.ask = lambda query_text, hit_text: Answer(str(says), says)  # type: ignore[method-assign]
    return made


def test_a_changed_model_file_is_not_answered_from_the_old_files_grades(tmp_path: Path) -> None:
    model = tmp_path / "model"
    model.mkdir()
    gguf = model / "tiny.gguf"
    gguf.write_bytes(b"weights, first training")
    cache = GradeCache(tmp_path / "judge.sqlite")

    first = judge(model, cache, 2)
    assert first.grade("q", "h").value == 2 and first.cost.calls == 1
    same = judge(model, cache, 3)
    grade = same.grade("q", "h")
    assert (grade.value, grade.cached, same.cost.calls, same.cost.cache_hits) == (2, True, 0, 1)

    gguf.write_bytes(b"weights, retrained")
    changed = judge(model, cache, 3)
    assert changed.identity == first.identity, "the name the output shows stays the model's"
    grade = changed.grade("q", "h")
    assert (grade.value, grade.cached, changed.cost.calls) == (3, False, 1)
    assert changed.cache_identity != first.cache_identity
