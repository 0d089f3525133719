"""Query planning: rewrites retrieved and fused per question (equal to fusing the per-text runs with
abcompare.fuse), RM3 feedback pinned on a hand-computed case, and the variants file's bad lines."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from pydantic import ValidationError

import abcompare
from abcompare.core.errors import ConfigError
from abcompare.examples import example_path
from abcompare.retrieval.bm25 import BM25Index
from abcompare.retrieval.pipeline import RetrievalCache, run_variant
from abcompare.retrieval.query_planning import read_variants_file, rm3_ranking, rm3_weights
from abcompare.retrieval.settings import BM25Settings, QueryPlanningSettings, VariantSettings

HR_DOCS = example_path("hr-docs")


def hr_docs() -> tuple[pd.DataFrame, pd.DataFrame]:
    dataset = abcompare.load_beir(HR_DOCS)
    return dataset.corpus, dataset.queries[["query_id", "text"]]


def write_variants(path: Path, rewrites: dict[str, list]) -> Path:
    path.write_text("".join(json.dumps({"query_id": q, "variants": v}) + "\n" for q, v in rewrites.items()))
    return path


# ------------------------------------------------------------------------------ rewrites, fused
REWRITES = {
    "qa-001": ["daily allowance for a business trip to Lisbon", "per diem rate Portugal"],
    "qa-004": ["lost receipt taxi expense claim"],
    "qb-008": ["password policy rules", "how long must a password be", "password length requirement"],
}
TWO_BM25 = {
    "chunking": {"strategy": "recursive", "size": 1000, "overlap": 200},
    "retrievers": {"bm25": {}, "loose": {"type": "bm25", "k1": 0.9, "b": 0.4}},
    "fusion": {"method": "rrf", "k": 60, "weights": {"bm25": 1.0, "loose": 0.5}},
    "depth": 15,
    "top_k": 100,  # longer than any fused list: nothing is cut, so the per-text runs are complete
}


@pytest.mark.parametrize(
    "fusion, include_original",
    [({"method": "rrf", "k": 60}, True), ({"method": "rsf", "weights": {"original": 2.0}}, True),
     ({"method": "dbsf"}, False)],
)  # fmt: skip
def test_planned_run_equals_fusing_each_texts_run_with_abcompare_fuse(tmp_path, fusion, include_original):
    """Each text (the original, then its variants) retrieved alone by the same variant, its runs fused by
    stable key with the public abcompare.fuse: the planned variant gives that list, key for key."""
    corpus, queries = hr_docs()
    asked = queries[queries["query_id"].isin([*REWRITES, "qa-002"])].reset_index(drop=True)
    file = write_variants(tmp_path / "variants.jsonl", REWRITES)
    planning = {"variants": str(file), "include_original": include_original, "fusion": fusion}
    planned = VariantSettings.model_validate({**TWO_BM25, "query_planning": planning})
    plain = VariantSettings.model_validate(TWO_BM25)
    cache = RetrievalCache()
    got = run_variant(planned, corpus, asked, cache_dir=tmp_path, cache=cache)
    weights = fusion.get("weights", {})
    for query_id, text in zip(asked["query_id"], asked["text"], strict=True):
        texts = ([text] if include_original or query_id not in REWRITES else []) + REWRITES.get(query_id, [])
        runs = [
            run_variant(plain, corpus, pd.DataFrame({"query_id": [query_id], "text": [t]}),
                        cache_dir=tmp_path, cache=cache)[query_id]
            for t in texts
        ]  # fmt: skip
        roles = (["original"] if texts[0] == text else ["variants"]) + ["variants"] * (len(texts) - 1)
        if len(runs) == 1:  # a question without variants: its original query alone, unfused
            expected = runs[0]
        else:
            expected = abcompare.fuse(
                runs,
                method=fusion["method"],
                k=fusion.get("k", 60),
                weights=[weights.get(r, 1.0) for r in roles],
            )
        assert [h.id for h in got[query_id]] == [h.id for h in expected[:100]]
        assert [h.score for h in got[query_id]] == pytest.approx([h.score for h in expected[:100]])
    assert len(got["qa-001"]) > len(
        run_variant(plain, corpus, asked, cache_dir=tmp_path, cache=cache)["qa-001"]
    )


def test_the_original_alone_for_a_question_the_file_lacks_even_without_include_original(tmp_path):
    corpus, queries = hr_docs()
    asked = queries[queries["query_id"].isin(["qa-001", "qa-002"])].reset_index(drop=True)
    file = write_variants(tmp_path / "variants.jsonl", {"qa-001": ["Lisbon daily allowance"]})
    bm25 = {"chunking": {"strategy": "none"}, "retrievers": {"bm25": {}}, "top_k": 10}
    planned = VariantSettings.model_validate(
        {**bm25, "query_planning": {"variants": str(file), "include_original": False}}
    )
    plain = VariantSettings.model_validate(bm25)
    got = run_variant(planned, corpus, asked, cache_dir=tmp_path, cache=RetrievalCache())
    alone = run_variant(plain, corpus, asked, cache_dir=tmp_path, cache=RetrievalCache())
    assert [h.id for h in got["qa-002"]] == [h.id for h in alone["qa-002"]]  # no variants: the original
    rewrite = pd.DataFrame({"query_id": ["qa-001"], "text": ["Lisbon daily allowance"]})
    only_rewrite = run_variant(plain, corpus, rewrite, cache_dir=tmp_path, cache=RetrievalCache())
    assert [h.id for h in got["qa-001"]] == [h.id for h in only_rewrite["qa-001"]]  # the variant alone


# ------------------------------------------------------------------------------ RM3, by hand
# Four texts, analysed without stemming or stopwords (terms as written):
#   d0 "apple banana apple fig"  (|d| = 4)   d1 "apple cherry" (2)
#   d2 "banana cherry date"      (3)         d3 "date elder"   (2)      avgdl = 11/4 = 2.75
# Lucene BM25 with k1 = 1, b = 0.5: idf = ln(1 + (N - df + .5)/(df + .5)); apple, banana, cherry and date
# are in 2 texts each: idf = ln(1 + 2.5/2.5) = ln 2 = 0.693147. tf part = tf / (tf + k1 (.5 + .5 |d|/2.75)):
#   length norms: d0 .5 + .5 * 4/2.75 = 1.227273; d1 .5 + .5 * 2/2.75 = 0.863636; d2 1.045455
# First pass for "apple": d0 = ln2 * 2/(2 + 1.227273) = 0.429556, d1 = ln2 * 1/1.863636 = 0.371933.
# RM3 with fb_docs 2, fb_terms 2, original_weight 0.5 (no df cut: fb_max_df 1):
#   d0's vector {apple 2, banana 1, fig 1} pruned to 2 terms: {apple 2, banana 1} (banana < fig by name),
#   norm 3; d1's {apple 1, cherry 1}, norm 2.
#   rm(apple) = 2/3 * 0.429556 + 1/2 * 0.371933 = 0.472337; rm(banana) = 1/3 * 0.429556 = 0.143185;
#   rm(cherry) = 1/2 * 0.371933 = 0.185966; pruned to 2 terms {apple, cherry}, L1 (/ 0.658303): apple
#   0.717507, cherry 0.282493. Interpolated with q = {apple: 1}: apple .5 + .5 * 0.717507 = 0.858753,
#   cherry .5 * 0.282493 = 0.141247.
# Second pass: BM25(cherry, d1) = ln2 / 1.863636 = 0.371933; BM25(cherry, d2) = ln2 / 2.045455 = 0.338872.
#   d0 = 0.858753 * 0.429556 = 0.368883; d1 = (0.858753 + 0.141247) * 0.371933 = 0.371933;
#   d2 = 0.141247 * 0.338872 = 0.047865; d3 = 0. The feedback puts d1 above d0 and finds d2.
# (bm25s keeps its scores in float32: equal to 1e-6.)
TEXTS = ["apple banana apple fig", "apple cherry", "banana cherry date", "date elder"]
PLAIN = BM25Settings(k1=1.0, b=0.5, stemmer=None, stopwords=None)


def rm3(**settings) -> QueryPlanningSettings:
    return QueryPlanningSettings(
        expansion="rm3", **{"fb_docs": 2, "fb_terms": 2, "fb_max_df": 1.0, **settings}
    )


def test_rm3_weights_and_ranking_match_the_hand_computation():
    index = BM25Index.build(TEXTS, PLAIN)
    (first_rows, first_scores), = index.search(["apple"], 2)  # fmt: skip
    assert list(first_rows) == [0, 1]
    assert list(first_scores) == pytest.approx([0.429556, 0.371933], abs=1e-6)
    weights = rm3_weights(index, ["apple"], first_rows, first_scores, rm3())
    assert weights == pytest.approx({"apple": 0.858753, "cherry": 0.141247}, abs=1e-6)
    ((rows, scores),) = rm3_ranking(index, ["apple"], 10, rm3())
    assert list(rows) == [1, 0, 2]
    assert list(scores) == pytest.approx([0.371933, 0.368883, 0.047865], abs=1e-6)


def test_rm3_leaves_out_terms_in_too_many_texts():
    """fb_max_df 0.4: apple, banana, cherry and date are in 2 of the 4 texts (50%) and are no feedback
    terms; fig (1 text, 25%) is. d0's vector is {fig 1} (norm 1), d1 has no term left and is skipped:
    rm = {fig: 1}. With original_weight 0.3 the query is {apple: 0.3, fig: 0.7}.
    BM25(fig, d0) = ln(1 + 3.5/1.5) / (1 + 1.227273) = 1.203973 / 2.227273 = 0.540559, so
    d0 = 0.3 * 0.429556 + 0.7 * 0.540559 = 0.507258 and d1 = 0.3 * 0.371933 = 0.111580."""
    index = BM25Index.build(TEXTS, PLAIN)
    settings = rm3(fb_max_df=0.4, original_weight=0.3)
    weights = rm3_weights(index, ["apple"], [0, 1], [0.429556, 0.371933], settings)
    assert weights == pytest.approx({"apple": 0.3, "fig": 0.7})
    ((rows, scores),) = rm3_ranking(index, ["apple"], 10, settings)
    assert list(rows) == [0, 1]
    assert list(scores) == pytest.approx([0.507258, 0.111580], abs=1e-6)


def test_rm3_analyses_as_the_bm25_retriever_does():
    """The query and the feedback terms go through the index's own stemmer and stopwords: 'apples' is
    'appl', 'the' is no term."""
    index = BM25Index.build(TEXTS, BM25Settings(k1=1.0, b=0.5))
    assert index.analyse(["the apples"]) == [["appl"]]
    ((rows, _),) = rm3_ranking(index, ["the apples"], 10, rm3())
    assert list(rows) == [1, 0, 2]  # as by hand: stemming maps every term to itself or its stem here


def test_rm3_in_a_variant_changes_only_its_bm25_retrievers(tmp_path):
    corpus = pd.DataFrame({"doc_id": [f"d{i}" for i in range(4)], "title": [""] * 4, "text": TEXTS})
    queries = pd.DataFrame({"query_id": ["q"], "text": ["apple"]})
    data = {"chunking": {"strategy": "none"}, "retrievers": {"bm25": {"k1": 1.0, "b": 0.5, "stemmer": None,
            "stopwords": None}}, "query_planning": {"expansion": "rm3", "fb_docs": 2, "fb_terms": 2,
            "fb_max_df": 1.0}}  # fmt: skip
    hits = run_variant(VariantSettings.model_validate(data), corpus, queries, cache_dir=tmp_path)["q"]
    # indexed text is title + "\n" + text: with an empty title the terms are those of the hand case
    assert [h.document_id for h in hits] == ["d1", "d0", "d2"]
    assert [h.score for h in hits] == pytest.approx([0.371933, 0.368883, 0.047865], abs=1e-6)


def test_rm3_needs_a_bm25_retriever():
    with pytest.raises(ValidationError, match="rm3 expands the queries of BM25 retrievers"):
        VariantSettings.model_validate({"retrievers": {"dense": {}}, "query_planning": {"expansion": "rm3"}})
    with pytest.raises(ValidationError, match="needs 'variants'"):
        VariantSettings.model_validate({"retrievers": {"bm25": {}}, "query_planning": {}})


# ------------------------------------------------------------------------------ the file's bad lines
@pytest.mark.parametrize(
    "lines, line, message",
    [
        (['{"query_id": "a", "variants": ["x"]}', '{"query_id": "b", "variants": ["ok", ""]}'], 2,
         "query 'b': variant 2 is empty"),
        (['{"query_id": "a", "variants": ["  "]}'], 1, "query 'a': variant 1 is empty"),
        (['', '{"query_id": "a", "variants": ["x", 3]}'], 2, "query 'a': variant 2 is not a string (3)"),
        (['{"query_id": "a", "variants": "x"}'], 1, "'variants' must be a list"),
        (['{"variants": ["x"]}'], 1, "the line has no query_id"),
        (['{"query_id": "a", "variants": ["x"]}', '{"query_id": "a", "variants": ["y"]}'], 2,
         "query 'a' is listed twice (first on line 1)"),
        (['{"query_id": "a", "variants": ["x"]', ], 1, "not JSON"),
        (['["a", ["x"]]'], 1, "expected a JSON object"),
    ],
)  # fmt: skip
def test_a_bad_line_is_an_error_at_its_file_and_line(tmp_path, lines, line, message):
    path = tmp_path / "variants.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ConfigError) as caught:
        read_variants_file(path)
    assert caught.value.file == str(path.resolve()) and caught.value.line == line
    assert message in caught.value.message


def test_ids_are_read_by_the_id_rule_and_empty_lists_allowed(tmp_path):
    path = tmp_path / "variants.jsonl"
    path.write_text('{"query_id": 7, "variants": ["x", "y"]}\n\n{"query_id": " b ", "variants": []}\n')
    file = read_variants_file(path)
    assert file.rewrites == {"7": ("x", "y"), "b": ()}
    assert file.lines == {"7": 1, "b": 3}
