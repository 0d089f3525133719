"""``significance.non_inferiority_margin``: a finite number >= 0 in the primary metric's units, for a
primary test with a one-sided shifted form (t, permutation); anything else is an error at its line."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.configs import MINIMAL

from abcompare.config import load_config
from abcompare.core.errors import ConfigError


def config_file(tmp_path: Path, significance: str) -> Path:
    path = tmp_path / "x.yaml"
    path.write_text(MINIMAL + "significance:\n" + significance)
    return path


def test_a_margin_reaches_the_statistics_stage(tmp_path: Path) -> None:
    config = load_config(config_file(tmp_path, "  non_inferiority_margin: 0.01\n"))
    assert config.significance.testing_options()["non_inferiority_margin"] == 0.01
    assert load_config(config_file(tmp_path, "  alpha: 0.05\n")).significance.non_inferiority_margin is None


@pytest.mark.parametrize(
    ("significance", "line", "says"),
    [
        ("  non_inferiority_margin: -0.01\n", 12, "greater than or equal to 0"),
        ("  non_inferiority_margin: .nan\n", 12, "finite number"),
        ("  non_inferiority_margin: .inf\n", 12, "finite number"),
        ("  non_inferiority_margin: a lot\n", 12, "valid number"),
        ("  primary: bootstrap\n  non_inferiority_margin: 0.01\n", 13, "t and permutation only"),
        ("  non_inferiority_margin: 0.01\n  primary: wilcoxon\n", 12, "the primary test is 'wilcoxon'"),
    ],
)
def test_a_bad_margin_is_an_error_at_its_line(tmp_path: Path, significance: str, line: int, says: str):
    path = config_file(tmp_path, significance)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    error = info.value
    assert (error.file, error.line, error.field) == (str(path), line, "significance.non_inferiority_margin")
    assert says in error.message, error.message
