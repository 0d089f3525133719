"""paired_comparison consumes evaluate_run's per-query table as it is (the contract between the stages)."""

from __future__ import annotations

import pandas as pd
import pytest

from abcompare.evaluation.batch import evaluate_run
from abcompare.stats.comparison import paired_comparison


def test_evaluate_run_tables_compare_on_their_metric_columns_only():
    annotations = pd.DataFrame({"query_id": ["q1", "q2", "q3"], "key": ["b", "c", "e"], "grade": [1, 1, 1]})

    def run(keys: dict[str, list[str]]) -> pd.DataFrame:
        rows = [(q, r + 1, k, 1.0 / (r + 1)) for q, ks in keys.items() for r, k in enumerate(ks)]
        return pd.DataFrame(rows, columns=["query_id", "rank", "key", "score"])

    control = evaluate_run(run({"q1": ["a", "b"], "q2": ["d", "c"], "q3": ["x", "y"]}), annotations, k=(1, 2))
    treatment = evaluate_run(
        run({"q1": ["b", "a"], "q2": ["c", "d"], "q3": ["e", "y"]}), annotations, k=(1, 2)
    )
    table = paired_comparison(control, {"better": treatment}, n_resamples=200)
    assert set(table["metric"]) == {
        f"{m}@{k}" for m in ("precision", "recall", "f1", "mrr", "ndcg") for k in (1, 2)
    }
    row = table.set_index("metric").loc["precision@1"]
    # control hits at rank 1 for no query, the treatment for all three: P@1 0 -> 1, three wins.
    assert (row["control_mean"], row["treatment_mean"], row["wins"]) == (0.0, 1.0, 3)
    assert row["p_permutation"] == pytest.approx(2 / 8)  # n = 3: exact, only all-+ and all-- reach |sum| 3
