"""The answers stage across several collections (``datasets:``): each collection's comparison answers its own
first queries from its own hits, compares them paired and writes its traces under its own collection run;
the console prints each collection's answer lines and ``--json`` has an ``answers`` block per collection.

Small on purpose: hr-docs and Cranfield at the document level, BM25 against BM25 with a lower k1, both
answered by the extractive baseline (no model), 4 queries each, no judge (the exact citation scores)."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest
from mlflow import MlflowClient
from support.configs import TWO_COLLECTIONS

from abcompare.config.loading import load_config
from abcompare.outcome.console import print_report, result_as_json
from abcompare.runner import run_comparison

pytestmark = pytest.mark.slow

CONFIG = (
    "name: answers-two\n"
    + TWO_COLLECTIONS
    + "answers: {{k: 2, max_queries: 4}}\n"
    + 'tracking: {{uri: "sqlite:///{store}", experiment: answers-two}}\n'
)


@pytest.fixture(scope="module")
def two(tmp_path_factory: pytest.TempPathFactory, datasets_dir: Path, embedding_cache: Path):
    folder = tmp_path_factory.mktemp("answers-collections")
    path = folder / "two.yaml"
    path.write_text(CONFIG.format(cranfield=datasets_dir / "cranfield", store=folder / "mlflow.db"))
    result = run_comparison(load_config(path, [f"cache_dir={embedding_cache}"]))
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        print_report(result)
    return result, printed.getvalue()


def test_each_collection_answers_its_own_queries_from_its_own_hits(two) -> None:
    result, _ = two
    assert list(result.collections) == ["hr-docs", "cranfield"]
    for collection in result.collections.values():
        outcome = collection.answers
        first = list(collection.queries["query_id"].astype(str))[:4]
        assert list(outcome.comparison.queries) == first and list(outcome.question) == first
        for name in ("control", "bm25-k1"):
            answers = outcome.answers[name]
            assert list(answers.table["query_id"]) == first
            run = collection.variants[name].run
            for query_id in first:  # the hits each answer was given are that collection's own top 2
                top = run[run["query_id"].astype(str) == query_id].sort_values("rank")["key"].astype(str)
                assert [h.id for h in answers.hits[query_id]] == list(top.head(2))
                assert set(answers.answer(query_id)[1]) <= set(top.head(2))
    hr_docs, cranfield = (set(c.answers.question) for c in result.collections.values())
    assert not hr_docs & cranfield


def test_each_collections_traces_are_under_its_own_run(two) -> None:
    result, _ = two
    client = MlflowClient(result.tracking_uri)
    for name, collection in result.collections.items():
        run = client.get_run(result.collection_run_ids[name])
        found = client.search_traces(locations=[run.info.experiment_id], run_id=run.info.run_id)
        assert len(found) == 8  # 4 queries x 2 variants
        said = {(t.info.tags["abcompare.variant"], t.info.tags["abcompare.query_id"]) for t in found}
        assert said == {(v, q) for v in ("control", "bm25-k1") for q in collection.answers.question}
        assert run.data.metrics["answers.control.citation_precision"] == pytest.approx(
            collection.answers.scores["control"].table["citation_precision"].mean()
        )


def test_the_console_and_the_json_have_each_collections_answers(two) -> None:
    result, printed = two
    lines = [line.strip() for line in printed.splitlines()]
    heads = [line for line in lines if line.startswith("answers (control")]
    sources = "control: generator:extractive, bm25-k1: generator:extractive"
    head = f"answers ({sources}); answers compared on 4 queries"
    assert heads == [head, head]
    assert sum(" by retrieval: " in line for line in lines) == 2  # the attribution, each
    data = json.loads(json.dumps(result_as_json(result)))
    for name, collection in result.collections.items():
        block = data["collections"][name]["answers"]
        assert block["queries"] == list(collection.answers.question) and block["traces"] == 8
        assert [row["metric"] for row in block["attribution"]] == ["citation_precision", "citation_recall"]
