"""``null`` has one meaning in every override (a treatment, ``--set``, a sweep point): the value None.

The schema documents ``stemmer: null`` as "no stemming"; a treatment that writes it must then differ from a
control that stems, as ``stemmer: ""`` does. For a block whose absence is None (``rerank``, ``fusion``) the
None is that absence; an entry of a mapping keyed by names (a retriever, a fusion weight) is removed. A
``null`` for a setting that cannot be None is refused at its file, line and key.

The settings are enumerated from the pydantic models here (not from the code under test), so a new
optional setting is covered by these tests as soon as it exists: it fails until a sample value is given.
"""

from __future__ import annotations

import json
import types
import typing
from contextlib import nullcontext
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import BaseModel
from support.cli import REPO, error_lines, invoke_cli
from support.configs import block_config, cranfield_bm25

from abcompare.config import ExperimentConfig, load_config
from abcompare.core.errors import ConfigError
from abcompare.retrieval.settings import VariantSettings

REWRITES = REPO / "configs" / "query_variants" / "hr_docs.jsonl"

# ---------------------------------------------------------------------------------------------------------
# the schema's settings, enumerated from the models


def _members(annotation: Any) -> list[Any]:
    """The alternatives of a union (``X | None``, ``Annotated[A | B, ...]``), else the annotation itself."""
    if typing.get_origin(annotation) is typing.Annotated:
        return _members(typing.get_args(annotation)[0])
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return [m for arg in typing.get_args(annotation) for m in _members(arg)]
    return [annotation]


def _is_model(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, BaseModel)


def settings_of(model: type[BaseModel], at: tuple[str, ...] = ()) -> dict[tuple[str, ...], bool]:
    """Every setting path below ``model`` -> whether its annotation admits None. A mapping of retrievers
    is entered once per retriever kind, named as its kind (``retrievers.bm25.stemmer``)."""
    found: dict[tuple[str, ...], bool] = {}
    for name, field in model.model_fields.items():
        members = _members(field.annotation)
        found[(*at, name)] = type(None) in members
        for member in members:
            if _is_model(member):
                found |= settings_of(member, (*at, name))
            elif typing.get_origin(member) is dict:
                for kind in _members(typing.get_args(member)[1]):
                    if _is_model(kind):
                        entry = kind.model_fields["type"].default if "type" in kind.model_fields else "*"
                        found |= settings_of(kind, (*at, name, entry))
    return found


