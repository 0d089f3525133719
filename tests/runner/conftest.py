"""Fixtures of the runner's tests: the real servers (the main job, the sweep and the embedding cache they
share are the whole suite's, in tests/conftest.py)."""

from __future__ import annotations

from support.servers import mlflow_server, mlflow_server_on_postgres, postgres  # noqa: F401 - shared fixtures
