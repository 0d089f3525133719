"""MLflow logging: one parent run per comparison, one child run per variant; consumes tables only.

Keys with ``@`` (``ndcg@10``) become ``ndcg_at_10`` here, at the MLflow boundary. Every run this module
opens is closed: FINISHED on success, FAILED on an error, KILLED on Ctrl-C.
"""

from __future__ import annotations

import json
import logging
import math
import os
import re
import tempfile
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pandas as pd

from abcompare.errors import TrackingError

DEFAULT_DB = "mlflow.db"
DEFAULT_ARTIFACTS = "mlruns"
_PARAM_VALUE_LIMIT = 6000


def mlflow_key(name: str) -> str:
    """An MLflow-safe metric key: ``ndcg@10`` -> ``ndcg_at_10``; other odd characters -> ``_``."""
    name = name.replace("@", "_at_")
    return re.sub(r"[^0-9A-Za-z_\-. /]", "_", name)


def resolve_tracking_uri(uri: str | None) -> str:
    """The URI to use: the configured one, else ``$MLFLOW_TRACKING_URI``, else ``./mlflow.db`` (SQLite)."""
    uri = uri or os.environ.get("MLFLOW_TRACKING_URI")
    if uri:
        return uri
    return f"sqlite:///{(Path.cwd() / DEFAULT_DB).as_posix()}"


def default_artifact_location(uri: str) -> str | None:
    """Artifacts beside a local SQLite store go to ``./mlruns``; a server decides for itself."""
    if uri.startswith("sqlite:"):
        return (Path.cwd() / DEFAULT_ARTIFACTS).resolve().as_uri()
    return None


