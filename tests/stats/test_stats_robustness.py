"""Whether a verdict survives the missing judgments: the flip rule agrees with the verdict it reads, and the
robustness row says holds / flips on hand cases built with the real evaluation stage."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from abcompare.core.vocabulary import BETTER, NO_DIFFERENCE, WORSE
from abcompare.evaluation.unjudged import unjudged_ranges
from abcompare.stats.comparison import paired_test
from abcompare.stats.robustness import flip_rule, robustness_table


@settings(max_examples=80, deadline=None)
@given(st.floats(-0.2, 0.2), st.floats(1e-4, 0.999), st.floats(0.01, 0.3))
def test_the_boundary_agrees_with_the_verdict_it_reads(delta, p, sd):
    """A significant delta lies beyond its boundary, a non-significant one inside it."""
    alpha = 0.05
    verdict = (BETTER if delta > 0 else WORSE) if p <= alpha and delta != 0 else NO_DIFFERENCE
    rule = flip_rule(verdict, delta, p, alpha, sd, 50)
    if verdict == NO_DIFFERENCE:
        assert abs(delta) <= rule.boundary + 1e-12 and rule.holds(delta, delta)
    else:  # at p = alpha exactly the delta sits on the boundary, still significant
        assert abs(delta) >= rule.boundary - 1e-12 and rule.holds(delta, delta)


def test_a_normal_p_value_gives_back_its_own_boundary():
    # delta 0.03 with p = 0.01: se = 0.03 / z_{0.995} = 0.03 / 2.575829; boundary = 1.959964 * se = 0.022827
    rule = flip_rule(BETTER, 0.03, 0.01, 0.05, 0.1, 100)
    assert rule.boundary == pytest.approx(1.959964 * 0.03 / 2.575829, rel=1e-6)
    assert rule.directions == (-1,) and rule.to == (NO_DIFFERENCE,)
    assert not rule.holds(0.02, 0.05) and rule.holds(0.023, 0.05)


def _case(n_queries: int, unjudged_in_control: int):
    """The treatment finds the relevant hit r at rank 1 in every query, the control at rank 2 behind an
    unjudged hit u (in the first ``unjudged_in_control`` queries; a judged non-relevant one in the rest)."""
    rows_c, rows_t, judged = [], [], []
    for i in range(n_queries):
        q = f"q{i}"
        above = "u" if i < unjudged_in_control else "n"
        rows_c += [(q, 1, above), (q, 2, "r")]
        rows_t += [(q, 1, "r"), (q, 2, "x" if i % 2 else "n")]
        judged += [(q, "r", 1), (q, "n", 0)]
    frame = lambda rows: pd.DataFrame(rows, columns=["query_id", "rank", "key"])  # noqa: E731
    return frame(rows_c), frame(rows_t), pd.DataFrame(judged, columns=["query_id", "key", "grade"])


def _compare(control_run, treatment_run, annotations, ids):
    from abcompare.evaluation.per_query import per_query_metrics

    tables = [
        per_query_metrics(
            run, annotations, ids, measures=["ndcg"], cutoffs=[2], convention="ai4j", relevance_threshold=1
        )  # fmt: skip
        for run in (control_run, treatment_run)
    ]
    return paired_test(tables[0], {"t": tables[1]}, metrics=["ndcg@2"], n_resamples=500, seed=0)


def test_a_verdict_the_unjudged_hits_cannot_flip_holds():
    control_run, treatment_run, annotations = _case(30, 0)
    ids = [f"q{i}" for i in range(30)]
    tested = _compare(control_run, treatment_run, annotations, ids)
    comparison = tested.table
    ranges = unjudged_ranges(control_run, {"t": treatment_run}, annotations, ids, metric="ndcg@2",
                             convention="ai4j")  # fmt: skip
    row = robustness_table(tested, ranges).iloc[0]
    assert comparison["verdict"].iloc[0] == BETTER
    # only the treatment's x at rank 2 (odd queries) is unjudged: judged relevant it raises the treatment
    assert row["unjudged_hits"] == 15 and row["unjudged_min"] == pytest.approx(row["delta"])
    assert row["unjudged_max"] > row["delta"] and bool(row["holds"]) and row["flip_judgments"] is None


def test_a_verdict_a_few_judgments_flip_names_how_few():
    """Every control list opens with an unjudged u. Today a query's delta is 1 - 1/log2(3) = +0.369; with u
    relevant the control scores (1 + 1/log2 3) / (1 + 1/log2 3) = 1 and the treatment, whose ideal now
    counts two relevant hits, 1 / (1 + 1/log2 3) = 0.613: a delta of -0.387."""
    control_run, treatment_run, annotations = _case(30, 30)
    ids = [f"q{i}" for i in range(30)]
    tested = _compare(control_run, treatment_run, annotations, ids)
    comparison = tested.table
    ranges = unjudged_ranges(control_run, {"t": treatment_run}, annotations, ids, metric="ndcg@2",
                             convention="ai4j")  # fmt: skip
    row = robustness_table(tested, ranges).iloc[0]
    assert comparison["verdict"].iloc[0] == BETTER and not row["holds"]
    after = 1 / (1 + 1 / np.log2(3)) - 1
    assert row["unjudged_min"] == pytest.approx(after, abs=1e-12)
    gain = (1 - 1 / np.log2(3)) - after  # what one judgment takes off a query's delta
    needed = int(np.ceil((row["delta"] - row["boundary"]) * 30 / gain - 1e-9))
    assert row["flip_judgments"] == needed and row["flips_to"] == NO_DIFFERENCE
