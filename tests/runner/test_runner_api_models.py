"""A config built in Python (not read by ``load_config``) gets the same model check before any run opens."""

from __future__ import annotations

from pathlib import Path

import pytest

from abcompare.config import ExperimentConfig
from abcompare.core.errors import ConfigError
from abcompare.runner import run_comparison


def test_a_python_config_naming_a_missing_model_fails_before_any_run(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    missing = str(tmp_path / "no-such-model")
    variant = {"retrievers": {"bm25": {}, "dense": {"model": missing}}, "fusion": {"method": "rrf"}}
    config = ExperimentConfig.model_validate(
        {
            "name": "api-model",
            "dataset": {"name": "hr-docs"},
            "control": {"retrievers": {"bm25": {}}},
            "treatments": {"hybrid": variant},
            "tracking": {"uri": f"sqlite:///{tmp_path / 'mlflow.db'}"},
        }
    )
    with pytest.raises(ConfigError) as raised:
        run_comparison(config)
    assert raised.value.field == "treatments.hybrid.retrievers.dense.model"
    assert "no-such-model" in str(raised.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # no store, no artifacts: nothing ran
