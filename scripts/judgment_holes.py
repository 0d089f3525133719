"""The pooling loop on the shipped example, whose judgments are complete: make holes, then fill them back.

``holes`` plays a judgment set built from the control's own pool: it drops the fraction of judgments the
control ranks worst (the relevant documents it misses or buries), which are exactly the ones a better
treatment finds. ``fill`` plays the annotator of an ``abcompare pool`` file: it grades each pooled hit
from the complete judgments (0 where they hold none).

    python scripts/judgment_holes.py holes configs/bm25_vs_hybrid.yaml -o holes.tsv
    python scripts/judgment_holes.py fill pool.csv --from abcompare/examples/hr_docs/qrels/test.tsv

See docs/judgments.md ("Incomplete judgments") for the whole loop.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

from abcompare.config import load_config
from abcompare.data.annotations import read_annotations, write_trec_qrels
from abcompare.data.experiment import load_dataset_for_experiment
from abcompare.data.levels import apply_level
from abcompare.data.pooling import POOL_COLUMNS
from abcompare.execution.local import produce_variant_run
from abcompare.retrieval.pipeline import RetrievalCache


def make_holes(config_path: Path, fraction: float) -> pd.DataFrame:
    """The config's judgments without the ``fraction`` that its control ranks worst (missed ones first)."""
    config = load_config(config_path)
    dataset = load_dataset_for_experiment(config.dataset)
    from abcompare.core.progress import Reporter

    run = produce_variant_run(
        "control", config.control, dataset, RetrievalCache(), config.resolved_cache_dir(), Reporter()
    ).run
    run, annotations = apply_level(run, dataset.annotations, config.dataset.level, corpus=dataset.corpus)
    rank = run.set_index(["query_id", "key"])["rank"]
    missed = len(run) + 1
    annotations = annotations.assign(
        control_rank=[
            rank.get((q, k), missed) for q, k in zip(annotations["query_id"], annotations["key"], strict=True)
        ]
    )
    drop = int(round(len(annotations) * fraction))
    worst = annotations.sort_values(["control_rank", "query_id", "key"], ascending=[False, True, True]).index[
        :drop
    ]
    return annotations.drop(index=worst)[["query_id", "key", "grade"]]


def fill_pool(pool_path: Path, complete: Path, output: Path) -> int:
    """Grade every row of a pool file from complete judgments (absent -> 0); returns how many are relevant."""
    pool = pd.read_csv(pool_path, dtype={"query_id": str, "key": str}, keep_default_na=False)
    grades = read_annotations(complete).set_index(["query_id", "key"])["grade"]
    pool["grade"] = [int(grades.get((q, k), 0)) for q, k in zip(pool["query_id"], pool["key"], strict=True)]
    pool[list(POOL_COLUMNS)].to_csv(output, index=False, lineterminator="\n")
    return int((pool["grade"] > 0).sum())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    commands = parser.add_subparsers(dest="command", required=True)
    holes = commands.add_parser("holes", help="drop the judgments the control ranks worst")
    holes.add_argument("config", type=Path)
    holes.add_argument("--fraction", type=float, default=1 / 3)
    holes.add_argument("-o", "--output", type=Path, required=True)
    fill = commands.add_parser("fill", help="grade a pool file from complete judgments")
    fill.add_argument("pool", type=Path)
    fill.add_argument("--from", dest="complete", type=Path, required=True)
    fill.add_argument("-o", "--output", type=Path, default=None, help="default: overwrite the pool file")
    args = parser.parse_args(argv)
    if args.command == "holes":
        kept = make_holes(args.config, args.fraction)
        write_trec_qrels(kept, args.output)
        print(f"kept {len(kept)} judgments in {args.output}", file=sys.stderr)
    else:
        relevant = fill_pool(args.pool, args.complete, args.output or args.pool)
        print(f"graded {args.output or args.pool}: {relevant} pooled hits are relevant", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
