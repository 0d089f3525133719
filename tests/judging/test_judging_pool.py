"""Judging the pool of the shipped example with a Python judge: the pairs asked are the pool's first
``judge.max_pairs`` in its decisive-first order, each asked with only its query's and hit's texts."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from support.configs import MINIMAL

from abcompare.config import load_config
from abcompare.core.errors import ConfigError
from abcompare.data.pooling import read_pool
from abcompare.judging.prompt import PROMPT_VERSION
from abcompare.judging.stage import judge_pool
from abcompare.runner import pool_to_file, pool_unjudged_hits

pytestmark = pytest.mark.slow


def test_the_pool_is_judged_decisive_first_up_to_max_pairs(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(
        MINIMAL + "tracking: {enabled: false}\njudge: {provider: python, name: length, max_pairs: 3}\n"
    )
    config = load_config(path, [f"cache_dir={tmp_path}"])
    seen: list[tuple[str, str]] = []

    def by_length(query_text: str, hit_text: str) -> int:
        seen.append((query_text, hit_text))
        return min(3, len(hit_text) // 200)

    pool = pool_unjudged_hits(config, depth=5, order="decisive")
    judged = judge_pool(config, pool, judges={"length": by_length})
    assert len(pool) > 3, "the example's pool is larger than the budget"
    assert (
        judged.labels[["query_id", "key"]].values.tolist()
        == pool[["query_id", "key"]].head(3).values.tolist()
    )
    assert seen == list(zip(pool["query"].head(3), pool["text"].head(3), strict=True))
    assert judged.labels["grade"].tolist() == [min(3, len(t) // 200) for t in pool["text"].head(3)]
    assert judged.over_budget == len(pool) - 3


def test_judging_the_pool_needs_a_judge(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(MINIMAL)
    with pytest.raises(ConfigError, match="no judge"):
        judge_pool(load_config(path), pd.DataFrame())


def test_the_pool_file_says_which_hits_the_judge_graded_and_never_reads_its_grades_back(
    tmp_path: Path,
) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(
        MINIMAL + "tracking: {enabled: false}\njudge: {provider: python, name: length, max_pairs: 3}\n"
    )
    config = load_config(path, [f"cache_dir={tmp_path}"])

    def by_length(query_text: str, hit_text: str) -> int:
        return min(3, len(hit_text) // 200)

    out = tmp_path / "pool.csv"
    pool_to_file(config, out, depth=5, judges={"length": by_length})
    written = pd.read_csv(out, dtype=str, keep_default_na=False)
    assert list(written.columns[-2:]) == ["judge_grade", "judged_by"]
    first, rest = written.head(3), written.iloc[3:]
    assert first["judge_grade"].astype(int).tolist() == [min(3, len(t) // 200) for t in first["text"]]
    assert set(first["judged_by"]) == {f"python:length ({PROMPT_VERSION})"}
    assert (rest["judge_grade"] == "").all() and (rest["judged_by"] == "").all()
    assert (written["grade"] == "").all(), "people's column is left for people"
    written.loc[written.index[4], "grade"] = "2"  # an annotator grades one hit the judge did not
    written.to_csv(out, index=False)
    back = read_pool(out)
    assert back[["query_id", "key", "grade"]].values.tolist() == [
        [written["query_id"].iloc[4], written["key"].iloc[4], 2]
    ]


def test_pooling_with_a_python_judge_nobody_handed_over_is_refused_before_pooling(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(MINIMAL + "judge: {provider: python, name: length}\n")
    with pytest.raises(ConfigError, match="nobody handed over") as raised:
        pool_to_file(load_config(path), tmp_path / "pool.csv")
    assert raised.value.field == "judge.name" and not (tmp_path / "pool.csv").exists()
