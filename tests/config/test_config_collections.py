"""Several collections in one config (``datasets:``): each entry is what ``dataset:`` takes plus a name and a
run file per run-file variant; ``collections()`` gives each as its own one-collection config; every mistake
is one located error (file, line, key), from ``load_config`` and from ``abcompare validate``."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from support.cli import REPO, error_lines, invoke_cli

from abcompare.config import load_config
from abcompare.core.errors import ConfigError

HR_DOCS = REPO / "abcompare" / "examples" / "hr_docs"
RUN = REPO / "configs" / "runs" / "hr_docs_production.trec"

HEAD = """\
name: several
datasets:
  - name: hr-docs
    level: document
  - name: hr-copy
    path: <hr>
    max_queries: 5
"""
VARIANTS = """\
control:
  retrievers: {bm25: {}}
treatments:
  deeper: {depth: 200}
tracking: {enabled: false}
"""


def write(folder: Path, text: str, name: str = "c.yaml") -> Path:
    path = folder / name
    path.write_text(text.replace("<hr>", str(HR_DOCS)).replace("<run>", str(RUN)))
    return path


def line_of(path: Path, text: str, nth: int = 0) -> int:
    """The 1-based number of the ``nth`` line of ``path`` that reads ``text``."""
    return [i for i, line in enumerate(path.read_text().splitlines(), 1) if line == text][nth]


def located(path: Path, overrides: list[str] | None = None) -> ConfigError:
    with pytest.raises(ConfigError) as caught:
        load_config(path, overrides or [])
    return caught.value


def test_each_collection_is_the_same_comparison_on_its_own_dataset(tmp_path: Path):
    config = load_config(write(tmp_path, HEAD + VARIANTS))
    assert config.dataset is None and [e.name for e in config.datasets] == ["hr-docs", "hr-copy"]
    collections = config.collections()
    assert list(collections) == ["hr-docs", "hr-copy"]
    first, second = collections.values()
    assert (
        first.dataset.name == "hr-docs" and first.dataset.path is None and first.dataset.level == "document"
    )
    assert (
        second.dataset.path == HR_DOCS and second.dataset.max_queries == 5 and second.dataset.level == "chunk"
    )
    for name, collection in collections.items():
        assert collection.datasets is None and collection.collections() == {}
        settings = {n: v.model_dump() for n, v in collection.variants().items()}
        assert settings == {n: v.model_dump() for n, v in config.variants().items()}  # the same everywhere
        # what depth and top_k count follows each collection's level (documents at level: document)
        documents = collection.dataset.level == "document"
        assert all(v.counts_documents == documents for v in collection.variants().values())
        assert collection.tracking.run_name == f"several {name}"  # the nested run says its collection
        assert collection.significance == config.significance
    assert first.fingerprint() != second.fingerprint() != config.fingerprint()
    assert config.significance.pooling == "collection"
    assert load_config(
        write(tmp_path, HEAD + VARIANTS), ["significance.pooling=per_query"]
    ).significance.pooling == ("per_query")


def test_a_one_collection_config_hashes_as_before_datasets_and_pooling_existed(tmp_path: Path):
    config = load_config(REPO / "configs" / "bm25_vs_hybrid.yaml")
    dumped = config.model_dump(
        mode="json", exclude={"execution", "efficiency", "datasets", "judge", "answers"}
    )  # no judge, no answers: hashed as before
    del dumped["significance"]["pooling"]
    payload = json.dumps(dumped, sort_keys=True, default=str)
    assert config.fingerprint() == hashlib.sha256(payload.encode()).hexdigest()[:16]


def test_a_run_file_variant_reads_each_collections_own_file_resolved_against_the_config(tmp_path: Path):
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "copy.trec").write_text(RUN.read_text())
    text = (
        HEAD
        + "    runs: {candidate: runs/copy.trec}\n"
        + VARIANTS.replace("  deeper: {depth: 200}", "  candidate: {run: {path: <run>}}")
    )
    config = load_config(write(tmp_path, text))
    first, second = config.collections().values()
    assert first.treatments["candidate"].run.path == RUN  # no file of its own: the variant's run.path
    assert second.treatments["candidate"].run.path == (tmp_path / "runs" / "copy.trec").resolve()
    assert second.treatments["candidate"].run.format == first.treatments["candidate"].run.format
    assert second.control == first.control


def test_set_reaches_into_the_list_of_collections(tmp_path: Path):
    path = write(tmp_path, HEAD + VARIANTS)
    config = load_config(path, ["datasets.1.max_queries=7", "datasets.0.level=chunk"])
    assert [e.max_queries for e in config.datasets] == [None, 7]
    assert config.datasets[0].level == "chunk"
    error = located(path, ["datasets.2.max_queries=7"])
    assert error.field == "datasets.2.max_queries" and "the list has no item 2 (it has 2)" in error.message
    assert "give an index" in located(path, ["datasets.max_queries=7"]).message


def test_two_collections_that_share_a_name_or_a_key_are_located_at_the_second_name(tmp_path: Path):
    path = write(tmp_path, HEAD.replace("name: hr-copy", "name: hr-docs") + VARIANTS)
    error = located(path)
    assert error.field == "datasets.1.name" and error.line == line_of(path, "  - name: hr-docs", 1)
    assert error.message == "two collections are named 'hr-docs'; rename one"
    path = write(tmp_path, HEAD.replace("name: hr-copy", "name: HR-docs") + VARIANTS)
    error = located(path)
    assert error.field == "datasets.1.name" and error.line == line_of(path, "  - name: HR-docs")
    assert "'hr-docs' and 'HR-docs' become the same MLflow key" in error.message


def test_exactly_one_of_dataset_and_datasets(tmp_path: Path):
    both = write(tmp_path, "dataset: {name: hr-docs}\n" + HEAD + VARIANTS)
    error = located(both)
    assert error.field == "datasets" and error.line == line_of(both, "datasets:")
    assert "not both" in error.message
    neither = write(tmp_path, "name: none\n" + VARIANTS)
    error = located(neither)
    assert error.field == "dataset" and "give 'dataset' (one collection) or 'datasets'" in error.message
    empty = write(tmp_path, "datasets: []\n" + VARIANTS)
    assert located(empty).field == "datasets"


@pytest.mark.parametrize(
    "runs, message",
    [
        ("{nope: x.trec}",
         "collection 'hr-copy' gives a run file for 'nope', which is no variant (variants: control, deeper)"),
        ("{deeper: x.trec}", "collection 'hr-copy' gives a run file for 'deeper', which retrieves: only a "
         "variant given as a run file (run.path) reads one per collection"),
    ],
)  # fmt: skip
def test_a_runs_key_that_is_no_run_file_variant_is_located(tmp_path: Path, runs: str, message: str):
    path = write(tmp_path, HEAD + "    runs: " + runs + "\n" + VARIANTS)
    error = located(path)
    key = runs.strip("{}").split(":")[0]
    assert error.field == f"datasets.1.runs.{key}" and error.line == line_of(path, f"    runs: {runs}")
    assert error.message == message


def test_missing_files_of_a_collection_are_located_at_its_entry(tmp_path: Path):
    path = write(tmp_path, HEAD.replace("<hr>", "nowhere") + VARIANTS)
    error = located(path)
    assert error.field == "datasets.1.path" and error.line == line_of(path, "    path: nowhere")
    assert error.message == f"file not found: {(tmp_path / 'nowhere').resolve()}"
    text = (
        HEAD
        + "    runs: {candidate: runs/absent.trec}\n"
        + VARIANTS.replace("  deeper: {depth: 200}", "  candidate: {run: {path: <run>}}")
    )
    path = write(tmp_path, text)
    error = located(path)
    assert error.field == "datasets.1.runs.candidate"
    assert error.line == line_of(path, "    runs: {candidate: runs/absent.trec}")
    (tmp_path / "qrels-less").mkdir()
    (tmp_path / "qrels-less" / "queries.jsonl").write_text('{"_id": "q1", "text": "x"}\n')
    error = located(write(tmp_path, HEAD.replace("<hr>", "qrels-less") + VARIANTS))
    assert error.field == "datasets.1.split" and "no qrels for split 'test'" in error.message


def test_pooling_is_one_of_two_and_a_sweep_is_refused_across_collections(tmp_path: Path):
    path = write(tmp_path, HEAD + VARIANTS + "significance:\n  pooling: median\n")
    error = located(path)
    assert error.field == "significance.pooling" and error.line == line_of(path, "  pooling: median")
    assert "'collection' or 'per_query'" in error.message
    sweep = VARIANTS.replace("treatments:\n  deeper: {depth: 200}\n", "sweep:\n  grid: {depth: [50, 200]}\n")
    path = write(tmp_path, HEAD + sweep)
    error = located(path)
    assert error.field == "sweep" and error.line == line_of(path, "sweep:")
    assert error.message.startswith("a sweep across several collections is not supported yet")


def test_validate_names_the_collections_and_a_bad_entry_is_one_located_line(tmp_path: Path, embedding_cache):
    good = write(tmp_path, HEAD + VARIANTS, "good.yaml")
    result = invoke_cli(["validate", str(good)], tmp_path, embedding_cache)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"{good}: valid — control vs deeper on 2 collections (hr-docs, hr-copy)"
    bad = write(tmp_path, HEAD.replace("name: hr-copy", "name: hr-docs") + VARIANTS, "bad.yaml")
    for command in ("validate", "run"):
        result = invoke_cli([command, str(bad)], tmp_path, embedding_cache)
        assert result.returncode == 2 and "Traceback" not in result.stderr
        line = line_of(bad, "  - name: hr-docs", 1)
        assert error_lines(result.stderr) == [
            f"error: {bad}:{line}: datasets.1.name: two collections are named 'hr-docs'; rename one"
        ]
        assert "• control" not in result.stderr and not (tmp_path / "mlflow.db").exists()


def test_the_schema_takes_datasets_instead_of_dataset_but_never_neither_or_both():
    import jsonschema
    import yaml

    from abcompare.config import config_schema

    schema = config_schema()
    shipped = yaml.safe_load((REPO / "configs" / "collections_bm25_vs_hybrid.yaml").read_text())
    jsonschema.validate(shipped, schema)
    entry = schema["$defs"]["CollectionSettings"]
    assert "name" in entry["required"] and "runs" in entry["properties"]
    rest = {key: value for key, value in shipped.items() if key != "datasets"}
    for document in (rest, {**rest, "datasets": shipped["datasets"], "dataset": {"name": "hr-docs"}}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(document, schema)
