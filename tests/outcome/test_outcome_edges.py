"""Verdict lines at the edges: a treatment whose run is a byte copy of the control's has no change, so the
lines say there is none to size or flip (before: "judging 0 of them relevant could flip the verdict" over
an unjudged range of [0, 0], and "to detect the observed change (0) ... about 2 queries")."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd
from support.cli import REPO

from abcompare.config import load_config
from abcompare.outcome.sentences import robustness_sentence, verdict_notes
from abcompare.runner import run_comparison
from abcompare.stats.power import queries_for_effect, queries_needed

PRODUCTION = REPO / "configs" / "runs" / "hr_docs_production.trec"


def test_identical_runs_have_no_change_to_size_or_flip(tmp_path: Path) -> None:
    copy = tmp_path / "copy.trec"
    shutil.copyfile(PRODUCTION, copy)
    path = tmp_path / "same.yaml"
    path.write_text(
        f"name: same\ndataset: {{name: hr-docs, level: document}}\ncontrol:\n  run: {{path: {PRODUCTION}}}\n"
        f"treatments:\n  copy:\n    run: {{path: {copy}}}\n"
        "evaluation: {cutoffs: [10], convention: trec}\nsignificance: {n_resamples: 1000}\n"
        "tracking: {enabled: false}\n"
    )
    result = run_comparison(load_config(path), config_path=path)
    assert result.robustness is not None and int(result.robustness["unjudged_hits"].iloc[0]) > 0
    notes = " ".join(verdict_notes(result.comparison, result.robustness, result.queries_needed)["copy"])
    assert "could flip" not in notes and "about 2 queries" not in notes
    assert "no judgment of them can move" in notes
    assert "there is no change to size" in notes


def test_zero_differences_need_infinitely_many_queries_to_detect() -> None:
    """No change (every per-query difference 0, so sd 0 too) is never detected: infinite, not 0 or 2."""
    assert queries_for_effect(0.0, 0.0) == np.inf
    assert queries_needed(np.zeros(30)).n == np.inf


def test_a_point_range_is_said_to_leave_the_delta_where_it_is() -> None:
    row = pd.Series(
        {"metric": "ndcg@10", "unjudged_hits": 12, "unjudged_min": 0.0, "unjudged_max": 0.0, "top_grade": 1.0,
         "relevant_only": False, "holds": True, "boundary": 0.0, "flip_judgments": None, "flips_to": None}
    )  # fmt: skip
    assert "no judgment of them can move the ndcg@10 delta (it stays +0.000)" in robustness_sentence(row)
