"""evaluation.primary_metric and the significance settings of the verdict: defaults and located errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.configs import MINIMAL

from abcompare.config import load_config
from abcompare.core.errors import ConfigError

REPO = Path(__file__).resolve().parents[2]


def config_file(tmp_path: Path, evaluation: str = "", significance: str = "") -> Path:
    path = tmp_path / "x.yaml"
    text = MINIMAL
    if evaluation:
        text += "evaluation:\n" + evaluation
    if significance:
        text += "significance:\n" + significance
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("evaluation", "expected"),
    [
        ("", "ndcg@10"),
        ("  cutoffs: [1, 5, 20]\n", "ndcg@5"),
        ("  cutoffs: [3, 17]\n", "ndcg@3"),
        ("  metrics: [recall, mrr]\n  cutoffs: [1, 10, 100]\n", "recall@10"),
        ("  primary_metric: MRR@5\n  cutoffs: [1, 5]\n", "mrr@5"),
        ("  primary_metric: recall_at_10\n", "recall@10"),
    ],
)
def test_primary_metric_default_and_canonical_name(tmp_path: Path, evaluation: str, expected: str) -> None:
    config = load_config(config_file(tmp_path, evaluation))
    assert config.evaluation.primary_metric == expected


def test_a_primary_metric_that_is_not_computed_is_a_located_error(tmp_path: Path) -> None:
    path = config_file(tmp_path, "  cutoffs: [1, 5]\n  primary_metric: ndcg@10\n")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    error = info.value
    assert (error.file, error.line, error.field) == (str(path), 13, "evaluation.primary_metric")
    assert "add 10 to evaluation.cutoffs" in str(error)
    with pytest.raises(ConfigError, match="not a metric name"):
        load_config(config_file(tmp_path, "  primary_metric: ndcg\n"))


def test_a_set_option_that_drops_the_primary_metric_cutoff_is_caught(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="primary metric 'ndcg@10' is not computed"):
        load_config(REPO / "configs" / "rrf_vs_dbsf.yaml", ["evaluation.cutoffs=[1, 5]"])


def test_maxt_needs_the_permutation_test_and_min_effect_is_positive(tmp_path: Path) -> None:
    path = config_file(tmp_path, significance="  primary: t\n  correction: maxt\n")
    with pytest.raises(ConfigError, match="maxt adjusts the permutation test") as info:
        load_config(path)
    assert (info.value.line, info.value.field) == (13, "significance.correction")
    config = load_config(config_file(tmp_path, significance="  correction: maxt\n  min_effect: 0.01\n"))
    assert (config.significance.correction, config.significance.min_effect) == ("maxt", 0.01)
    with pytest.raises(ConfigError, match="significance.min_effect"):
        load_config(config_file(tmp_path, significance="  min_effect: 0\n"))
