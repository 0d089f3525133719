"""A ``judge:`` section across several collections: each collection's comparison runs the judge on its own,
and the corrected verdict pooled across them (``abcompare.judging.pooled``) reaches every place the pooled
verdict does: the console under it, ``--json``'s ``judge_pooled``, the top run's metrics and its page and
description, read back from a real SQLite store. The judge is a Python callable anyone can recompute."""

from __future__ import annotations

import io

import numpy as np
import pytest
from mlflow import MlflowClient
from rich.console import Console
from support.cli import REPO

from abcompare.config import load_config
from abcompare.outcome.console import print_report
from abcompare.outcome.json_output import result_as_json
from abcompare.runner import run_comparison
from abcompare.tracking.reader import load_comparison, logged_markdown, logged_report

pytestmark = pytest.mark.slow

CONFIG = """\
name: two-hr-judged
datasets:
  - name: hr-docs
    max_queries: 24
  - name: hr-small
    path: {example}
    max_queries: 16
control:
  retrievers:
    bm25: {{}}
treatments:
  loose:
    retrievers:
      bm25: {{k1: 0.9}}
efficiency: {{repeats: 0}}
significance: {{n_resamples: 200, seed: 0}}
cache_dir: {cache}
judge: {{provider: python, name: length, max_pairs: 30, agreement_pairs: 40, min_agreement: 0.99}}
tracking:
  uri: sqlite:///{store}
  experiment: judged-collections
  artifact_location: {artifacts}
"""


def by_length(query_text: str, hit_text: str) -> int:
    """A judge anyone can recompute: the hit's length in 300-character steps, at most 3."""
    return min(3, len(hit_text) // 300)


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory):
    folder = tmp_path_factory.mktemp("judged-collections")
    path = folder / "judged.yaml"
    path.write_text(
        CONFIG.format(example=REPO / "abcompare" / "examples" / "hr_docs", cache=folder / "cache",
                      store=folder / "mlflow.db", artifacts=(folder / "artifacts").as_uri())
    )  # fmt: skip
    result = run_comparison(load_config(path), config_path=path, judges={"length": by_length})
    return folder, result


def test_the_pooled_corrected_verdict_weighs_each_collections_own(ran) -> None:
    _, result = ran
    pooled = result.pooled_judge
    assert pooled is not None and pooled.collections == ("hr-docs", "hr-small")
    parts = [result.collections[name].judge.verdicts["loose"] for name in pooled.collections]
    verdict = pooled.verdicts["loose"]
    # equal weight per collection (significance.pooling's default), as the pooled verdict
    assert verdict.ppi.estimate == pytest.approx(np.mean([p.ppi.estimate for p in parts]))
    se = np.sqrt(sum((p.ppi.std_error / 2) ** 2 for p in parts))
    assert verdict.ppi.std_error == pytest.approx(se)
    row = result.pooled.set_index("treatment").loc["loose"]
    assert verdict.human_only == pytest.approx(row["delta"]), "people's pooled figure is the pooled verdict's"
    # the floor 0.99 is above what a length judge agrees with people: each collection refuses, so the pool
    assert all(p.refused for p in parts) and verdict.refused
    assert verdict.reason.startswith("hr-docs: ") and "; hr-small: " in verdict.reason


def test_the_console_and_json_say_it_under_the_pooled_verdict(ran) -> None:
    _, result = ran
    out = io.StringIO()
    print_report(result, Console(file=out, width=200, color_system=None))
    text = out.getvalue()
    line = next(x for x in text.splitlines() if x.startswith("ndcg@10 delta loose pooled over 2 collections"))
    assert text.index("pooled across 2 collections") < text.index(line)
    assert f"PPI-corrected {result.pooled_judge.verdicts['loose'].ppi.estimate:+.4f}" in line
    assert "refused: the pooled corrected verdict for loose does not stand: hr-docs: " in text
    block = result_as_json(result)["judge_pooled"]
    assert block["verdicts"]["loose"]["refused"] is True and block["weights"] == {
        "hr-docs": 0.5,
        "hr-small": 0.5,
    }


def test_the_top_run_logs_it_and_its_page_shows_it(ran) -> None:
    folder, result = ran
    client = MlflowClient(f"sqlite:///{folder / 'mlflow.db'}")
    top = client.get_run(result.parent_run_id)
    ppi = result.pooled_judge.verdicts["loose"].ppi
    assert top.data.metrics["judge.pooled.loose.ppi_delta"] == pytest.approx(ppi.estimate)
    assert top.data.metrics["judge.pooled.loose.refused"] == 1.0
    lines = result.pooled_judge.lines()
    loaded = load_comparison(result.parent_run_id, tracking_uri=client.tracking_uri)
    assert list(loaded.view().pooled.stage_lines) == lines, "read back as it was said"
    page, _ = logged_report(result.parent_run_id, tracking_uri=client.tracking_uri)
    assert "PPI-corrected" in page and "pooled corrected verdict for loose" in page
    markdown, _ = logged_markdown(result.parent_run_id, tracking_uri=client.tracking_uri)
    assert "PPI-corrected" in markdown
