"""The experiment config: pydantic sections, YAML loading with located errors, ``--set``, sweeps.

``models`` holds the sections of what is compared and the schema (``runtime`` those of how it runs and
where it is recorded, ``base`` what every section shares), ``loading`` reads a file (YAML, ``--set``,
merge, paths, located errors), ``yaml_reader`` bounds what YAML may expand to, ``sweep`` expands a grid
into treatments. Import what you need from here: this face is the config's public API."""

from abcompare.config.loading import apply_set_option, changed_settings, deep_merge, load_config
from abcompare.config.models import (
    CollectionSettings,
    DatasetSettings,
    EfficiencySettings,
    EvaluationSettings,
    ExecutionSettings,
    ExperimentConfig,
    SignificanceSettings,
    TrackingSettings,
    config_schema,
)

__all__ = [
    "CollectionSettings",
    "DatasetSettings",
    "EvaluationSettings",
    "EfficiencySettings",
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
