"""Hostile configs: names that are paths or collide as MLflow keys, numbers beyond sane bounds, YAML alias
bombs and endless nesting. Each is a ConfigError naming the file, the line and the key, found up front."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from support.configs import bm25_control, braced
from support.readme import doc_text

from abcompare.config import load_config
from abcompare.config.yaml_reader import load_yaml
from abcompare.core.errors import ConfigError
from abcompare.core.naming import first_collision, mlflow_safe_name, name_problem, tag_key_problem

CONFIG = (
    braced(bm25_control("name: hr-docs", name="hostile"))
    + """\
treatments:
{treatments}
{extra}
"""
)
# The bounds docs/mlflow.md states ("Names"), written out so that code and documentation cannot drift apart
CUTOFF_BOUND = 10_000  # "cutoffs up to 10,000"
RESAMPLES_BOUND = 1_000_000  # "`n_resamples` up to 1,000,000"
LIST_BOUND = 10_000  # "`depth` and `top_k` up to 10,000"
VALUES_BOUND = 10_000  # "YAML aliases may expand to at most 10,000 values"
DEPTH_BOUND = 32  # "nesting is limited to 32 levels"
FIXTURE = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def load(tmp_path: Path, treatments: str = "  other:\n    top_k: 5", extra: str = "", overrides=()):
    path = tmp_path / "config.yaml"
    path.write_text(CONFIG.format(treatments=treatments, extra=extra))
    return load_config(path, list(overrides))


def quoted(name: str) -> str:
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


# ------------------------------------------------------------------------------------------------- names
@pytest.mark.parametrize(
    ("name", "problem"),
    [
        (".", "dots only"),
        ("..", "dots only"),
        ("../../x", "path separator"),
        ("a\\b", "path separator"),
        ("a\tb", "control"),
        ("a\u202eb", "invisible"),
        ("x" * 101, "at most 100"),
        (" padded", "whitespace"),
    ],
)
def test_a_treatment_name_that_could_be_a_path_is_refused_at_its_line(
    tmp_path: Path, name: str, problem: str
) -> None:
    with pytest.raises(ConfigError, match=problem) as info:
        load(tmp_path, f"  other:\n    top_k: 5\n  {quoted(name)}:\n    top_k: 6")
    assert info.value.line == 10
    assert "\n" not in str(info.value) and "\t" not in str(info.value)


@pytest.mark.parametrize(
    ("first", "second"),
    [("a b", "a_b"), ("x/y", "x:y"), ("Fast", "fast"), ("größe", "grüße"), ("Control", None)],
)
def test_two_names_that_become_one_mlflow_key_are_refused_naming_both(tmp_path: Path, first, second) -> None:
    treatments = f"  {quoted(first)}:\n    top_k: 5" + (
        f"\n  {quoted(second)}:\n    top_k: 6" if second else ""
    )
    with pytest.raises(ConfigError) as info:
        load(tmp_path, treatments)
    message = str(info.value)
    if "/" in first:
        assert "path separator" in message
        return
    assert repr(first) in message and repr(second or "control") in message
    assert info.value.line == (10 if second else 8)


def test_retriever_names_follow_the_same_rule(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="retriever names 'my bm25' and 'my_bm25'") as info:
        load(
            tmp_path,
            "  other:\n    retrievers:\n      my bm25: {type: bm25}\n      my_bm25: {type: bm25}\n"
            "    fusion: {method: rrf}",
        )
    assert info.value.field.startswith("treatments.other.retrievers")


def test_a_split_is_a_file_name_and_tags_are_mlflow_tags(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="path separator") as info:
        load(tmp_path, overrides=["dataset.split=../../etc/passwd"])
    assert info.value.field == "dataset.split"
    with pytest.raises(ConfigError, match="reserved"):
        load(tmp_path, extra="tracking:\n  tags: {abcompare.pid: '1'}")
    with pytest.raises(ConfigError, match="relative or absolute path") as info:
        load(tmp_path, extra="tracking:\n  tags: {'a/../b': x}")
    assert info.value.line == 11


def test_an_unknown_example_names_the_dataset_name_key(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="unknown example 'hr-doc'.*known examples: hr-docs") as info:
        load(tmp_path, overrides=["dataset.name=hr-doc"])
    assert info.value.field == "dataset.name"
    assert info.value.line == 3


NAMES = st.text(min_size=1, max_size=30)


@settings(max_examples=500, deadline=None)
@given(name=NAMES)
def test_a_valid_name_is_one_safe_mlflow_key_segment_and_one_file_name(name: str) -> None:
    assume(name_problem(name) is None)  # hypothesis fails the test when it can find too few valid names
    safe = mlflow_safe_name(name)
    assert tag_key_problem(f"{safe}.ndcg_at_10.delta") is None  # MLflow accepts it as a metric key
    assert "/" not in safe and "\\" not in safe and safe not in {".", ".."}
    root = Path("/scratch/run")
    assert (root / "variants" / safe).resolve().parent == root / "variants"


@settings(max_examples=500, deadline=None)
@given(names=st.lists(NAMES, min_size=2, max_size=6, unique=True))
def test_names_pass_the_collision_check_only_when_their_keys_differ(names: list[str]) -> None:
    keys = [mlflow_safe_name(n).casefold() for n in names]
    assert (first_collision(names) is None) == (len(set(keys)) == len(keys))


# ----------------------------------------------------------------------------------------------- numbers
def test_the_readme_states_the_bounds_these_tests_pin() -> None:
    text = doc_text("docs/mlflow.md")
    for phrase in (
        "cutoffs up to 10,000",
        "`n_resamples` up to 1,000,000",
        "`depth` and `top_k` up to 10,000",
        "YAML aliases may expand to at most 10,000 values",
        "nesting is limited to 32 levels",
    ):
        assert phrase in text, phrase


@pytest.mark.parametrize(
    ("setting", "value", "bound"),
    [
        ("evaluation.cutoffs", f"[5, {CUTOFF_BOUND + 1}]", "10,000"),
        ("evaluation.cutoffs", "[1000000000]", "10,000"),
        ("significance.n_resamples", str(RESAMPLES_BOUND + 1), "1000000"),
        ("significance.n_resamples", str(10**12), "1000000"),
        ("significance.seed", "-1", "0"),
        ("dataset.max_queries", str(10**12), "100000000"),
        ("control.top_k", str(LIST_BOUND + 1), "10000"),
        ("control.depth", str(LIST_BOUND + 1), "10000"),
        ("control.top_k", str(10**9), "10000"),
        ("control.depth", str(10**9), "10000"),
        ("control.chunking.size", str(10**12), "1000000"),
        ("evaluation.relevance_threshold", str(2**40), "2147483647"),
    ],
)
def test_numbers_beyond_sane_bounds_are_refused_stating_the_bound(
    tmp_path: Path, setting, value, bound
) -> None:
    with pytest.raises(ConfigError) as info:
        load(tmp_path, overrides=[f"{setting}={value}"])
    assert info.value.field.startswith(setting)
    assert bound in str(info.value)


@pytest.mark.parametrize(
    "setting",
    [
        f"evaluation.cutoffs=[1, {CUTOFF_BOUND}]",
        f"significance.n_resamples={RESAMPLES_BOUND}",
        f"control.top_k={LIST_BOUND}",
        f"control.depth={LIST_BOUND}",
    ],
)
def test_a_value_at_its_bound_is_accepted(tmp_path: Path, setting: str) -> None:
    load(tmp_path, overrides=[setting])


@FIXTURE
@given(
    resamples=st.integers(min_value=RESAMPLES_BOUND + 1, max_value=10**30),
    cutoff=st.integers(CUTOFF_BOUND + 1),
)
def test_any_value_past_a_bound_is_refused(tmp_path: Path, resamples: int, cutoff: int) -> None:
    for override in (f"significance.n_resamples={resamples}", f"evaluation.cutoffs=[{cutoff}]"):
        with pytest.raises(ConfigError):
            load(tmp_path, overrides=[override])


# ------------------------------------------------------------------------------------------------- YAML
def bomb(levels: int, width: int = 9) -> str:
    lines = ['a0: &a0 ["lol"]']
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * width) + "]")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("where", ["top", "treatment", "--set"])
def test_a_yaml_alias_bomb_is_refused_at_once(tmp_path: Path, where: str) -> None:
    path = tmp_path / "config.yaml"
    # nine levels would expand to 387M values: only a bound checked before any walk can answer at all
    with pytest.raises(ConfigError, match="expand to more than 10,000 values"):
        if where == "top":
            path.write_text(bomb(9))
            load_config(path)
        elif where == "treatment":
            body = bomb(9).replace("\n", "\n    ")
            path.write_text(CONFIG.format(treatments=f"  other:\n    {body}", extra=""))
            load_config(path)
        else:
            load(tmp_path, overrides=["description=" + "{" + bomb(9).replace("\n", ", ").rstrip(", ") + "}"])


@pytest.mark.parametrize(
    "text", ["a: " + "[" * 100_000 + "]" * 100_000, "a: " + "{b: " * 5000 + "1" + "}" * 5000]
)
def test_endless_yaml_nesting_is_a_located_error(tmp_path: Path, text: str) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match="nested deeper than 32 levels") as info:
        load_config(path)
    assert info.value.line == 1


def nested_lists(levels: int) -> list:
    """``[[...[]...]]``: an empty list inside ``levels - 1`` more."""
    value: list = []
    for _ in range(levels - 1):
        value = [value]
    return value


def test_nesting_stops_at_exactly_32_levels() -> None:
    # the top mapping is level 1, so "a: " and 31 brackets nest 32 levels, 32 brackets nest 33
    levels = DEPTH_BOUND - 1
    assert load_yaml("a: " + "[" * levels + "]" * levels).data == {"a": nested_lists(levels)}
    with pytest.raises(ConfigError, match="nested deeper than 32 levels"):
        load_yaml("a: " + "[" * DEPTH_BOUND + "]" * DEPTH_BOUND)


def expanding_to(values: int) -> str:
    """A document that expands to ``values`` values, counting each node once per expansion (the top
    mapping, each key, each list, each scalar): ``a`` is a list of 99 zeros (100 values), ``b`` lists it 98
    times (1 + 9,800), ``c`` lists the zeros that make up the rest."""
    fixed = 1 + (1 + 100) + (1 + 1 + 98 * 100) + (1 + 1)  # 9,906: mapping, a and its list, b, c
    zeros = ", ".join(["0"] * 99)
    return f"a: &a [{zeros}]\nb: [{', '.join(['*a'] * 98)}]\nc: [{', '.join(['0'] * (values - fixed))}]\n"


def test_alias_expansion_stops_at_exactly_10000_values() -> None:
    assert load_yaml(expanding_to(VALUES_BOUND)).data["c"] == [0] * 94
    with pytest.raises(ConfigError, match="expand to more than 10,000 values"):
        load_yaml(expanding_to(VALUES_BOUND + 1))


def test_a_recursive_alias_is_a_located_error(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("name: x\nloop: &loop\n  - *loop\n")
    with pytest.raises(ConfigError, match="recursive YAML alias") as info:
        load_config(path)
    assert info.value.line == 2


def test_ordinary_aliases_still_work(tmp_path: Path) -> None:
    text = CONFIG.format(treatments="  other:\n    top_k: 5", extra="").replace(
        "control:\n  retrievers:\n    bm25: {}", "control: &base\n  retrievers:\n    bm25: {}"
    )
    path = tmp_path / "config.yaml"
    path.write_text(text)
    assert load_config(path).treatments["other"].top_k == 5
