"""A sweep is config: a grid (or list) of settings expands into ordinary treatments before anything runs."""

from __future__ import annotations

import itertools
import warnings
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from abcompare.config import load_config
from abcompare.config.sweep import SweepSettings, candidate_name, expand_sweep, nested
from abcompare.core.errors import ConfigError

REPO = Path(__file__).resolve().parents[2]

BASE = """\
name: sweep-test
dataset: {{name: hr-docs}}
control:
  retrievers:
    bm25: {{}}
    dense: {{}}
  fusion: {{method: rrf, k: 60}}
{rest}
"""


def config_from(tmp_path: Path, rest: str) -> Path:
    path = tmp_path / "sweep.yaml"
    path.write_text(BASE.format(rest=rest))
    return path


def test_a_grid_expands_into_treatments_named_from_their_settings(tmp_path):
    path = config_from(tmp_path, "sweep:\n  grid:\n    fusion.method: [rrf, rsf]\n    fusion.k: [10, 30]\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a sweep changes several settings by design: no warning per point
        config = load_config(path)
    assert list(config.treatments) == [
        "fusion.method=rrf,fusion.k=10",
        "fusion.method=rrf,fusion.k=30",
        "fusion.method=rsf,fusion.k=10",
    ]
    assert config.treatments["fusion.method=rrf,fusion.k=30"].fusion.k == 30
    assert config.treatments["fusion.method=rsf,fusion.k=10"].fusion.method == "rsf"
    plan = config.sweep_plan
    assert plan.points == 4 and plan.duplicates == [
        "fusion.method=rsf,fusion.k=30 is the same pipeline as fusion.method=rsf,fusion.k=10"
    ]
    assert plan.summary() == "sweep: 4 grid points -> 3 candidates, 1 duplicates removed"
    assert plan.settings["fusion.method=rrf,fusion.k=10"] == {"fusion.method": "rrf", "fusion.k": 10}
    assert config.sweep.select.folds == 5


def test_invalid_points_are_skipped_with_a_note_and_explicit_treatments_stay(tmp_path):
    rest = (
        "treatments:\n  bm25-only:\n    retrievers: {dense: null}\n    fusion: null\n"
        "sweep:\n  points:\n    - {fusion.method: dbsf}\n    - {fusion.method: nonsense}\n    - {depth: 0}\n"
    )
    config = load_config(config_from(tmp_path, rest))
    assert list(config.treatments) == ["bm25-only", "fusion.method=dbsf"]
    invalid = config.sweep_plan.invalid
    assert len(invalid) == 2
    assert invalid[0].startswith("fusion.method=nonsense: fusion.method:")
    assert invalid[1].startswith("depth=0: depth:")


def test_an_unknown_setting_is_a_located_error_with_a_suggestion(tmp_path):
    path = config_from(tmp_path, "sweep:\n  grid:\n    fusoin.k: [10, 30]\n")
    expected = r"sweep\.yaml:10: sweep\.grid\.fusoin\.k: unknown setting 'fusoin\.k' \(did you mean 'fusion'"
    with pytest.raises(ConfigError, match=expected):
        load_config(path)


def test_a_grid_over_the_bound_is_refused_before_anything_runs(tmp_path):
    rest = (
        "sweep:\n  grid:\n    fusion.k: [1, 2, 3, 4, 5, 6]\n    depth: [10, 20, 30, 40]\n  max_variants: 20\n"
    )
    bound = r"grid has 24 points \(6 of fusion\.k x 4 of depth\), more than max_variants \(20\)"
    with pytest.raises(ConfigError, match=bound):
        load_config(config_from(tmp_path, rest))
    with pytest.raises(ConfigError, match="sweep.max_variants"):
        load_config(config_from(tmp_path, "sweep:\n  grid: {fusion.k: [1]}\n  max_variants: 5000\n"))


def test_a_sweep_needs_a_grid_or_points_and_no_empty_axis(tmp_path):
    with pytest.raises(ConfigError, match="give either 'grid'"):
        load_config(config_from(tmp_path, "sweep:\n  select: {folds: 3}\n"))
    with pytest.raises(ConfigError, match="grid path 'fusion.k' has no values"):
        load_config(config_from(tmp_path, "sweep:\n  grid: {fusion.k: []}\n"))
    with pytest.raises(ConfigError, match="no valid candidate"):
        load_config(config_from(tmp_path, "sweep:\n  grid: {fusion.method: [bogus, worse]}\n"))


def test_the_shipped_fusion_sweep_has_24_distinct_candidates():
    config = load_config(REPO / "configs" / "fusion_sweep.yaml")
    assert len(config.treatments) == 24
    identities = {v.pipeline_identity() for v in config.treatments.values()}
    assert len(identities) == 24
    assert config.sweep.select.metric == "ndcg@10"


def test_pipeline_identity_ignores_settings_without_effect():
    config = load_config(REPO / "configs" / "rrf_vs_dbsf.yaml")
    control = config.control
    same = control.model_copy(update={"fusion": control.fusion.model_copy(update={"weights": {"bm25": 1.0}})})
    assert same.pipeline_identity() == control.pipeline_identity()
    dbsf = config.treatments["dbsf"]
    other_k = dbsf.model_copy(update={"fusion": dbsf.fusion.model_copy(update={"k": 5})})
    assert other_k.pipeline_identity() == dbsf.pipeline_identity()
    rrf_k = control.model_copy(update={"fusion": control.fusion.model_copy(update={"k": 5})})
    assert rrf_k.pipeline_identity() != control.pipeline_identity()


axis_values = st.lists(st.integers(-3, 3), min_size=1, max_size=4, unique=True)


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(st.sampled_from(["a.x", "a.y", "b"]), axis_values, min_size=1, max_size=3))
def test_expansion_is_every_combination_minus_the_invalid_and_the_repeated(grid):
    """Candidates are the product of the axes in order; a point is invalid when its values sum below
    zero, and two points are one pipeline when their values have the same absolute sum."""

    def build(override):
        values = [override.get("b", 0), *override.get("a", {}).values()]
        if sum(values) < 0:
            raise ValueError("sum below zero")
        return abs(sum(values))

    plan = expand_sweep(SweepSettings(grid=grid), build, identity=lambda v: v)
    combos = [dict(zip(grid, combo, strict=True)) for combo in itertools.product(*grid.values())]
    valid = [c for c in combos if sum(c.values()) >= 0]
    firsts, seen = [], set()
    for combo in valid:
        if abs(sum(combo.values())) not in seen:
            seen.add(abs(sum(combo.values())))
            firsts.append(combo)
    varying = [p for p in grid if len(grid[p]) > 1]
    assert list(plan.candidates) == [candidate_name(c, varying) for c in firsts]
    assert [plan.candidates[candidate_name(c, varying)] for c in firsts] == [nested(c) for c in firsts]
    assert len(plan.invalid) == len(combos) - len(valid)
    assert len(plan.duplicates) == len(valid) - len(firsts)
    assert plan.points == len(combos)
