"""A ``python`` judge handed over to :func:`abcompare.runner.run_comparison` (``judges={name: fn}``) is the
judge of the run: the labels are the callable's grades of the (query text, hit text) pairs it was asked,
and a name nobody handed over, or a value that is not callable, is refused at ``judge.name`` before any
retrieval."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.configs import MINIMAL

from abcompare.config import load_config
from abcompare.core.errors import ConfigError
from abcompare.runner import run_comparison

pytestmark = pytest.mark.slow


def by_length(query_text: str, hit_text: str) -> int:
    """A judge anyone can recompute: the hit's length in 300-character steps, at most 3."""
    return min(3, len(hit_text) // 300)


@pytest.fixture
def config_path(tmp_path: Path) -> Path:
    """BM25 only (nothing to encode), with a cache of its own: no grade comes from another test's cache."""
    path = tmp_path / "judged.yaml"
    path.write_text(
        MINIMAL
        + f"cache_dir: {tmp_path / 'cache'}\ntracking: {{enabled: false}}\n"
        + "significance: {n_resamples: 200, seed: 0}\nefficiency: {repeats: 0}\n"
        + "judge: {provider: python, name: length, max_pairs: 4, agreement_pairs: 6}\n"
    )
    return path


def test_the_handed_over_judge_grades_the_pairs_it_is_asked(config_path: Path) -> None:
    asked: list[tuple[str, str]] = []

    def judge(query_text: str, hit_text: str) -> int:
        asked.append((query_text, hit_text))
        return by_length(query_text, hit_text)

    result = run_comparison(load_config(config_path), judges={"length": judge})
    outcome = result.judge
    assert outcome is not None and outcome.judge == "python:length"
    labels = outcome.labels
    assert len(asked) == len(labels) > 0
    texts = dict(zip(zip(labels["query_id"], labels["key"], strict=True), range(len(labels)), strict=True))
    assert len(texts) == len(labels), "each pair asked once"
    graded = labels.dropna(subset=["grade"])
    assert sorted(graded["grade"].astype(int)) == sorted(by_length(q, h) for q, h in asked)
    assert set(labels["purpose"]) <= {"pool", "agreement"}
    assert (labels["purpose"] == "pool").sum() <= 4


@pytest.mark.parametrize(
    ("judges", "says"),
    [
        (None, "nobody handed over"),
        ({"other": by_length}, "handed over: 'other'"),
        ({"length": 3}, "not a callable"),
    ],
)
def test_a_python_judge_not_handed_over_is_refused_before_any_retrieval(config_path, judges, says) -> None:
    with pytest.raises(ConfigError, match=says) as raised:
        run_comparison(load_config(config_path), judges=judges)
    assert raised.value.field == "judge.name"
