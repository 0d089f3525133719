"""The experiment config: shipped configs validate; bad configs fail with the file, line and key."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest
from support.configs import MINIMAL
from support.environment import skip_unless_ci

from abcompare.config import (
    apply_set_option,
    changed_settings,
    config_schema,
    deep_merge,
    load_config,
)
from abcompare.core.errors import AbcompareWarning, ConfigError
from abcompare.retrieval.models import PACKAGED_NAMES
from abcompare.retrieval.settings import DenseSettings

REPO = Path(__file__).resolve().parents[2]
CONFIGS = sorted((REPO / "configs").glob("*.yaml"))


def write(tmp_path: Path, text: str, name: str = "x.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize("path", CONFIGS, ids=[p.name for p in CONFIGS])
def test_every_shipped_config_validates(path: Path) -> None:
    if "scifact" in path.name and not (path.parent / "../../shared/datasets/scifact").resolve().is_dir():
        skip_unless_ci("shared SciFact not present")
    config = load_config(path)
    assert config.treatments
    assert "control" in config.variants()


MODEL_CONFIGS = ["embedding_model.yaml", "quantized_embeddings.yaml", "rerank.yaml"]


@pytest.mark.parametrize("name", MODEL_CONFIGS)
def test_the_shipped_model_configs_need_nothing_from_the_hugging_face_cache(tmp_path, monkeypatch, name):
    """Their models come from packages: with an empty Hugging Face cache they validate all the same."""
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path))
    variants = load_config(REPO / "configs" / name).variants().values()  # validation looks every model up
    named = {s.model for v in variants for s in v.retrievers.values() if isinstance(s, DenseSettings)}
    named |= {v.rerank.model for v in variants if v.rerank is not None}
    assert named and named <= PACKAGED_NAMES


def test_treatment_is_the_control_with_its_overrides(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, MINIMAL))
    assert config.control.retrievers["bm25"].k1 == 1.5
    assert config.treatments["loose"].retrievers["bm25"].k1 == 0.9
    assert config.treatments["loose"].retrievers["bm25"].b == config.control.retrievers["bm25"].b


def test_unknown_key_is_reported_with_line_and_a_suggestion(tmp_path: Path) -> None:
    text = MINIMAL.replace("treatments:", "evaluation:\n  cutofs: [5]\ntreatments:")
    with pytest.raises(ConfigError) as info:
        load_config(write(tmp_path, text))
    message = str(info.value)
    assert "x.yaml:8" in message
    assert "evaluation.cutofs" in message
    assert "did you mean 'cutoffs'" in message


def test_wrong_type_names_the_yaml_path(tmp_path: Path) -> None:
    text = MINIMAL.replace("k1: 0.9", "k1: lots")
    with pytest.raises(ConfigError) as info:
        load_config(write(tmp_path, text))
    assert "treatments.loose.retrievers.bm25.k1:" in str(info.value)
    assert "k1" in str(info.value)
    assert info.value.line == 10


def test_missing_file_is_reported_relative_to_the_config(tmp_path: Path) -> None:
    text = MINIMAL.replace("  name: hr-docs", "  path: nowhere/scifact")
    with pytest.raises(ConfigError) as info:
        load_config(write(tmp_path, text))
    assert "file not found" in str(info.value)
    assert str(tmp_path / "nowhere" / "scifact") in str(info.value)
    assert info.value.field == "dataset.path"


def test_relative_paths_resolve_against_the_config_folder(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "run.trec").write_text("1 Q0 d 1 1.0 x\n")
    text = MINIMAL.replace("    retrievers:\n      bm25: {k1: 0.9}", "    run: {path: data/run.trec}")
    config = load_config(write(tmp_path, text))
    assert config.treatments["loose"].run.path == tmp_path / "data" / "run.trec"


def test_invalid_yaml_points_at_the_line(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(write(tmp_path, "name: t\ndataset: [unclosed\n"))
    assert "invalid YAML" in str(info.value)
    assert info.value.line == 3  # where the parser found the list never closed


def test_missing_config_file() -> None:
    with pytest.raises(ConfigError, match="config file not found"):
        load_config("/nonexistent/config.yaml")


def test_treatment_changing_two_settings_warns(tmp_path: Path) -> None:
    text = MINIMAL.replace("bm25: {k1: 0.9}", "bm25: {k1: 0.9, b: 0.3}")
    with pytest.warns(AbcompareWarning, match="changes 2 settings"):
        load_config(write(tmp_path, text))


def test_treatment_changing_one_setting_does_not_warn(tmp_path: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", AbcompareWarning)
        load_config(write(tmp_path, MINIMAL))


def test_set_option_overrides_typed_values(tmp_path: Path) -> None:
    config = load_config(
        write(tmp_path, MINIMAL), ["significance.n_resamples=500", "evaluation.cutoffs=[3, 1]", "name=quick"]
    )
    assert config.significance.n_resamples == 500
    assert config.evaluation.cutoffs == [1, 3]
    assert config.name == "quick"


def test_a_set_path_replacing_the_example_drops_the_example_name(tmp_path: Path) -> None:
    """``--set dataset.path=...`` over a config that loads the ``hr-docs`` example: the collection is then
    named after its folder (the loader's rule for a path without a name), not after the example it replaced.
    A name set beside it, or a name written beside a path in the file, stays."""
    folder = tmp_path / "mini"
    (folder / "qrels").mkdir(parents=True)
    (folder / "queries.jsonl").write_text('{"_id": "q1", "text": "leave"}\n')
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    config = write(tmp_path, MINIMAL)
    replaced = load_config(config, [f"dataset.path={folder}"])
    assert replaced.dataset.name is None and replaced.dataset.path == folder
    named = load_config(config, [f"dataset.path={folder}", "dataset.name=mine"])
    assert named.dataset.name == "mine"
    written = write(tmp_path, MINIMAL.replace("name: hr-docs", f"name: mine\n  path: {folder}"), "w.yaml")
    assert load_config(written, [f"dataset.path={folder}"]).dataset.name == "mine"
    assert load_config(config).dataset.name == "hr-docs"


def test_set_option_rejects_a_missing_equals_sign() -> None:
    with pytest.raises(ConfigError, match="key.path=value"):
        apply_set_option({}, "significance.seed")


def test_primary_test_must_be_among_the_tests(tmp_path: Path) -> None:
    text = MINIMAL + "significance:\n  tests: [t]\n  primary: permutation\n"
    with pytest.raises(ConfigError, match="primary test"):
        load_config(write(tmp_path, text))


def test_null_in_a_treatment_is_none_and_removes_a_named_entry() -> None:
    base = {"retrievers": {"bm25": {}, "dense": {"model": "m"}}, "fusion": {"method": "rrf"}}
    merged = deep_merge(base, {"retrievers": {"dense": None, "bm25": {"stemmer": None}}, "fusion": None})
    assert merged == {"retrievers": {"bm25": {"stemmer": None}}, "fusion": None}
    assert base["retrievers"] == {"bm25": {}, "dense": {"model": "m"}}


def test_changed_settings_lists_leaf_paths() -> None:
    base = {"fusion": {"method": "rrf", "k": 60}}
    assert changed_settings(base, {"fusion": {"method": "dbsf", "k": 60}}) == ["fusion.method"]


def test_fingerprint_is_stable_and_sensitive(tmp_path: Path) -> None:
    a = load_config(write(tmp_path, MINIMAL))
    b = load_config(write(tmp_path, MINIMAL, "y.yaml"))
    c = load_config(write(tmp_path, MINIMAL), ["significance.seed=1"])
    assert a.fingerprint() == b.fingerprint() != c.fingerprint()


def test_schema_describes_the_sections() -> None:
    schema = config_schema()
    assert {"dataset", "control", "treatments", "evaluation", "significance", "tracking"} <= set(
        schema["properties"]
    )
