"""Retrievers from Python: ``run: {python: NAME}`` in the config, ``run_comparison(config, retrievers={NAME:
fn})`` from Python. The callable's hits are judged exactly as the same hits in a run file; its output is
checked by the run-file rules; a name nobody handed over is a located error before any run opens."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from support.cli import REPO, error_lines, invoke_cli
from support.clock import pause

from abcompare import RagHit, load_config, read_run, run_comparison, write_run
from abcompare.core.errors import AbcompareWarning, ConfigError, DataError
from abcompare.data.runs import hits_from_run_frame, run_frame_from_hits
from abcompare.outcome.rows import format_duration

PRODUCTION = REPO / "configs" / "runs" / "hr_docs_production.trec"

CONFIG = """\
name: python-retriever
dataset: {{name: hr-docs, level: document}}
control:
  run: {{path: {control}}}
treatments:
  other:
    run: {treatment}
significance: {{n_resamples: 1000, seed: 3}}
tracking: {{enabled: {tracking}, uri: "sqlite:///{store}"}}
"""


def other_hits() -> dict[str, list[RagHit]]:
    """A second system's hits: the production run with every other query's list reversed, without scores
    (its order is its ranks), so it differs from the control on half the queries."""
    hits = hits_from_run_frame(read_run(PRODUCTION))
    return {
        query: [
            RagHit(id=hit.id, rank=rank)
            for rank, hit in enumerate(reversed(listed) if i % 2 else listed, start=1)
        ]
        for i, (query, listed) in enumerate(hits.items())
    }


def write_config(folder: Path, treatment: str, *, tracking: bool = False) -> Path:
    path = folder / "config.yaml"
    text = CONFIG.format(
        control=PRODUCTION, treatment=treatment, tracking=str(tracking).lower(), store=folder / "mlflow.db"
    )
    path.write_text(text)
    return path


def test_a_python_retriever_and_a_run_file_with_the_same_hits_give_identical_numbers(tmp_path: Path):
    hits = other_hits()
    run_file = write_run(run_frame_from_hits(hits), tmp_path / "other.jsonl", fmt="jsonl")
    from_file = run_comparison(load_config(write_config(tmp_path, f"{{path: {run_file}}}")))

    seen: list[pd.DataFrame] = []

    def retrieve(queries: pd.DataFrame) -> dict[str, list[RagHit]]:
        seen.append(queries)
        pause(0.05)  # a system that takes its time: the cost is measured, not assumed
        return {query: hits[query] for query in queries["query_id"]}

    config = load_config(write_config(tmp_path, "{python: prod}"))
    from_python = run_comparison(config, retrievers={"prod": retrieve})

    (queries,) = seen  # called once, with the evaluated queries' table
    assert queries["query_id"].tolist() == from_python.queries["query_id"].tolist()
    assert queries["text"].tolist() == from_python.queries["text"].tolist()
    pd.testing.assert_frame_equal(
        from_python.variants["other"].per_query, from_file.variants["other"].per_query
    )
    pd.testing.assert_frame_equal(from_python.comparison, from_file.comparison)
    assert from_python.comparison["p_primary"].notna().all()  # p-values were computed, and are equal
    assert not from_python.variants["other"].per_query.equals(from_python.variants["control"].per_query)
    seconds = from_python.variants["other"].efficiency["efficiency.seconds_per_query"]
    # its wall time over the queries, per query: at least the 0.05 s it slept (a wait is never shorter), and
    # no upper bound, which would be the machine's load
    assert seconds >= 0.05 / len(queries)  # timing-ok: a lower bound that pause() guarantees
    assert from_file.variants["other"].efficiency == {}  # a run file costs nothing we could measure
    # each still gets a cost line under its verdict, saying what is known
    from abcompare.outcome.sentences import cost_sentence

    python_cost = cost_sentence(from_python.cost, "other")
    assert python_cost.startswith(f"Cost: the Python retriever took {format_duration(seconds)} per query")
    assert cost_sentence(from_file.cost, "other") == (
        "Cost: not measured here (a run file: it was retrieved elsewhere)."
    )


def test_a_python_retriever_may_return_a_run_dataframe(tmp_path: Path):
    hits = other_hits()
    frame = (
        run_frame_from_hits(hits).drop(columns=["score"]).sample(frac=1.0, random_state=0)
    )  # any row order
    config = load_config(write_config(tmp_path, "{python: prod}"))
    from_frame = run_comparison(config, retrievers={"prod": lambda queries: frame})
    from_lists = run_comparison(config, retrievers={"prod": lambda queries: hits})
    pd.testing.assert_frame_equal(
        from_frame.variants["other"].per_query, from_lists.variants["other"].per_query
    )


# ------------------------------------------------------------------------------------------ refused
def test_a_config_naming_a_retriever_nobody_handed_over_is_refused_at_its_key_before_any_run(tmp_path: Path):
    config = load_config(write_config(tmp_path, "{python: prod}", tracking=True))
    with pytest.raises(ConfigError) as caught:
        run_comparison(config)
    assert caught.value.field == "treatments.other.run.python"
    assert "names the Python retriever 'prod', which nobody handed over" in caught.value.message
    assert "run_comparison(config, retrievers={'prod': fn})" in caught.value.hint
    with (
        pytest.raises(ConfigError, match="handed over: 'prd'"),
        pytest.warns(AbcompareWarning, match="'prd'"),
    ):
        run_comparison(config, retrievers={"prd": lambda queries: {}})  # a misspelt name: said, then refused
    with pytest.raises(ConfigError, match="is a str, not a callable"):
        run_comparison(config, retrievers={"prod": "my_module.retrieve"})
    with pytest.raises(ConfigError), pytest.warns(AbcompareWarning, match="'spare' were handed over, but no"):
        run_comparison(config, retrievers={"prod": 1, "spare": lambda queries: {}})
    assert not (tmp_path / "mlflow.db").exists()  # no store opened, no run left behind


def test_the_command_line_refuses_such_a_config_in_one_line(tmp_path: Path, embedding_cache: Path):
    config = tmp_path / "config.yaml"
    config.write_text(
        CONFIG.format(
            control=PRODUCTION, treatment="{python: prod}", tracking="true", store=tmp_path / "m.db"
        ).replace("control:\n  run: {path: " + str(PRODUCTION) + "}", "control:\n  run: {python: ours}")
    )
    result = invoke_cli(["run", str(config)], tmp_path, embedding_cache)
    assert result.returncode == 2, result.stderr
    (line,) = error_lines(result.stderr)
    assert line.startswith(
        f"error: {config}: control.run.python: names the Python retriever 'ours', which nobody handed over "
        "(no retrievers were handed over, as the command line cannot) (the YAML never imports code: run it "
        "from Python with "
        "run_comparison(config, retrievers={'ours': fn})"
    ), line
    assert not (tmp_path / "m.db").exists()
    valid = invoke_cli(["validate", str(config)], tmp_path, embedding_cache)  # a valid config all the same
    assert valid.returncode == 0, valid.stderr
    assert "note: it names Python retrievers ('ours', 'prod'): run it from Python with" in valid.stdout


def test_a_run_is_a_file_or_a_python_retriever_not_both(tmp_path: Path):
    with pytest.raises(ConfigError) as caught:
        load_config(write_config(tmp_path, f"{{python: prod, path: {PRODUCTION}}}"))
    assert caught.value.field == "treatments.other.run"
    assert "a run is a file ('path') or a Python retriever ('python'), not both" in caught.value.message


@pytest.mark.parametrize(
    "returned, expected",
    [
        (None, "the Python retriever 'prod' returned a NoneType, not the queries' hits"),
        ({}, "the Python retriever 'prod' returned no hit for any query"),
        ({"qa-001": "travel-booking"}, "the hits of query 'qa-001' are a str, not a list"),
        (
            {"qa-001": [{"id": "a", "rank": 1}, {"id": "b", "rank": 1}]},
            "the Python retriever 'prod' query 'qa-001': rank: duplicate rank 1 for query 'qa-001'",
        ),
        (
            {"qa-001": [{"id": "a", "score": "high"}]},
            "query 'qa-001': hits[0].score: invalid hit: Input should be a valid number",
        ),
        (
            {"qa-001": [{"id": "a", "score": float("inf")}]},
            "the Python retriever 'prod' query 'qa-001': hits[0].score: invalid hit: score is inf",
        ),
        (
            pd.DataFrame({"query_id": ["qa-001", "qa-001"], "rank": [1, 3], "key": ["a", "b"]}),
            "row 2: rank: rank gap: expected rank 2, found 3 for query 'qa-001'",
        ),
    ],
    ids=["none", "empty", "string", "repeated-rank", "bad-score", "inf-score", "rank-gap"],
)
def test_a_retrievers_output_is_checked_by_the_run_file_rules(returned, expected: str, tmp_path: Path):
    config = load_config(write_config(tmp_path, "{python: prod}"))
    with pytest.raises(DataError) as caught:
        run_comparison(config, retrievers={"prod": lambda queries: returned})
    assert caught.value.field == "treatments.other.run.python"
    assert expected in caught.value.message, caught.value.message
