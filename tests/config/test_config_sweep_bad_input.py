"""A sweep's bad input, at the config: what is known before expanding is refused before a single point is
built, errors name what the user wrote, and swept settings behave like the same settings written in a
treatment (paths resolve against the config's folder; the names built from values are names abcompare
accepts). The commands' side of the same classes is tests/runner/test_cli_bad_input.py."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from abcompare.config import load_config
from abcompare.config.sweep import SweepSettings, candidate_names, expand_sweep
from abcompare.core.errors import ConfigError
from abcompare.core.naming import first_collision, name_problem

BASE = """\
name: sweep-bad-input
dataset: {{name: hr-docs}}
control:
  retrievers:
    bm25: {{}}
  fusion: {{method: rrf, k: 60}}
{rest}"""


def config_from(folder: Path, rest: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "sweep.yaml"
    path.write_text(BASE.format(rest=rest))
    return path


def refused(path: Path, pattern: str) -> ConfigError:
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert re.search(pattern, str(caught.value)), str(caught.value)
    return caught.value


# ------------------------------------------------------------------ a size known before any work
def test_a_million_point_grid_is_refused_without_building_a_point():
    ten = list(range(10))
    sweep = SweepSettings(grid={f"axis{i}": ten for i in range(6)})
    built = []
    with pytest.raises(ValueError, match=r"grid has 1,000,000 points \(10 of axis0 x .* x 10 of axis5\)"):
        expand_sweep(sweep, build=built.append, identity=id)
    assert built == []


def test_the_bound_is_the_product_of_the_list_lengths(tmp_path):
    grid = "sweep:\n  grid:\n    fusion.k: [1, 2]\n    depth: [10, 20, 30]\n  max_variants: {}\n"
    assert len(load_config(config_from(tmp_path, grid.format(6))).treatments) == 6  # 2 x 3 = 6: allowed
    error = refused(
        config_from(tmp_path, grid.format(5)),
        r"grid has 6 points \(2 of fusion\.k x 3 of depth\), more than max_variants \(5\)",
    )
    assert (error.line, error.field) == (8, "sweep.grid")
    points = "sweep:\n  points: [{fusion.k: 1}, {fusion.k: 2}, {fusion.k: 3}]\n  max_variants: 2\n"
    refused(config_from(tmp_path, points), r"sweep\.points: the sweep lists 3 points, more than max_variants")


# ------------------------------------------------------------------ errors name what the user wrote
@pytest.mark.parametrize(
    "rest, line, field, message",
    [
        ("sweep:\n  grid: {}\n", 8, "sweep.grid", "the grid is empty"),
        ("sweep:\n  points: [{}]\n", 8, "sweep.points", "point 1 sets nothing"),
        ("sweep:\n  grid: {fusion..k: [1]}\n", 8, "sweep.grid", "setting path 'fusion..k' has an empty part"),
        ("sweep:\n  grid:\n    fusion.kk: [1, 2]\n", 9, "sweep.grid.fusion.kk",
         "unknown setting 'fusion.kk' (did you mean 'k'?)"),
        ("sweep:\n  points:\n    - {fusion.k: 3}\n    - {retrievers.bm25.kk1: 3}\n", 10,
         "sweep.points.1.retrievers.bm25.kk1", "unknown setting 'retrievers.bm25.kk1' (did you mean 'k1'?)"),
        ("sweep:\n  grid: {fusion.k: [1]}\n  select: {metric: ndcg@7}\n", 9, "sweep.select.metric",
         "'ndcg@7' is not computed (metrics ['precision', 'recall', 'f1', 'mrr', 'ndcg'], "
         "cutoffs [1, 5, 10]): add 7 to evaluation.cutoffs"),
        ("sweep:\n  grid: {fusion.k: [1]}\n  select: {metric: recall@5}\nevaluation: {metrics: [ndcg]}\n", 9,
         "sweep.select.metric", "'recall@5' is not computed (metrics ['ndcg'], cutoffs [1, 5, 10]): "
         "add recall to evaluation.metrics"),
        ("sweep:\n  grid: {fusion.k: [1]}\n  select: {metric: best}\n", 9, "sweep.select.metric",
         "not a metric name: 'best'"),
    ],
    ids=["empty-grid", "empty-point", "empty-part", "unknown-key", "unknown-key-in-a-point", "cutoff",
         "measure", "not-a-metric"],
)  # fmt: skip
def test_a_sweep_error_is_located_at_the_key_written(tmp_path, rest, line, field, message):
    error = refused(config_from(tmp_path, rest), re.escape(message))
    assert (Path(error.file), error.line, error.field) == (tmp_path / "sweep.yaml", line, field)


def test_select_metric_is_written_canonically(tmp_path):
    rest = "sweep:\n  grid: {fusion.k: [1, 2]}\n  select: {metric: NDCG_at_5}\n"
    config = load_config(config_from(tmp_path, rest))
    assert config.sweep.select.metric == "ndcg@5"


def test_an_invalid_point_is_named_by_its_setting_without_the_retriever_kind(tmp_path):
    config = load_config(config_from(tmp_path, "sweep:\n  grid: {retrievers.bm25.k1: [-1, 1.2]}\n"))
    assert list(config.treatments) == ["retrievers.bm25.k1=1.2"]
    (note,) = config.sweep_plan.invalid
    assert note.startswith("retrievers.bm25.k1=-1: retrievers.bm25.k1: "), note
    assert "bm25.bm25" not in note


# ------------------------------------------------------------------ swept settings behave like written ones
def test_a_swept_path_resolves_against_the_config_folder_as_a_written_one(tmp_path, monkeypatch):
    folder = tmp_path / "conf"
    for name in ("x", "y"):
        (folder / "runs" / name).mkdir(parents=True)
        (folder / "runs" / name / "prod.trec").write_text("qa-001 Q0 travel-per-diems 1 1.0 t\n")
    rest = (
        "treatments:\n  written:\n    run: {path: runs/x/prod.trec, format: trec}\n"
        "sweep:\n  grid:\n    run.path: [runs/x/prod.trec, runs/y/prod.trec]\n"
    )
    path = config_from(folder, rest)
    monkeypatch.chdir(tmp_path)  # elsewhere than the config's folder
    config = load_config(Path("conf") / "sweep.yaml")
    x, y = (folder / "runs" / name / "prod.trec" for name in ("x", "y"))
    assert config.treatments["written"].run.path == x
    # both files are called prod.trec: the names show the whole paths written, with _ for /
    assert {n: t.run.path for n, t in config.treatments.items()} == {
        "written": x,
        "run.path=runs_x_prod.trec": x,
        "run.path=runs_y_prod.trec": y,
    }
    assert config.sweep_plan.settings["run.path=runs_y_prod.trec"] == {"run.path": "runs/y/prod.trec"}
    (folder / "runs" / "y" / "prod.trec").unlink()
    error = refused(path, r"file not found: .*runs/y/prod\.trec \(written 'runs/y/prod\.trec'\)")
    assert (error.line, error.field) == (12, "sweep.grid.run.path")


def test_names_from_values_are_readable():
    varying = ["run.path"]
    assert candidate_names([{"run.path": "runs/a.trec"}, {"run.path": "runs/b.trec"}], varying, set()) == [
        "run.path=a.trec",
        "run.path=b.trec",
    ]
    assert candidate_names([{"s": "A"}, {"s": "a"}, {"s": "A"}], ["s"], set()) == ["s=A", "s=a-2", "s=A"]
    # an explicit treatment named as a point is written keeps its name (the point is then "listed twice");
    # a name that only meets it once made safe is told apart
    assert candidate_names([{"s": "x_y"}], ["s"], {"s=x_y"}) == ["s=x_y"]
    assert candidate_names([{"s": "x\u200by"}, {"s": " pad "}], ["s"], {"s=x_y"}) == ["s=x_y-2", "s= pad"]
    (long,) = candidate_names([{"s": "v" * 300}], ["s"], set())
    assert len(long) == 100 and re.fullmatch(r"s=v{89}~[0-9a-f]{8}", long), long


values = st.one_of(
    st.text(alphabet=st.sampled_from("aA/\\. _-\x00\u200b\u2028éz1"), min_size=0, max_size=130),
    st.integers(-5, 5),
    st.none(),
    st.booleans(),
    st.lists(st.text(alphabet="a/b", max_size=3), max_size=2),
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.fixed_dictionaries({"p": values}, optional={"q.r": values}), min_size=1, max_size=6),
    st.sets(st.text(alphabet="ps=aA_/.", min_size=1, max_size=6), max_size=3),
)
def test_every_derived_name_is_one_abcompare_accepts_and_distinct_points_get_distinct_names(points, taken):
    """The names' own rule (``core.naming``): no problem, and no two names (nor a name and a taken one
    other than itself) become one MLflow key."""
    varying = ["p", "q.r"]
    names = candidate_names(points, varying, set(taken))
    assert all(name_problem(name) is None for name in names), names
    by_point: dict[str, str] = {}
    for point, name in zip(points, names, strict=True):
        assert (
            by_point.setdefault(repr(sorted(point.items(), key=str)), name) == name
        )  # equal points, one name
    distinct = set(by_point.values())
    assert len(distinct) == len(by_point)
    assert first_collision(sorted(distinct)) is None
    for name in distinct:
        assert all(first_collision([t, name]) is None for t in taken if t != name), (name, taken)