def check_reachable(uri: str, timeout: float = 5.0) -> None:
    """Fail within seconds, before any expensive work, when the tracking store cannot be used."""
    if uri.startswith(("http://", "https://")):
        url = uri.rstrip("/") + "/health"
        try:
            with urllib.request.urlopen(url, timeout=timeout) as response:  # noqa: S310 - user's own URI
                if response.status >= 400:
                    raise TrackingError(
                        f"MLflow server answered HTTP {response.status}", field="tracking.uri"
                    )
        except (urllib.error.URLError, TimeoutError, ConnectionError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise TrackingError(
                f"cannot reach the MLflow tracking server at {uri}: {reason}",
                field="tracking.uri",
                hint="start it (mlflow server ...) or leave tracking.uri empty for the local SQLite store",
            ) from None
    elif uri.startswith("sqlite:///"):
        folder = Path(uri[len("sqlite:///") :]).parent
        if not folder.is_dir() or not os.access(folder, os.W_OK):
            raise TrackingError(f"cannot write the SQLite tracking store in {folder}", field="tracking.uri")


def flatten(mapping: Mapping[str, Any], prefix: str = "") -> dict[str, str]:
    """Nested settings as ``a.b.c -> value`` strings, for MLflow params."""
    flat: dict[str, str] = {}
    for key, value in mapping.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            flat.update(flatten(value, f"{name}."))
        else:
            text = json.dumps(value, default=str) if not isinstance(value, str) else value
            flat[name] = text[:_PARAM_VALUE_LIMIT]
    return flat


def _dataset_source(location: str) -> Any:
    """A local-path dataset source, named explicitly (MLflow registers that class twice and warns when
    left to guess)."""
    from mlflow.data.dataset_source_registry import get_registered_sources

    for source_class in get_registered_sources():
        if source_class.__name__ == "LocalArtifactDatasetSource":
            return source_class(location)
    return location


class Tracker:
    """A thin wrapper over ``MlflowClient`` for one comparison; create with :func:`open_tracker`."""

    def __init__(self, client: Any, experiment_id: str, uri: str) -> None:
        self.client = client
        self.experiment_id = experiment_id
        self.uri = uri
        self._open: list[str] = []

    # ---------------------------------------------------------------- runs
    def start_run(
        self, name: str, tags: Mapping[str, str], parent_id: str | None = None, description: str | None = None
    ) -> str:
        """Create a run (a child when ``parent_id`` is given) and remember it until it is ended."""
        all_tags = dict(tags)
        if parent_id:
            all_tags["mlflow.parentRunId"] = parent_id
        if description:
            all_tags["mlflow.note.content"] = description
        run = self.client.create_run(self.experiment_id, run_name=name, tags=all_tags)
        self._open.append(run.info.run_id)
        return run.info.run_id

    def end_run(self, run_id: str, status: str = "FINISHED") -> None:
        self.client.set_terminated(run_id, status=status)
        if run_id in self._open:
            self._open.remove(run_id)

    def end_all(self, status: str) -> None:
        """Close every run still open (children first) with ``status``; never raises."""
        for run_id in reversed(list(self._open)):
            try:
                self.end_run(run_id, status)
            except Exception:  # noqa: BLE001 - best effort while already failing
                self._open.remove(run_id)

    # ---------------------------------------------------------------- logging
    def log_params(self, run_id: str, params: Mapping[str, str]) -> None:
        from mlflow.entities import Param

        items = [Param(k, str(v)) for k, v in params.items()]
        for start in range(0, len(items), 100):
            self.client.log_batch(run_id, params=items[start : start + 100])

    def log_metrics(self, run_id: str, metrics: Mapping[str, float]) -> None:
        from mlflow.entities import Metric

        items = [
            Metric(mlflow_key(k), float(v), 0, 0)
            for k, v in metrics.items()
            if v is not None and not (isinstance(v, float) and math.isnan(v))
        ]
        for start in range(0, len(items), 1000):
            self.client.log_batch(run_id, metrics=items[start : start + 1000])

    def set_tags(self, run_id: str, tags: Mapping[str, str]) -> None:
        from mlflow.entities import RunTag

        self.client.log_batch(run_id, tags=[RunTag(k, str(v)[:5000]) for k, v in tags.items()])

    def log_table(self, run_id: str, frame: pd.DataFrame, name: str) -> None:
        """A table as Parquet (for code) and as MLflow's JSON table view (for the UI)."""
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / f"{name}.parquet"
            frame.to_parquet(path)
            self.client.log_artifact(run_id, str(path), artifact_path="tables")
        self.client.log_table(run_id, frame.reset_index(), artifact_file=f"tables/{name}.json")

    def log_file(self, run_id: str, path: Path, artifact_path: str | None = None) -> None:
        self.client.log_artifact(run_id, str(path), artifact_path=artifact_path)

    def log_text(self, run_id: str, text: str, artifact_file: str) -> None:
        self.client.log_text(run_id, text, artifact_file)

    def log_dict(self, run_id: str, data: Mapping[str, Any], artifact_file: str) -> None:
        self.client.log_dict(run_id, dict(data), artifact_file)

    def log_dataset(self, run_id: str, frame: pd.DataFrame, name: str, source: str, digest: str) -> None:
        """The evaluated query set as an MLflow dataset input (shown in the UI's Datasets column)."""
        import mlflow
        from mlflow.entities import DatasetInput, InputTag

        dataset = mlflow.data.from_pandas(frame, source=_dataset_source(source), name=name, digest=digest)
        tag = InputTag(key="mlflow.data.context", value="evaluation")
        self.client.log_inputs(run_id, datasets=[DatasetInput(dataset._to_mlflow_entity(), tags=[tag])])

    def run_url_hint(self) -> str:
        """How to look at the runs: the ``mlflow ui`` command for a local store, else the server's URL."""
        if self.uri.startswith("sqlite:///"):
            path = Path(self.uri[len("sqlite:///") :])
            if path.parent == Path.cwd():
                return f"mlflow ui --backend-store-uri sqlite:///{path.name}"
            return f"mlflow ui --backend-store-uri {self.uri}"
        return f"open {self.uri}"


def open_tracker(uri: str | None, experiment: str, artifact_location: str | None = None) -> Tracker:
    """Connect to the store (checking it first) and get or create the experiment."""
    os.environ.setdefault("MLFLOW_SUPPRESS_PRINTING_URL_TO_STDOUT", "true")
    os.environ.setdefault("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "2")
    os.environ.setdefault("MLFLOW_HTTP_REQUEST_TIMEOUT", "30")
    resolved = resolve_tracking_uri(uri)
    check_reachable(resolved)
    from mlflow import MlflowClient
    from mlflow.exceptions import MlflowException

    # MLflow's own INFO lines (database migrations, ...) are noise on our console; set after its import,
    # which configures its logger
    logging.getLogger("mlflow").setLevel(logging.WARNING)
    logging.getLogger("alembic").setLevel(logging.WARNING)
    try:
        client = MlflowClient(tracking_uri=resolved)
        found = client.get_experiment_by_name(experiment)
        if found is None:
            location = artifact_location or default_artifact_location(resolved)
            experiment_id = client.create_experiment(experiment, artifact_location=location)
        elif found.lifecycle_stage == "deleted":
            raise TrackingError(
                f"experiment {experiment!r} is deleted in {resolved}",
                field="tracking.experiment",
                hint="restore it in the MLflow UI or choose another experiment name",
            )
        else:
            experiment_id = found.experiment_id
    except MlflowException as exc:
        raise TrackingError(
            f"cannot use the MLflow store {resolved}: {exc.message}", field="tracking.uri"
        ) from None
    return Tracker(client, experiment_id, resolved)


@contextmanager
def closing_runs(tracker: Tracker | None) -> Iterator[None]:
    """Whatever happens inside, no run is left RUNNING: errors mark FAILED, Ctrl-C marks KILLED."""
    try:
        yield
    except KeyboardInterrupt:
        if tracker is not None:
            tracker.end_all("KILLED")
        raise
    except BaseException:
        if tracker is not None:
            tracker.end_all("FAILED")
        raise
