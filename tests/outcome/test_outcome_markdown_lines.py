"""``report --format markdown`` carries every line the console prints under a verdict: the unjudged hits,
the queries needed and the cost line (each a list item under its verdict, in the console's order)."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from abcompare.outcome.markdown import summary_markdown
from abcompare.outcome.sentences import cost_sentence
from abcompare.outcome.verdicts import verdict_lines
from abcompare.outcome.view import ComparisonView
from abcompare.stats.comparison import paired_test
from abcompare.stats.cost import cost_table

IDS = pd.Index([f"q{i}" for i in range(30)], name="query_id")


def frame(values: np.ndarray) -> pd.DataFrame:
    return pd.DataFrame({"ndcg@10": values}, index=IDS)


def test_the_markdown_summary_has_the_console_s_lines_under_each_verdict() -> None:
    rng = np.random.default_rng(3)
    control = rng.uniform(0.2, 0.8, IDS.size)
    tested = paired_test(frame(control), {"same": frame(control + rng.normal(0, 0.05, IDS.size))},
                              n_resamples=200)  # fmt: skip
    table = tested.table
    notes = {"same": ["Unjudged hits: a line the robustness table gives.", "To detect the observed change."]}
    efficiency = {
        name: {"efficiency.index_bytes": 1e6, "efficiency.model_bytes": 0.0} for name in ("control", "same")
    }
    cost = cost_table(efficiency, {"control": np.full((3, 5), 4e-3), "same": np.full((3, 5), 4e-3)})
    view = ComparisonView(
        name="c", description="", dataset="toy", n_queries=IDS.size, level="chunk", convention="trec",
        comparison=table, settings=tested.settings, per_query={}, queries=pd.DataFrame(), notes=notes,
        cost=cost,
    )  # fmt: skip
    text = re.sub(r"\\(.)", r"\1", summary_markdown(view))  # as it renders
    console = [
        line.text for line in verdict_lines(tested, None, None, None, notes, cost) if line.kind != "verdict"
    ]
    assert console == [*notes["same"], cost_sentence(cost, "same")]  # what the console prints under it
    assert "\n".join(f"- {line}" for line in console) in text