def named_mappings(model: type[BaseModel], at: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """The setting paths whose value is a mapping keyed by the user's names (``retrievers``, weights)."""
    found: list[tuple[str, ...]] = []
    for name, field in model.model_fields.items():
        for member in _members(field.annotation):
            if typing.get_origin(member) is dict:
                found.append((*at, name))
            elif _is_model(member):
                found += named_mappings(member, (*at, name))
    return found


VARIANT_SETTINGS = settings_of(VariantSettings)
#: A run's two sources, a file and a Python retriever: exactly one is set, so neither is null on its own
#: (tests/runner/test_runner_python_retrievers.py pins that rule).
ONE_OF = {("run", "path"), ("run", "python")}
OPTIONAL = sorted(path for path, optional in VARIANT_SETTINGS.items() if optional and path not in ONE_OF)
REQUIRED = sorted(path for path, optional in VARIANT_SETTINGS.items() if not optional)


def test_the_enumeration_finds_the_documented_optional_settings() -> None:
    """The schema's own descriptions say these may be null (docs/retrieval.md's table agrees)."""
    assert {
        ("retrievers", "bm25", "stemmer"),
        ("retrievers", "bm25", "stopwords"),
        ("retrievers", "dense", "max_seq_length"),
        ("rerank",),
        ("fusion",),
        ("fusion", "weights"),
        ("run",),
    } <= set(OPTIONAL)
    assert ("chunking", "size") in REQUIRED and ("retrievers", "bm25", "type") in REQUIRED


# ---------------------------------------------------------------------------------------------------------
# controls in which every optional setting has a value that is not None


def samples(run_file: Path) -> list[dict[str, Any]]:
    return [
        {
            "chunking": {"strategy": "none"},
            "retrievers": {"bm25": {"stemmer": "english", "stopwords": "en"}},
            "fusion": {"method": "rrf", "weights": {"bm25": 2.0}},
            "rerank": {"type": "bi-encoder", "model": "all-MiniLM-L6-v2", "backend": "torch"},
        },
        # a run file retrieves nothing, so it stands alone (retrieval settings beside it are refused)
        {"run": {"path": str(run_file)}},
        {"retrievers": {"dense": {"model": "all-MiniLM-L6-v2", "max_seq_length": 128, "backend": "torch"}}},
        # rewrites and RM3 each stand without the other; the query fusion needs rewrites (one text else)
        {"retrievers": {"bm25": {}}, "query_planning": {"variants": str(REWRITES), "expansion": "rm3"}},
        {
            "retrievers": {"bm25": {}},
            "query_planning": {
                "variants": str(REWRITES),
                "fusion": {"method": "rrf", "weights": {"original": 2.0}},
            },
        },
    ]


#: What a variant needs besides a null for the setting: without its run file, a variant retrieves.
NULLED_NEEDS: dict[tuple[str, ...], dict[str, Any]] = {("run",): {"retrievers": {"bm25": {}}}}


def _needs_as_set(prefix: str, path: tuple[str, ...]) -> list[str]:
    """:data:`NULLED_NEEDS` as ``--set`` options on the variant at ``prefix``."""
    return [f"{prefix}.{key}={json.dumps(value)}" for key, value in NULLED_NEEDS.get(path, {}).items()]


def get(data: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        data = data.get(key) if isinstance(data, dict) else None
    return data


def nested(path: tuple[str, ...], value: Any) -> dict[str, Any]:
    out: Any = value
    for key in reversed(path):
        out = {key: out}
    return out


def sample_for(path: tuple[str, ...], run_file: Path) -> dict[str, Any]:
    chosen = [s for s in samples(run_file) if get(s, path) is not None]
    assert chosen, f"no sample control gives {'.'.join(path)} a value: add one to samples()"
    return chosen[0]


@pytest.fixture
def run_file(tmp_path: Path) -> Path:
    path = tmp_path / "production.run"
    path.write_text("q1 Q0 d1 1 2.0 prod\n")
    return path


write_config = partial(block_config, name="null")


def dumped(variant: VariantSettings) -> dict[str, Any]:
    return variant.model_dump(mode="json")


def _written_with_null(control: dict[str, Any], path: tuple[str, ...]) -> dict[str, Any]:
    """What the control means when it writes this setting as null itself (plain pydantic validation)."""
    data = json.loads(json.dumps(control))
    get(data, path[:-1])[path[-1]] = None
    data |= NULLED_NEEDS.get(path, {})
    return dumped(VariantSettings.model_validate(data))


# ---------------------------------------------------------------------------------------------------------
# a null in a treatment or --set is None


@pytest.mark.parametrize("path", OPTIONAL, ids=[".".join(p) for p in OPTIONAL])
def test_a_null_in_a_treatment_is_none_as_in_the_control(tmp_path: Path, run_file: Path, path) -> None:
    control = sample_for(path, run_file)
    config = load_config(write_config(tmp_path, control, nested(path, None) | NULLED_NEEDS.get(path, {})))
    treatment, baseline = dumped(config.treatments["t"]), dumped(config.control)
    assert get(baseline, path) is not None
    assert get(treatment, path) is None
    assert treatment == _written_with_null(control, path)


@pytest.mark.filterwarnings("ignore:.*changes nothing")
@pytest.mark.parametrize("path", OPTIONAL, ids=[".".join(p) for p in OPTIONAL])
def test_a_null_given_with_set_is_none(tmp_path: Path, run_file: Path, path) -> None:
    control = sample_for(path, run_file)
    file = write_config(tmp_path, control, {})
    dotted = ".".join(path)
    treated = load_config(file, [f"treatments.t.{dotted}=null", *_needs_as_set("treatments.t", path)])
    assert get(dumped(treated.treatments["t"]), path) is None
    assert get(dumped(treated.control), path) is not None
    empty = load_config(file, [f"control.{dotted}=", *_needs_as_set("control", path)])  # `key=` is null too
    assert dumped(empty.control) == _written_with_null(control, path)


def test_a_null_in_a_sweep_point_is_none(tmp_path: Path) -> None:
    control = {"retrievers": {"bm25": {}}}
    file = tmp_path / "sweep.yaml"
    text = yaml.safe_dump({"name": "s", "dataset": {"name": "hr-docs"}, "control": control})
    file.write_text(text + "sweep:\n  grid:\n    retrievers.bm25.stemmer: [english, null]\n")
    config = load_config(file)
    stemmers = sorted(str(v.retrievers["bm25"].stemmer) for v in config.treatments.values())
    assert config.control.retrievers["bm25"].stemmer == "english"
    assert "None" in stemmers


@pytest.mark.parametrize("mapping", named_mappings(VariantSettings), ids=".".join)
def test_a_null_entry_of_a_named_mapping_removes_that_entry(tmp_path: Path, mapping) -> None:
    control = {
        "retrievers": {"bm25": {}, "dense": {"model": "all-MiniLM-L6-v2"}},
        "fusion": {"method": "rrf", "weights": {"bm25": 2.0, "dense": 3.0}},
        "query_planning": {
            "variants": str(REWRITES),
            "fusion": {"weights": {"original": 2.0, "variants": 1.0}},
        },
    }
    entries = get(control, mapping)
    assert isinstance(entries, dict) and len(entries) == 2, f"give {'.'.join(mapping)} two entries here"
    first, second = entries
    kept = {first: entries[first]}
    treatment = nested(mapping, {second: None})
    if mapping == ("retrievers",):  # the weights must then name only the retriever that is left
        treatment["fusion"] = {"weights": {"dense": None}}
    warned = pytest.warns(UserWarning, match="changes 2 settings") if len(treatment) > 1 else nullcontext()
    with warned:  # removing a retriever removes its weight too
        config = load_config(write_config(tmp_path, control, treatment))
    assert get(dumped(config.treatments["t"]), mapping).keys() == kept.keys()
    assert get(dumped(config.control), mapping).keys() == {first, second}


def test_a_treatment_that_nulls_what_the_control_leaves_at_none_changes_nothing(tmp_path: Path) -> None:
    file = write_config(tmp_path, {"retrievers": {"bm25": {}}}, {"rerank": None})
    with pytest.warns(UserWarning, match="'t' changes nothing"):
        load_config(file)


def test_a_null_stemmer_is_a_change_when_the_control_stems_by_default(tmp_path: Path) -> None:
    """The control writes no stemmer (the default, english): `stemmer: null` changes one setting."""
    import warnings

    file = write_config(tmp_path, {"retrievers": {"bm25": {}}}, {"retrievers": {"bm25": {"stemmer": None}}})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        config = load_config(file)
    assert config.control.retrievers["bm25"].stemmer == "english"
    assert config.treatments["t"].retrievers["bm25"].stemmer is None


# ---------------------------------------------------------------------------------------------------------
# a null for a setting that cannot be None is refused at its key


def _reachable(path: tuple[str, ...], run_file: Path) -> dict[str, Any] | None:
    """A sample control that has the block holding ``path`` (so the treatment's null lands on it)."""
    for sample in samples(run_file):
        if len(path) == 1 or get(sample, path[:-1]) is not None:
            return sample
    return None


@pytest.mark.parametrize("path", REQUIRED, ids=[".".join(p) for p in REQUIRED])
def test_a_null_for_a_setting_that_cannot_be_none_is_refused_at_its_line(
    tmp_path: Path, run_file: Path, path
) -> None:
    control = _reachable(path, run_file)
    assert control is not None, f"no sample control holds {'.'.join(path[:-1])}: add one to samples()"
    file = write_config(tmp_path, control, nested(path, None))
    with pytest.raises(ConfigError) as info:
        load_config(file)
    error = info.value
    key = ".".join(("treatments", "t", *path))
    lines = file.read_text().splitlines()
    treatment_start = lines.index("treatments:")
    expected = next(
        i for i, text in enumerate(lines) if i > treatment_start and text.strip() == f"{path[-1]}: null"
    )
    assert (error.file, error.line, error.field) == (str(file), expected + 1, key)
    assert error.message.startswith(f"null is not a value of {key}: it cannot be none")


def test_a_null_given_with_set_for_a_setting_that_cannot_be_none_names_the_key(tmp_path: Path) -> None:
    file = write_config(tmp_path, {"retrievers": {"bm25": {}}}, {"depth": 50})
    with pytest.raises(ConfigError) as info:
        load_config(file, ["treatments.t.chunking.size=null"])
    assert info.value.field == "treatments.t.chunking.size"
    assert "null is not a value of treatments.t.chunking.size" in info.value.message


def test_a_null_for_a_required_setting_of_the_other_sections_names_the_key(tmp_path: Path) -> None:
    """Outside the variants too: every setting that cannot be None, given null with --set."""
    file = write_config(tmp_path, {"retrievers": {"bm25": {}}}, {"depth": 50})
    sections = {
        path: optional
        for path, optional in settings_of(ExperimentConfig).items()
        if path[0] not in ("control", "treatments", "sweep")
    }
    required = [path for path, optional in sections.items() if not optional and path != ("dataset",)]
    assert ("evaluation", "cutoffs") in required and ("significance", "alpha") in required
    for path in required:
        key = ".".join(path)
        with pytest.raises(ConfigError) as info:
            # an optional judge section (judge, answers.judge) absent from the file is given its one
            # required setting first
            judge = path[: path.index("judge") + 1] if "judge" in path else ()
            given = [f"{'.'.join(judge)}.provider=python"] if judge and path != (*judge, "provider") else []
            load_config(file, [*given, f"{key}=null"])
        assert (info.value.field, info.value.message[:22]) == (key, "null is not a value of"), key


# ---------------------------------------------------------------------------------------------------------
# the other sections: a null given with --set is None (or the default that None documents)

#: Settings whose None stands for a documented default (the schema's descriptions).
NONE_MEANS = {("evaluation", "primary_metric"): "ndcg@10"}  # "Default: ndcg@10 when nDCG and cutoff 10..."
#: Optional settings a provider of the judge needs: null is refused there, naming what it needs.
NEEDED_BY_ITS_PROVIDER = {("judge", "base_url"), ("judge", "name"), ("judge", "path")}
NEEDED_BY_ITS_PROVIDER |= {("answers", *path) for path in NEEDED_BY_ITS_PROVIDER}
#: A variant's answers come from a generator or a file, exactly one: null for the one given is refused.
EITHER_OR = {("answers", "variants", "*", "generator"), ("answers", "variants", "*", "file")}


def other_sections(tmp_path: Path) -> list[dict[str, Any]]:
    folder = tmp_path / "beir"
    (folder / "qrels").mkdir(parents=True)
    (folder / "queries.jsonl").write_text("")
    (folder / "qrels" / "test.tsv").write_text("")
    files = {name: tmp_path / f"{name}.jsonl" for name in ("queries", "annotations", "spans", "corpus")}
    for file in files.values():
        file.write_text("")
    dataset = {
        "name": "hr-docs",
        "path": str(folder),
        **{k: str(v) for k, v in files.items()},
        "max_queries": 5,
    }
    common = {
        "dataset": dataset,
        "evaluation": {"primary_metric": "mrr@5"},
        "significance": {"min_effect": 0.01, "non_inferiority_margin": 0.01},
        "tracking": {"uri": "sqlite:///x.db", "run_name": "r", "artifact_location": "/tmp/a"},
        "cache_dir": str(tmp_path / "cache"),
    }
    return [
        {
            **common,
            "execution": {"backend": "ray", "address": "auto", "num_gpus_per_encoder": 1, "encoders": 2},
        },
        {**common, "execution": {"backend": "ray", "num_cpus": 2}},
        # one judge per provider: each refuses another provider's settings
        {
            **common,
            "judge": {"provider": "transformers", "model": "m", "gguf_file": "m.gguf", "min_agreement": 0.5},
        },
        {
            **common,
            "judge": {"provider": "openai", "model": "m", "base_url": "http://127.0.0.1:9/v1", "depth": 5},
        },
        {
            **common,
            "judge": {
                "provider": "openai",
                "model": "m",
                "base_url": "http://127.0.0.1:9/v1",
                "api_key_env": "JUDGE_KEY",
            },
        },
        {**common, "judge": {"provider": "python", "name": "j"}},
        {**common, "judge": {"provider": "file", "path": str(tmp_path / "labels.jsonl")}},
        # answers: its own settings, and its judge (any provider but file) as the judge section's
        {
            **common,
            "answers": {
                "max_queries": 5,
                "primary_metric": "faithfulness",
                "ratings": str(tmp_path / "ratings.jsonl"),
                "gguf_file": "m.gguf",
                "judge": {
                    "provider": "transformers",
                    "model": "m",
                    "gguf_file": "m.gguf",
                    "min_agreement": 0.5,
                },
            },
        },  # fmt: skip
        {
            **common,
            "answers": {
                "judge": {"provider": "openai", "model": "m", "base_url": "http://127.0.0.1:9/v1", "depth": 5}
            },
        },
        {
            **common,
            "answers": {
                "judge": {
                    "provider": "openai",
                    "model": "m",
                    "base_url": "http://127.0.0.1:9/v1",
                    "api_key_env": "JUDGE_KEY",
                }
            },
        },
        {**common, "answers": {"judge": {"provider": "python", "name": "j"}}},
        # a variant's answers (``answers.variants.*`` is the treatment t): a generator, or a file
        {**common, "answers": {"variants": {"t": {"generator": "local"}}}},
        {**common, "answers": {"variants": {"t": {"file": str(tmp_path / "answers.jsonl")}}}},
    ]


def test_a_null_given_with_set_is_none_in_every_other_section(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JUDGE_KEY", "not-a-real-key")  # the openai judge's key variable must be set
    bases = other_sections(tmp_path)
    optional = [
        path
        for path, admits in settings_of(ExperimentConfig).items()
        if admits
        and path[0] not in ("control", "treatments", "sweep")
        and path not in {("dataset",), ("datasets",)}  # exactly one of the two: refused when both are null
    ]
    assert ("tracking", "uri") in optional and ("execution", "num_cpus") in optional
    for each in optional:
        path = tuple("t" if key == "*" else key for key in each)  # a variant's entry: the treatment t
        if path == ("answers", "judge", "path"):  # the answers' judge grades on request: never a file
            with pytest.raises(ConfigError, match="the answers' judge grades on request"):
                load_config(write_config(tmp_path, {"retrievers": {"bm25": {}}}, {"depth": 5}),
                            ["answers.judge.provider=file", "answers.judge.path=x.jsonl"])  # fmt: skip
            continue
        base = next((b for b in bases if get(b, path) is not None), None)
        assert base is not None, f"no base gives {'.'.join(path)} a value: add one to other_sections()"
        file = tmp_path / "other.yaml"
        document = {
            "name": "o",
            **base,
            "control": {"retrievers": {"bm25": {}}},
            "treatments": {"t": {"depth": 5}},
        }
        file.write_text(yaml.safe_dump(document))
        if path in NEEDED_BY_ITS_PROVIDER:  # the only provider that reads it cannot do without it
            with pytest.raises(ConfigError, match="needs " + path[-1]):
                load_config(file, [f"{'.'.join(path)}=null"])
            continue
        if each in EITHER_OR:  # the other of the two is not given: null leaves neither
            with pytest.raises(ConfigError, match="give either generator or file"):
                load_config(file, [f"{'.'.join(path)}=null"])
            continue
        config = load_config(file, [f"{'.'.join(path)}=null"])
        value = get(config.model_dump(mode="json"), path)
        assert value == NONE_MEANS.get(path), ".".join(path)
        assert get(load_config(file).model_dump(mode="json"), path) is not None


# ---------------------------------------------------------------------------------------------------------
# on a real collection: no stemming is a real difference


CRANFIELD_TREATMENTS = """\
treatments:
  nostem-null:
    retrievers:
      bm25: {stemmer: null}
  nostem-empty:
    retrievers:
      bm25: {stemmer: ""}
evaluation:
  convention: trec
significance:
  tests: [t, permutation]
  n_resamples: 1000
tracking:
  enabled: false
"""


def test_on_cranfield_no_stemming_written_as_null_is_the_real_difference(
    tmp_path: Path, datasets_dir: Path, embedding_cache: Path
) -> None:
    """The issue measured `stemmer: ""` on Cranfield: ndcg@10 -0.021, p = 0.02. `stemmer: null` must give
    the same numbers, not the control's."""
    folder = datasets_dir / "cranfield"
    if not folder.is_dir():
        from support.environment import skip_unless_ci

        skip_unless_ci("shared Cranfield not present")
    config = tmp_path / "cranfield.yaml"
    config.write_text(cranfield_bm25(folder, "cranfield-nostem") + CRANFIELD_TREATMENTS)
    result = invoke_cli(["run", str(config), "--json"], tmp_path, embedding_cache)
    assert result.returncode == 0, result.stderr[-3000:]
    assert error_lines(result.stderr) == [] and "changes nothing" not in result.stderr
    payload = json.loads(result.stdout)
    means = payload["means"]
    assert means["nostem-null"] == means["nostem-empty"] != means["control"]
    rows = {r["treatment"]: r for r in payload["comparison"] if r["metric"] == "ndcg@10"}
    assert round(rows["nostem-null"]["delta"], 3) == -0.021
    assert round(rows["nostem-null"]["p_t"], 2) == 0.02
    assert rows["nostem-null"]["p_t"] == rows["nostem-empty"]["p_t"]
    assert rows["nostem-null"]["wins"] == rows["nostem-empty"]["wins"]


# ---------------------------------------------------------------------------------------------------------
# a null entry of a named mapping is no entry in the control too (written, or given with --set)

#: A control per named mapping of a variant, with two entries in it (the second is nulled).
NAMED_CONTROLS: dict[tuple[str, ...], dict[str, Any]] = {
    ("retrievers",): {
        "retrievers": {"bm25": {"k1": 1.2}, "dense": {"model": "all-MiniLM-L6-v2"}},
        "fusion": {"method": "rrf"},
    },
    ("fusion", "weights"): {
        "retrievers": {"bm25": {}, "dense": {"model": "all-MiniLM-L6-v2"}},
        "fusion": {"method": "rrf", "weights": {"bm25": 2.0, "dense": 3.0}},
    },
    ("query_planning", "fusion", "weights"): {
        "retrievers": {"bm25": {}},
        "query_planning": {
            "variants": str(REWRITES),
            "fusion": {"weights": {"original": 2.0, "variants": 1.0}},
        },
    },
}


@pytest.mark.parametrize("mapping", named_mappings(VariantSettings), ids=".".join)
@pytest.mark.parametrize("how", ["written", "set"])
def test_a_null_entry_in_the_control_removes_it_as_in_a_treatment(tmp_path: Path, mapping, how) -> None:
    """``--set control.retrievers.dense=null`` is a control without a dense retriever (the README's
    ``retrievers: {dense: null}`` drops that retriever), the same as that null in a treatment."""
    assert mapping in NAMED_CONTROLS, f"give {'.'.join(mapping)} a sample control in NAMED_CONTROLS"
    control = json.loads(json.dumps(NAMED_CONTROLS[mapping]))
    first, second = get(control, mapping)
    dotted = ".".join((*mapping, second))
    if how == "written":
        get(control, mapping)[second] = None
        config = load_config(write_config(tmp_path, control, {"depth": 7}))
    else:
        file = write_config(tmp_path, control, {"depth": 7})
        config = load_config(file, [f"control.{dotted}=null", f"treatments.t.{dotted}=null"])
    assert list(get(dumped(config.control), mapping)) == [first]
    assert list(get(dumped(config.treatments["t"]), mapping)) == [first]
    if mapping == ("retrievers",):  # the dense retriever's default model is not brought back
        assert all(r.type == "bm25" for r in config.control.retrievers.values())


def test_set_control_dense_null_on_the_shipped_hybrid_config_is_bm25_only() -> None:
    """The issue's command: a BM25-only check of the shipped hybrid config, in the control and treatment."""
    config = load_config(REPO / "configs" / "rrf_vs_dbsf.yaml", ["control.retrievers.dense=null"])
    for variant in config.variants().values():
        assert list(variant.retrievers) == ["bm25"]


@pytest.mark.parametrize(
    ("setting", "sample"),
    [(("tracking", "tags"), {"team": "search", "owner": "me"})],
    ids=["tracking.tags"],
)
def test_a_null_entry_of_a_named_mapping_outside_the_variants_removes_it(
    tmp_path: Path, setting, sample
) -> None:
    file = tmp_path / "tags.yaml"
    document = {"name": "o", "dataset": {"name": "hr-docs"}, "control": {"retrievers": {"bm25": {}}}}
    document |= {"treatments": {"t": {"depth": 5}}, setting[0]: {setting[1]: sample}}
    file.write_text(yaml.safe_dump(document))
    config = load_config(file, [f"{'.'.join(setting)}.owner=null"])
    assert get(config.model_dump(mode="json"), setting) == {"team": "search"}
