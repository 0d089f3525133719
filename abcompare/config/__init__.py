"""The experiment config: pydantic sections (``models``), YAML loading with located errors and ``--set``
(``loading``), the bounded YAML reader (``yaml_reader``) and sweeps expanded into treatments (``sweep``)."""

from abcompare.config.loading import ExperimentConfig, config_schema, load_config

__all__ = ["ExperimentConfig", "config_schema", "load_config"]
