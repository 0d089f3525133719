"""The experiment config: pydantic sections (``models``), YAML loading with located errors and ``--set``
(``loading``), the bounded YAML reader (``yaml_reader``) and sweeps expanded into treatments (``sweep``).
Import what you need from here: this face is the config's public API."""

from abcompare.config.loading import apply_set_option, changed_settings, deep_merge, load_config
from abcompare.config.models import (
    DatasetSettings,
    EvaluationSettings,
    ExecutionSettings,
    ExperimentConfig,
    SignificanceSettings,
    TrackingSettings,
    config_schema,
)

__all__ = [
    "DatasetSettings",
    "EvaluationSettings",
    "ExecutionSettings",
    "ExperimentConfig",
    "SignificanceSettings",
    "TrackingSettings",
    "apply_set_option",
    "changed_settings",
    "config_schema",
    "deep_merge",
    "load_config",
]
