"""The fast path for ``{query: {key: score}}`` runs and ``{query: {id: grade}}`` judgments gives exactly what
the general path gives, and hands anything out of the ordinary to it."""

from __future__ import annotations

import warnings
from collections import OrderedDict

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from abcompare.evaluation.batch import evaluate_run
from abcompare.evaluation.mappings import judged_hits_of_mappings

KEYS = ["a", "b", "c", "d", "e", "B", "d#0", "x-1", "y_2"]
QUERIES = ["q1", "q2", "q3", "q4"]
scores = st.dictionaries(st.sampled_from(KEYS), st.sampled_from([0.0, 0.5, 1.0, 2.0, -1.0, 0.25]), max_size=8)
runs = st.dictionaries(st.sampled_from(QUERIES), scores, max_size=4)
judgments = st.dictionaries(
    st.sampled_from(QUERIES),
    st.dictionaries(st.sampled_from(KEYS), st.integers(-1, 3), max_size=5),
    max_size=4,
)


def as_frames(run, annotations):
    """The same inputs as tables, which always take the general path."""
    run_df = pd.DataFrame(
        [(q, 1, k, s) for q, hits in run.items() for k, s in hits.items()],
        columns=["query_id", "rank", "key", "score"],
    )
    ann_df = pd.DataFrame(
        [(q, k, g) for q, judged in annotations.items() for k, g in judged.items()],
        columns=["query_id", "key", "grade"],
    )
    return run_df, ann_df


@settings(max_examples=300, deadline=None)
@given(
    runs,
    judgments,
    st.lists(st.integers(1, 10), min_size=1, max_size=3),
    st.sampled_from(["ai4j", "trec"]),
    st.sampled_from([1, 2]),
    st.sampled_from(["nonrelevant", "condensed"]),
)
def test_the_fast_path_equals_the_general_path_exactly(run, annotations, ks, convention, threshold, unjudged):
    kwargs = {"k": ks, "convention": "trec", "relevance_threshold": threshold, "unjudged": unjudged}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fast = evaluate_run(run, annotations, **kwargs)
        general = evaluate_run(*as_frames(run, annotations), **kwargs)
    pd.testing.assert_frame_equal(fast, general)
    # {key: score} mappings are ranked by score in both conventions
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ai4j = evaluate_run(run, annotations, **{**kwargs, "convention": convention})
    columns = [c for c in fast.columns if not c.startswith(("precision", "f1", "ndcg"))]
    pd.testing.assert_frame_equal(ai4j[columns], fast[columns])


def test_clean_inputs_take_the_fast_path_and_anything_odd_does_not():
    run = {"q1": {"a": 1.0, "b": 2.0}, "q2": {"c": 0.5}}
    annotations = {"q1": {"a": 1, "c": 0}, "q2": {"c": 2}}
    assert judged_hits_of_mappings(run, annotations) is not None
    odd = [
        ({"q1": {" a": 1.0}}, annotations),  # a key that stripping changes
        ({"q1": {"": 1.0}}, annotations),  # an empty key
        ({"q1": {"a\x00b": 1.0}}, annotations),  # the separator inside a key
        ({"q1": {"é": 1.0}}, annotations),  # non-ASCII: characters are not bytes
        ({"q1": {1: 1.0}}, annotations),  # a key that is not a string
        ({"q1": {"a": float("nan")}}, annotations),  # the general path names it
        ({1: {"a": 1.0}}, annotations),  # a query id that is not a string
        ({"q1": None, "q2": {"c": 0.5}}, annotations),  # a judged query's list is None
        ({"q1": OrderedDict(a=1.0)}, annotations),  # another mapping type
        (run, {"q1": {"": 1}}),  # an empty judged id
        (run, {"q1": {"a ": 1}}),
        (run, {"q1": {"a": "high"}}),
        (run, {"q1": ["a"]}),
        (pd.DataFrame(), annotations),
    ]
    for odd_run, odd_annotations in odd:
        assert judged_hits_of_mappings(odd_run, odd_annotations) is None, (odd_run, odd_annotations)


def test_ties_are_broken_by_the_greater_key_first_as_trec_eval_does():
    run = {"q": {"a": 1.0, "c": 1.0, "b": 1.0, "z": 0.5}}
    annotations = {"q": {"b": 1}}
    row = evaluate_run(run, annotations, k=(1, 2, 3), convention="trec").loc["q"]
    assert row[["mrr@1", "mrr@2", "mrr@3"]].tolist() == [0.0, 1 / 2, 1 / 2]  # order: c, b, a, z


def test_heavily_tied_runs_take_the_fast_path_and_agree():
    rng = np.random.default_rng(1)
    run = {f"q{i}": {f"d{j}": float(rng.integers(0, 3)) for j in range(40)} for i in range(50)}
    annotations = {f"q{i}": {f"d{j}": int(rng.integers(0, 3)) for j in rng.choice(40, 6)} for i in range(50)}
    assert judged_hits_of_mappings(run, annotations) is not None  # ties are broken pair by pair
    fast = evaluate_run(run, annotations, k=(1, 5, 10), convention="trec")
    pd.testing.assert_frame_equal(
        fast, evaluate_run(*as_frames(run, annotations), k=(1, 5, 10), convention="trec")
    )


@pytest.mark.parametrize("empty", [{}, {"q9": {}}])
def test_queries_without_hits_or_judgments(empty):
    annotations = {"q1": {"a": 1}, "q2": {"b": 1}, **empty}
    frame = evaluate_run({"q1": {"a": 1.0}}, annotations, k=1, convention="trec")
    assert list(frame.index) == ["q1", "q2"]
    assert frame.loc["q2", "retrieved_count"] == 0 and frame.loc["q1", "precision@1"] == 1.0
