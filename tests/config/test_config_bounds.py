"""Every number in the config has a sane bound, and every input that multiplies work has one, named in
``abcompare.core.limits`` (the values below are written out from the issue and the README, not read from
it): beyond it, a located error (exit 2) before the work. Before: a non-inferiority margin of 1e308
overflowed in numpy and made the gate a no-op; 100,000 rewrites of one query ran out of memory."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from support.cli import REPO, error_lines, invoke_cli

from abcompare.config import load_config
from abcompare.core.errors import ConfigError, DataError
from abcompare.data.runs import read_run, returned_run

SHIPPED = REPO / "configs" / "rrf_vs_dbsf.yaml"
REWRITES = REPO / "configs" / "query_variants" / "hr_docs.jsonl"


@pytest.mark.parametrize(
    "setting",
    [
        "significance.non_inferiority_margin=1e308",
        "significance.non_inferiority_margin=1",  # the metric's whole range: the gate could never fail
        "significance.min_effect=1.5",  # metrics lie in [0, 1]
        "execution.num_cpus=100000000",
        "execution.num_gpus_per_encoder=1e9",
        "execution.encoders=100000000",
        "execution.retries=1000000000",
    ],
)
def test_a_number_past_its_bound_is_refused_at_its_key(setting: str) -> None:
    key = setting.partition("=")[0]
    extra = ["execution.backend=ray"] if key.startswith("execution.") else []
    with pytest.raises(ConfigError) as info:
        load_config(SHIPPED, [*extra, setting])
    assert info.value.field == key


def test_a_margin_within_the_metric_s_range_is_accepted() -> None:
    config = load_config(SHIPPED, ["significance.non_inferiority_margin=0.5", "significance.min_effect=1"])
    assert config.significance.non_inferiority_margin == 0.5


def test_the_margin_of_the_issue_is_one_error_line_exit_2(tmp_path: Path, embedding_cache) -> None:
    args = ["validate", str(SHIPPED), "--set", "significance.non_inferiority_margin=1e308"]
    result = invoke_cli(args, tmp_path, embedding_cache)
    assert result.returncode == 2
    (line,) = error_lines(result.stderr)
    assert "significance.non_inferiority_margin" in line and "overflow" not in result.stderr


def test_too_many_rewrites_of_one_query_are_refused_at_their_line(tmp_path: Path) -> None:
    rewrites = tmp_path / "rewrites.jsonl"
    many = json.dumps({"query_id": "qa-002", "variants": [f"rewrite {i}" for i in range(101)]})
    rewrites.write_text(REWRITES.read_text().splitlines()[0] + "\n" + many + "\n")
    config = tmp_path / "planned.yaml"
    control = {"retrievers": {"bm25": {}}}
    treatments = {"planned": {"query_planning": {"variants": str(rewrites)}}}
    config.write_text(
        yaml.safe_dump(
            {"name": "p", "dataset": {"name": "hr-docs"}, "control": control, "treatments": treatments}
        )
    )
    with pytest.raises(ConfigError) as info:
        load_config(config)
    assert (info.value.file, info.value.line) == (str(rewrites), 2)
    assert "101 rewrites" in info.value.message and "at most 100" in info.value.message
    rewrites.write_text(
        REWRITES.read_text().splitlines()[0]
        + "\n"
        + many.replace('"rewrite 100", ', "").replace(', "rewrite 100"', "")
        + "\n"
    )
    load_config(config)  # 100 rewrites: the bound itself is allowed


def test_a_run_with_too_many_hits_for_one_query_is_refused_naming_the_file_and_query(tmp_path: Path) -> None:
    path = tmp_path / "deep.trec"
    path.write_text(
        "".join(f"q1 Q0 d{i} {i + 1} {-i} deep\n" for i in range(10_001)) + "q2 Q0 d1 1 1.0 deep\n"
    )
    with pytest.raises(DataError) as info:
        read_run(path)
    assert info.value.file == str(path) and "'q1' has 10,001 hits" in info.value.message
    path.write_text("".join(f"q1 Q0 d{i} {i + 1} {-i} deep\n" for i in range(10_000)))
    assert len(read_run(path)) == 10_000
    with pytest.raises(DataError, match="10,001 hits"):
        returned_run({"q1": [{"id": f"d{i}"} for i in range(10_001)]})


def test_too_many_collections_are_refused_at_datasets(tmp_path: Path) -> None:
    config = tmp_path / "many.yaml"
    entries = [{"name": f"c{i}", "path": str(tmp_path)} for i in range(101)]
    config.write_text(
        yaml.safe_dump(
            {
                "name": "m",
                "datasets": entries,
                "control": {"retrievers": {"bm25": {}}},
                "treatments": {"t": {"depth": 5}},
            }
        )
    )
    with pytest.raises(ConfigError) as info:
        load_config(config)
    assert info.value.field == "datasets" and "100" in info.value.message
