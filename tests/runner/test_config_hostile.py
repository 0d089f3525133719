"""Hostile configs: names that are paths or collide as MLflow keys, numbers beyond sane bounds, YAML alias
bombs and endless nesting. Each is a ConfigError naming the file, the line and the key, found up front."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from abcompare.config import load_config
from abcompare.config.yaml_reader import MAX_DEPTH, MAX_VALUES
from abcompare.core.errors import ConfigError
from abcompare.core.limits import MAX_CUTOFF, MAX_RESAMPLES
from abcompare.core.naming import first_collision, mlflow_safe_name, name_problem, tag_key_problem

CONFIG = """\
name: hostile
dataset:
  name: hr-docs
control:
  retrievers:
    bm25: {{}}
treatments:
{treatments}
{extra}
"""
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
    if name_problem(name) is not None:
        return
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
@pytest.mark.parametrize(
    ("setting", "value", "bound"),
    [
        ("evaluation.cutoffs", f"[5, {MAX_CUTOFF + 1}]", f"{MAX_CUTOFF:,}"),
        ("evaluation.cutoffs", "[1000000000]", f"{MAX_CUTOFF:,}"),
        ("significance.n_resamples", str(10**12), str(MAX_RESAMPLES)),
        ("significance.seed", "-1", "0"),
        ("dataset.max_queries", str(10**12), "100000000"),
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


@FIXTURE
@given(
    resamples=st.integers(min_value=MAX_RESAMPLES + 1, max_value=10**30), cutoff=st.integers(MAX_CUTOFF + 1)
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
    with pytest.raises(ConfigError, match=f"expand to more than {MAX_VALUES:,} values"):
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
    with pytest.raises(ConfigError, match=f"nested deeper than {MAX_DEPTH} levels") as info:
        load_config(path)
    assert info.value.line == 1


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
