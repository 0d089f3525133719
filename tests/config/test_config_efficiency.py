"""The ``efficiency`` section (how latency is timed): its defaults, its bounds as located errors, and that
it changes no quality number, so it stays out of the config's fingerprint."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.configs import bm25_control, braced

from abcompare.config import EfficiencySettings, load_config
from abcompare.core.errors import ConfigError

CONFIG = braced(bm25_control("name: hr-docs", name="timed")) + "treatments:\n  other:\n    top_k: 5\n{extra}"


def load(tmp_path: Path, extra: str = "", overrides=()):
    path = tmp_path / "config.yaml"
    path.write_text(CONFIG.format(extra=extra))
    return load_config(path, list(overrides))


def test_the_defaults_are_five_rounds_over_at_most_100_queries_in_2_seconds(tmp_path: Path) -> None:
    settings = load(tmp_path).efficiency
    assert settings == EfficiencySettings()
    assert (settings.repeats, settings.max_queries, settings.budget_seconds, settings.noise_floor) == (
        5, 100, 2.0, 0.1,
    )  # fmt: skip
    plan = settings.timing_plan()
    assert (plan.repeats, plan.max_queries, plan.budget_seconds) == (5, 100, 2.0)


@pytest.mark.parametrize(
    ("extra", "key"),
    [("  repeats: -1", "repeats"), ("  max_queries: 0", "max_queries"), ("  noise_floor: 1", "noise_floor"),
     ("  budget_seconds: -1", "budget_seconds"), ("  rounds: 3", "rounds")],
)  # fmt: skip
def test_a_bad_value_is_an_error_at_its_line(tmp_path: Path, extra: str, key: str) -> None:
    with pytest.raises(ConfigError) as info:
        load(tmp_path, f"efficiency:\n{extra}\n")
    assert key in str(info.value)
    lines = (tmp_path / "config.yaml").read_text().splitlines()
    assert lines[info.value.line - 1].strip().startswith(key)


def test_the_timing_changes_no_quality_number_so_not_the_fingerprint(tmp_path: Path) -> None:
    base = load(tmp_path)
    timed = load(tmp_path, overrides=["efficiency.repeats=9", "efficiency.noise_floor=0.2"])
    assert timed.efficiency.repeats == 9 and timed.fingerprint() == base.fingerprint()


def test_no_rounds_means_no_latency_and_the_cost_line_says_not_timed(tmp_path: Path) -> None:
    """``repeats: 0`` skips the timing pass: the build figures remain, the latency is said not timed."""
    from abcompare.outcome.sentences import cost_sentence
    from abcompare.runner import run_comparison

    extra = "efficiency: {repeats: 0}\ntracking: {enabled: false}\n"
    config = load(tmp_path, extra, [f"cache_dir={tmp_path}"])
    result = run_comparison(config)
    assert "efficiency.seconds_per_query" not in result.variants["control"].efficiency
    assert result.cost.loc["other", "index_bytes"] > 0
    assert "queries not timed" in cost_sentence(result.cost, "other")
