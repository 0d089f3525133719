"""``examples/python_retriever``: the config and script run as shipped, from any folder, reach the shipped
corpus through ``example_path`` and read the verdict from the result. The treatment's nDCG@10 is checked
against a hand computation (graded gains, log2 discounts) from the retriever's own hits and the qrels."""

from __future__ import annotations

import csv
import importlib.util
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from support.cli import REPO

from abcompare.examples import example_path

EXAMPLE = REPO / "examples" / "python_retriever"


def load_script():
    spec = importlib.util.spec_from_file_location("python_retriever_example", EXAMPLE / "run.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def hand_ndcg_at_10(hits: list[dict], grades: dict[str, int]) -> float:
    dcg = sum(grades.get(hit["id"], 0) / math.log2(rank + 1) for rank, hit in enumerate(hits[:10], start=1))
    ideal = sorted(grades.values(), reverse=True)[:10]
    idcg = sum(g / math.log2(rank + 1) for rank, g in enumerate(ideal, start=1))
    return dcg / idcg if idcg > 0 else 0.0


def test_the_example_runs_from_any_folder_and_reads_its_verdict(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)  # not the checkout: the config is found beside the script
    script = load_script()
    verdict = script.main()
    printed = capsys.readouterr().out
    assert printed.startswith(
        f"overlap vs BM25 on ndcg@10: {verdict['verdict']}, delta {verdict['delta']:+.3f}"
    )
    assert verdict["verdict"] in ("better", "worse", "no significant difference")
    low, high = verdict["ci"]
    assert low <= verdict["delta"] <= high
    assert ((low > 0) | (high < 0)) == (verdict["p_adjusted"] <= 0.05)  # the row's interval and verdict agree
    assert not list(tmp_path.iterdir())  # tracking off: the example writes nothing where it is run


def test_the_treatment_scores_what_a_hand_ndcg_gives_its_hits() -> None:
    script = load_script()
    queries = pd.read_json(example_path("hr-docs") / "queries.jsonl", lines=True).rename(
        columns={"_id": "query_id"}
    )
    with open(example_path("hr-docs") / "qrels" / "test.tsv", encoding="utf-8") as rows:
        grades: dict[str, dict[str, int]] = {}
        for row in csv.DictReader(rows, delimiter="\t"):
            grades.setdefault(row["query-id"], {})[row["corpus-id"]] = int(row["score"])
    hits = script.overlap_retriever(queries[["query_id", "text"]])
    by_hand = np.mean([hand_ndcg_at_10(hits[q], grades.get(q, {})) for q in queries["query_id"]])
    from abcompare import load_config, run_comparison

    result = run_comparison(
        load_config(EXAMPLE / "config.yaml"), retrievers={"overlap": script.overlap_retriever}
    )
    assert result.means["overlap"]["ndcg@10"] == pytest.approx(by_hand, abs=1e-9)
