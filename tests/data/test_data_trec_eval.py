"""A TREC run written by abcompare evaluates identically in trec_eval (pytrec_eval is the oracle)."""

from __future__ import annotations

import pandas as pd
import pytest
from support.environment import require_module

from abcompare.core.errors import AbcompareWarning
from abcompare.data import read_annotations, read_run, write_run

pytrec_eval = require_module("pytrec_eval")

MEASURES = {"map", "P_10", "ndcg_cut_10", "recall_100", "recip_rank", "num_rel_ret"}


def _evaluate_file(qrels_path, run_path) -> dict[str, dict[str, float]]:
    with open(qrels_path) as f:
        qrels = pytrec_eval.parse_qrel(f)
    with open(run_path) as f:
        run = pytrec_eval.parse_run(f)
    return pytrec_eval.RelevanceEvaluator(qrels, MEASURES).evaluate(run)


def test_rewritten_conformance_run_scores_exactly_like_the_original(trec_conformance_dir, tmp_path):
    qrels = trec_conformance_dir / "qrels.test"
    original = trec_conformance_dir / "results.test"
    written = write_run(read_run(original), tmp_path / "run.trec", run_name="STANDARD")
    assert _evaluate_file(qrels, written) == _evaluate_file(qrels, original)


def test_rewritten_conformance_run_matches_trec_eval_published_means(trec_conformance_dir, tmp_path):
    written = write_run(read_run(trec_conformance_dir / "results.test"), tmp_path / "run.trec")
    per_query = _evaluate_file(trec_conformance_dir / "qrels.test", written)
    expected = {}
    for line in (trec_conformance_dir / "out.test.a").read_text().splitlines():
        name, scope, value = line.split()
        if scope == "all" and name in {"map", "P_10", "ndcg_cut_10", "recip_rank"}:
            expected[name] = float(value)
    for name, value in expected.items():
        mean = sum(q[name] for q in per_query.values()) / len(per_query)
        assert round(mean, 4) == value, name


def test_tied_scores_are_written_so_trec_eval_keeps_our_ranking(tmp_path):
    # ranks say a, b, c but the scores tie (and would sort c, b, a by docno descending in trec_eval)
    run = pd.DataFrame(
        {"query_id": ["q"] * 3, "rank": [1, 2, 3], "key": ["a", "b", "c"], "score": [1.0, 1.0, 1.0]}
    )
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q 0 a 1\nq 0 c 0\n")
    with pytest.warns(AbcompareWarning):
        written = write_run(run, tmp_path / "run.trec")
    reference = tmp_path / "reference.trec"  # the same ranking with unambiguous scores
    reference.write_text("q Q0 a 1 3 ref\nq Q0 b 2 2 ref\nq Q0 c 3 1 ref\n")
    result = _evaluate_file(qrels, written)
    assert result == _evaluate_file(qrels, reference)
    assert result["q"]["recip_rank"] == 1.0


def test_core_evaluator_agrees_with_trec_eval_on_a_run_read_back(trec_conformance_dir, tmp_path):
    from abcompare.evaluation import batch

    written = write_run(read_run(trec_conformance_dir / "results.test"), tmp_path / "run.trec")
    ours = batch.evaluate_run(
        read_run(written),
        read_annotations(trec_conformance_dir / "qrels.test"),
        k=(10, 100),
        convention="trec",
    )
    oracle = _evaluate_file(trec_conformance_dir / "qrels.test", written)
    assert sorted(oracle) == ["301", "302", "303"]
    for qid, values in oracle.items():
        assert ours.loc[qid, "precision@10"] == pytest.approx(values["P_10"], abs=1e-12)
        assert ours.loc[qid, "ndcg@10"] == pytest.approx(values["ndcg_cut_10"], abs=1e-12)
        assert ours.loc[qid, "recall@100"] == pytest.approx(values["recall_100"], abs=1e-12)
