"""The trec convention against trec_eval's own expected outputs (usnistgov/trec_eval test/ folder).

Files are parsed here with plain Python so that this pins the evaluator alone; a second test reads them
with abcompare.data's readers. trec_eval prints 4 decimals, hence the 5e-5 tolerance.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from abcompare.evaluation.batch import evaluate_run

CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
PRINTED = 5e-5
MEASURES = {"P": "precision", "recall": "recall", "ndcg_cut": "ndcg"}


def read_trec_run(path: Path) -> pd.DataFrame:
    """A TREC run: only the first 6 whitespace-separated fields count (trailing junk is tolerated)."""
    rows = [line.split()[:6] for line in path.read_text().splitlines() if line.strip()]
    frame = pd.DataFrame(rows, columns=["query_id", "q0", "key", "rank", "score", "tag"])
    return frame.assign(rank=frame["rank"].astype(int), score=frame["score"].astype(float))[
        ["query_id", "rank", "key", "score"]
    ]


def read_trec_qrels(path: Path) -> pd.DataFrame:
    rows = [line.split()[:4] for line in path.read_text().splitlines() if line.strip()]
    frame = pd.DataFrame(rows, columns=["query_id", "iteration", "key", "grade"])
    return frame.assign(grade=frame["grade"].astype(int))[["query_id", "key", "grade"]]


def read_expected(path: Path) -> dict[tuple[str, str], float]:
    """``(trec_eval measure, query id or "all") -> value`` for the measures we implement."""
    expected = {}
    for line in path.read_text().splitlines():
        measure, qid, value = line.split()
        if measure == "recip_rank" or measure.rsplit("_", 1)[0] in MEASURES:
            expected[(measure, qid)] = float(value)
    return expected


def ours(frame: pd.DataFrame, measure: str) -> str:
    if measure == "recip_rank":
        return "mrr@1000"  # no cutoff in trec_eval; every run here has <= 1000 hits per query
    name, k = measure.rsplit("_", 1)
    return f"{MEASURES[name]}@{k}"


CASES = [
    ("out.test.aq", "qrels.test", "results.test", 1),
    ("out.test.aqc", "qrels.test", "results.trunc", 1),
    ("out.test.aql", "qrels.rel_level", "results.test", 2),
]


def _check(frame: pd.DataFrame, expected: dict[tuple[str, str], float]) -> int:
    checked = 0
    for (measure, qid), value in expected.items():
        column = ours(frame, measure)
        got = frame[column].mean() if qid == "all" else frame.loc[qid, column]
        assert got == pytest.approx(value, abs=PRINTED), (measure, qid)
        checked += 1
    return checked


@pytest.mark.parametrize(("out", "qrels", "results", "level"), CASES)
def test_trec_convention_matches_trec_eval_expected_output(trec_conformance_dir, out, qrels, results, level):
    run = read_trec_run(trec_conformance_dir / results)
    annotations = read_trec_qrels(trec_conformance_dir / qrels)
    frame = evaluate_run(run, annotations, k=CUTOFFS, convention="trec", relevance_threshold=level)
    expected = read_expected(trec_conformance_dir / out)
    assert list(frame.index) == ["301", "302", "303"]
    assert _check(frame, expected) == 4 * (3 * len(CUTOFFS) + 1)


def test_missing_query_scores_zero_and_stays_in_the_mean_as_trec_eval_c(trec_conformance_dir):
    run = read_trec_run(trec_conformance_dir / "results.trunc")
    frame = evaluate_run(run, read_trec_qrels(trec_conformance_dir / "qrels.test"), k=10, convention="trec")
    assert frame.loc["302", "retrieved_count"] == 0
    assert frame.loc["302", "ndcg@10"] == 0.0
    assert frame["ndcg@10"].mean() == pytest.approx(0.1717, abs=PRINTED)


def test_the_data_layer_readers_give_the_same_numbers(trec_conformance_dir):
    from abcompare.data.annotations import read_annotations
    from abcompare.data.runs import read_run

    run = read_run(trec_conformance_dir / "results.test", fmt="trec")
    annotations = read_annotations(trec_conformance_dir / "qrels.test", fmt="trec")
    frame = evaluate_run(run, annotations, k=CUTOFFS, convention="trec")
    assert _check(frame, read_expected(trec_conformance_dir / "out.test.aq")) == 4 * (3 * len(CUTOFFS) + 1)
