"""The range the unjudged hits allow, against brute force: every assignment of the unjudged hits (not
relevant, or relevant at the top grade) added to the judgments and rescored by the evaluator itself
(``evaluate_run``, the independent path), in both conventions, for every measure."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from abcompare.core.errors import AbcompareWarning
from abcompare.evaluation.batch import evaluate_run, in_evaluation_order
from abcompare.evaluation.unjudged import unjudged_range

QUERIES = ["q1", "q2", "q3"]
KEYS = list("abcdefg")
MEASURES = ("precision", "recall", "f1", "mrr", "ndcg")


def _run(lists: dict[str, list[str]], tied: bool) -> pd.DataFrame:
    rows = []
    for q, keys in lists.items():
        for rank, key in enumerate(keys, start=1):
            score = float(len(keys) - rank) // 2 if tied else float(len(keys) - rank)  # ties in pairs
            rows.append((q, rank, key, score))
    return pd.DataFrame(rows, columns=["query_id", "rank", "key", "score"])


def _mean_delta(control, treatment, annotations, metric, k, convention, threshold) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AbcompareWarning)  # repeated keys, drawn on purpose
        frames = [
            evaluate_run(run, annotations, k=k, convention=convention, relevance_threshold=threshold)
            .reindex(QUERIES)[metric]
            .to_numpy()
            for run in (treatment, control)
        ]
    return float((frames[0] - frames[1]).mean())


def _every_assignment(control, treatment, annotations, unjudged, grade, metric, k, convention, threshold):
    """(subsets, mean delta of each): every subset of ``unjudged`` judged relevant at ``grade``, the rest
    not, each rescored by the evaluator; all subsets in one call (each a copy of the queries)."""
    subsets = [s for size in range(len(unjudged) + 1) for s in itertools.combinations(unjudged, size)]

    def copies(frame: pd.DataFrame) -> pd.DataFrame:
        return pd.concat(
            [frame.assign(query_id=frame["query_id"] + f"|{i}") for i in range(len(subsets))],
            ignore_index=True,
        )

    extra = [(f"{q}|{i}", key, grade) for i, subset in enumerate(subsets) for q, key in subset]
    judged = pd.concat(
        [copies(annotations), pd.DataFrame(extra, columns=["query_id", "key", "grade"])], ignore_index=True
    )
    order = [f"{q}|{i}" for i in range(len(subsets)) for q in QUERIES]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AbcompareWarning)
        values = [
            evaluate_run(copies(run), judged, k=k, convention=convention, relevance_threshold=threshold)
            .reindex(order)[metric]
            .to_numpy()
            .reshape(len(subsets), len(QUERIES))
            for run in (treatment, control)
        ]
    return subsets, (values[0] - values[1]).mean(axis=1)


def _unjudged(control, treatment, annotations, k, convention) -> list[tuple[str, str]]:
    judged = set(zip(annotations["query_id"], annotations["key"], strict=True))
    out = []
    for run in (treatment, control):
        ordered = in_evaluation_order(run, convention)
        for q, group in ordered.groupby("query_id", sort=False):
            for key in group["key"].tolist()[:k]:
                if (q, key) not in judged and (q, key) not in out:
                    out.append((q, key))
    return out


def _with(annotations: pd.DataFrame, relevant: list[tuple[str, str]], grade: float) -> pd.DataFrame:
    extra = pd.DataFrame([(q, key, grade) for q, key in relevant], columns=["query_id", "key", "grade"])
    return pd.concat([annotations, extra], ignore_index=True) if relevant else annotations


@st.composite
def cases(draw):
    lists = []
    for _ in range(2):
        lists.append(
            {q: draw(st.lists(st.sampled_from(KEYS), min_size=0, max_size=5)) for q in QUERIES}
        )  # repeats allowed: ai4j counts them, trec keeps the first
    judgments = []
    for q in QUERIES:
        keys = draw(st.lists(st.sampled_from(KEYS), min_size=1, max_size=4, unique=True))
        judgments += [(q, key, draw(st.integers(0, 3))) for key in keys]
    annotations = pd.DataFrame(judgments, columns=["query_id", "key", "grade"])
    return (
        lists,
        annotations,
        draw(st.integers(1, 4)),
        draw(st.sampled_from(["ai4j", "trec"])),
        draw(st.sampled_from([1, 2])),
        draw(st.booleans()),
    )


@settings(max_examples=40, deadline=None)
@given(cases(), st.sampled_from(MEASURES))
def test_the_range_is_the_brute_force_range_of_every_assignment(case, measure):
    lists, annotations, k, convention, threshold, tied = case
    treatment, control = _run(lists[0], tied), _run(lists[1], tied)
    metric = f"{measure}@{k}"
    unjudged = _unjudged(control, treatment, annotations, k, convention)
    top = max(float(annotations["grade"].max()), threshold)
    got = unjudged_range(
        control, treatment, annotations, QUERIES, metric=metric, convention=convention,
        relevance_threshold=threshold,
    )  # fmt: skip
    observed = _mean_delta(control, treatment, annotations, metric, k, convention, threshold)
    assert got.delta == pytest.approx(observed, abs=1e-12)
    assert got.n_unjudged == len(unjudged)
    if len(unjudged) > 8:
        return  # too many to enumerate (2^n rescorings): the observed delta and the count are checked
    _, brute = _every_assignment(
        control, treatment, annotations, unjudged, top, metric, k, convention, threshold
    )
    assert got.low == pytest.approx(brute.min(), abs=1e-12)
    assert got.high == pytest.approx(brute.max(), abs=1e-12)


@settings(max_examples=25, deadline=None)
@given(cases(), st.sampled_from(MEASURES), st.sampled_from([-1, 1]), st.floats(0.0, 1.0))
def test_the_fewest_judgments_found_do_reach_the_target_and_none_fewer_exist_below_it(
    case, measure, direction, share
):
    lists, annotations, k, convention, threshold, tied = case
    treatment, control = _run(lists[0], tied), _run(lists[1], tied)
    metric = f"{measure}@{k}"
    got = unjudged_range(
        control, treatment, annotations, QUERIES, metric=metric, convention=convention,
        relevance_threshold=threshold,
    )  # fmt: skip
    extreme = got.high if direction > 0 else got.low
    target = got.delta + share * (extreme - got.delta)
    found = got.fewest_judgments(target, direction)
    unjudged = _unjudged(control, treatment, annotations, k, convention)
    if found is None:  # greedy found no way: then the target lies beyond what any judgment reaches
        assert direction * (extreme - target) < 1e-12 or share == 1.0
        return
    rescored = _mean_delta(
        control, treatment, _with(annotations, found, got.top_grade), metric, k, convention, threshold
    )
    assert direction * (rescored - target) >= -1e-12
    if len(unjudged) <= 7 and found:
        subsets, means = _every_assignment(
            control, treatment, annotations, unjudged, got.top_grade, metric, k, convention, threshold
        )
        fewest = min(
            len(s) for s, mean in zip(subsets, means, strict=True) if direction * (mean - target) >= -1e-12
        )
        assert fewest <= len(found)


def test_a_hand_case_in_the_ai4j_convention():
    """One query, k = 2; control [a, u], treatment [u, b]; a is relevant, b judged not relevant, u unjudged.
    Today: control nDCG 1/1 = 1 (ideal over min(2, 1) = 1 hit), treatment 0: delta -1. With u relevant:
    control (1 + 1/log2 3) / (1 + 1/log2 3) = 1, treatment 1 / (1 + 1/log2 3) = 0.613: delta -0.387."""
    control = pd.DataFrame({"query_id": ["q", "q"], "rank": [1, 2], "key": ["a", "u"]})
    treatment = pd.DataFrame({"query_id": ["q", "q"], "rank": [1, 2], "key": ["u", "b"]})
    annotations = pd.DataFrame({"query_id": ["q", "q"], "key": ["a", "b"], "grade": [1, 0]})
    got = unjudged_range(control, treatment, annotations, ["q"], metric="ndcg@2", convention="ai4j")
    assert got.n_unjudged == 1
    assert got.delta == pytest.approx(-1.0)
    assert got.low == pytest.approx(-1.0)
    assert got.high == pytest.approx(1 / (1 + 1 / np.log2(3)) - 1)
    assert list(got.hits["key"]) == ["u"]
    assert got.hits["swing"].iloc[0] == pytest.approx(got.high - got.delta)


@pytest.mark.parametrize("convention", ["trec", "ai4j"])
def test_the_queries_summarised_together_give_each_query_s_own_summary_bit_for_bit(convention: str) -> None:
    """Queries with the same number of unjudged hits are summarised as one array (issue 38's speed-up); each
    row must be the query's own :meth:`summary`, to the bit, for every measure (MRR stays per query)."""
    from abcompare.evaluation.unjudged import _query_terms, _summaries

    rng = np.random.default_rng(38)
    for measure in MEASURES:
        terms = []
        for _ in range(60):
            graded = {f"j{i}": float(rng.integers(0, 4)) for i in range(int(rng.integers(0, 6)))}
            pool = [*graded, *(f"u{i}" for i in range(int(rng.integers(0, 7))))]
            lists = [list(rng.permutation(pool))[: int(rng.integers(0, len(pool) + 1))] for _ in range(2)]
            sides = [(hits, len(hits) + int(rng.integers(0, 3))) for hits in lists]
            terms.append(_query_terms(measure, 5, convention, 1.0, 3.0, graded, sides[0], sides[1]))
        together = _summaries(terms)
        for t, got in zip(terms, together, strict=True):
            alone = t.summary()
            assert np.array(got[:3]).tobytes() == np.array(alone[:3]).tobytes()  # bits, the zero's sign too
            assert got[3].tobytes() == alone[3].tobytes()
