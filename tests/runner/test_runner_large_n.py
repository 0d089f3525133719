"""Statistics at large n end to end: a comparison of two TREC runs over 1,000 queries where the treatment
moves the one relevant document from rank 2 to rank 1 on every 100th query. By hand: nDCG@10 is 1/log2(3)
= 0.63093 for the control on every query and 1 for the treatment on 10 of them, so delta = 10 · (1 −
0.63093) / 1000 = 0.0036907 (10 wins, no loss: significant), below 1% of the control's mean (0.0063093)
and below a ``significance.min_effect`` of 0.01. The flag, the sentence and the gate survive MLflow and
``load_comparison`` (the 1% default's gate line is checked on tables in tests/outcome)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from abcompare.config import load_config
from abcompare.outcome.gate import failing_treatments, gated_table
from abcompare.outcome.sentences import verdict_sentence
from abcompare.runner import run_comparison
from abcompare.tracking.reader import load_comparison

N = 1000
DELTA = 10 * (1 - 1 / math.log2(3)) / N


def write_comparison(folder: Path, min_effect: float | None) -> Path:
    """Two TREC runs, qrels and queries over ``N`` queries; the config records to a SQLite store there."""
    queries, qrels, control, treatment = [], [], [], []
    for q in range(N):
        qid, relevant = f"q{q}", f"d{q}r"
        queries.append(f"{qid}\tquery {q}\n")
        qrels.append(f"{qid} 0 {relevant} 1\n")
        control.append(f"{qid} Q0 d{q}x 1 3 control\n{qid} Q0 {relevant} 2 2 control\n")
        first, second = (relevant, f"d{q}x") if q % 100 == 0 else (f"d{q}x", relevant)
        treatment.append(f"{qid} Q0 {first} 1 3 treatment\n{qid} Q0 {second} 2 2 treatment\n")
    for name, lines in (("queries.tsv", queries), ("qrels.txt", qrels), ("control.trec", control),
                        ("treatment.trec", treatment)):  # fmt: skip
        (folder / name).write_text("".join(lines))
    minimum = "" if min_effect is None else f"  min_effect: {min_effect}\n"
    config = folder / "config.yaml"
    config.write_text(
        f"""\
name: large-n
dataset:
  name: tiny-gains
  level: document
  queries: queries.tsv
  annotations: qrels.txt
control:
  run: {{path: control.trec, format: trec}}
treatments:
  treatment:
    run: {{path: treatment.trec, format: trec}}
evaluation:
  cutoffs: [10]
  convention: trec
  primary_metric: ndcg@10
significance:
  n_resamples: 1000
{minimum}efficiency:
  repeats: 0
tracking:
  uri: sqlite:///{(folder / "mlflow.db").as_posix()}
  experiment: large-n
"""
    )
    return config


def test_the_flag_sentence_and_gate_survive_mlflow(tmp_path: Path) -> None:
    config = write_comparison(tmp_path, 0.01)
    result = run_comparison(load_config(config), config_path=config)
    (comparison,) = result.collections.values()
    table = comparison.comparison
    primary = table[table["role"] == "primary"].iloc[0]
    assert primary["verdict"] == "better" and primary["delta"] == pytest.approx(DELTA, abs=1e-12)
    assert (primary["wins"], primary["losses"]) == (10, 0)
    assert primary["min_effect_used"] == 0.01 and primary["min_effect_source"] == "significance.min_effect"
    assert bool(primary["below_min_effect"]) is True
    sentence = verdict_sentence(comparison.tested, "treatment")
    assert "; significant but below the minimum effect (0.01, significance.min_effect): " in sentence
    # every row, secondary too, is read against the configured minimum
    assert table["min_effect_used"].tolist() == [0.01] * len(table)
    # the gate reads the result as --fail-on does: a gain below the configured minimum fails not-better
    assert failing_treatments(gated_table(result).table, "not-better") == ["treatment"]

    loaded = load_comparison(result.parent_run_id, tracking_uri=f"sqlite:///{tmp_path / 'mlflow.db'}")
    (view,) = loaded.view().alone.values()
    again = view.comparison[view.comparison["role"] == "primary"].iloc[0]
    for column in ("below_min_effect", "min_effect_used", "min_effect_source"):
        assert again[column] == primary[column]
    assert verdict_sentence(view.tested, "treatment") == sentence  # the stored settings read back
    assert failing_treatments(view.comparison, "not-better") == ["treatment"]
    clause = sentence[sentence.index("; significant but below") :]
    assert clause in loaded.tags["mlflow.note.content"]  # the MLflow description says it too
