"""The MLflow store: which one, whether it answers, and :class:`StoreClient`, the calls for one experiment.

Keys with ``@`` (``ndcg@10``) become ``ndcg_at_10`` here, at the MLflow boundary. Every run a client
opens is closed: FINISHED on success, FAILED on an error, KILLED on Ctrl-C. A process that is killed
(SIGKILL) cannot close its runs: every run is tagged with its owner (host, PID, start time), and the next
run on the same host marks the runs of owners that no longer exist FAILED. A fresh SQLite store is
created under a file lock, so concurrent first runs never leave it half-built; a tracking server that
stops answering mid-run stops the logging, not the comparison (see ``TrackingLostError``).
"""

from __future__ import annotations

import itertools
import json
import logging
import math
import os
import time
import urllib.error
import urllib.request
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from abcompare.core.errors import AbcompareWarning, TrackingError, TrackingLostError, disk_full
from abcompare.core.limits import MAX_PARAM_VALUE_LENGTH, MAX_TAG_VALUE_LENGTH
from abcompare.core.naming import mlflow_safe_name
from abcompare.core.process_identity import current_process, is_alive
from abcompare.core.vocabulary import mlflow_key
from abcompare.tracking.layout import FAILURE_TAG, HOST_TAG, NOTE_TAG, PARENT_RUN_TAG, PID_TAG, START_TAG
from abcompare.tracking.traces import write_traces

if TYPE_CHECKING:
    from mlflow import MlflowClient

#: How long a run waits for another process that is creating the same SQLite store.
STORE_LOCK_SECONDS = 300

DEFAULT_DB = "mlflow.db"
DEFAULT_ARTIFACTS = "mlruns"


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
        check_sqlite_store(sqlite_path(uri))


def sqlite_path(uri: str) -> Path:
    """The database file of a ``sqlite:///path`` URI (query parameters dropped)."""
    return Path(uri[len("sqlite:///") :].split("?", 1)[0])


_SQLITE_HEADER = b"SQLite format 3\x00"


def check_sqlite_store(path: Path) -> None:
    """A SQLite store must be a file (or not exist yet, in a writable folder), be a SQLite database, and
    be an MLflow store or empty: checked before MLflow opens it, so a folder or a stranger's file is a
    one-line error (and is never migrated into an MLflow store)."""
    if path.is_dir():
        raise TrackingError(
            f"the SQLite tracking store {path} is a folder",
            field="tracking.uri",
            hint="point tracking.uri at a database file, e.g. sqlite:///mlflow.db",
        )
    if not path.exists():
        folder = path.parent
        if not folder.is_dir() or not os.access(folder, os.W_OK):
            raise TrackingError(f"cannot write the SQLite tracking store in {folder}", field="tracking.uri")
        return
    try:
        with path.open("rb") as handle:
            header = handle.read(len(_SQLITE_HEADER))
    except OSError as exc:
        raise TrackingError(
            f"cannot read the SQLite tracking store {path}: {exc.strerror or exc}", field="tracking.uri"
        ) from None
    if header and header != _SQLITE_HEADER:
        raise TrackingError(
            f"{path} is not a SQLite database",
            field="tracking.uri",
            hint="point tracking.uri at an MLflow SQLite store, or at a new file name",
        )
    if header and not _is_mlflow_or_empty(path):
        raise TrackingError(
            f"{path} is a SQLite database but not an MLflow tracking store",
            field="tracking.uri",
            hint="point tracking.uri at an MLflow store, or at a new file name",
        )


def _is_mlflow_or_empty(path: Path) -> bool:
    """Whether the SQLite database holds MLflow's tables, or no table at all (read-only look)."""
    import sqlite3

    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30) as connection:
            tables = {
                row[0] for row in connection.execute("select name from sqlite_master where type='table'")
            }
    except sqlite3.DatabaseError:
        return False
    return not tables or "experiments" in tables or "alembic_version" in tables


def flatten(mapping: Mapping[str, Any], prefix: str = "") -> dict[str, str]:
    """Nested settings as ``a.b.c -> value`` strings, for MLflow params."""
    flat: dict[str, str] = {}
    for key, value in mapping.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            flat.update(flatten(value, f"{name}."))
        else:
            text = json.dumps(value, default=str) if not isinstance(value, str) else value
            flat[name] = text[:MAX_PARAM_VALUE_LENGTH]
    return flat


def _dataset_source(location: str) -> Any:
    """A local-path dataset source, named explicitly (MLflow registers that class twice and warns when
    left to guess)."""
    from mlflow.data.dataset_source_registry import get_registered_sources

    for source_class in get_registered_sources():
        if source_class.__name__ == "LocalArtifactDatasetSource":
            return source_class(location)
    return location


def owner_tags() -> dict[str, str]:
    """The tags naming this process as the owner of a run (host, PID, start time)."""
    me = current_process()
    return {HOST_TAG: me.host, PID_TAG: str(me.pid), START_TAG: me.started}


UNRECORDED = "unrecorded"


def lost_error(uri: str, result: Any, payload: Mapping[str, Any]) -> TrackingLostError:
    """The error for a comparison that was computed but not recorded; ``payload`` (the ``--json`` result)
    is saved to a local file first, which the message names."""
    saved: Path | None = None
    problem = ""
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    name = mlflow_safe_name(str(payload.get("name") or "comparison"))[:60]
    target = Path.cwd() / f"abcompare-unrecorded-{name}-{stamp}.json"
    try:
        target.write_text(json.dumps(payload, indent=2, default=str), encoding="utf-8")
        saved = target
    except OSError as exc:
        problem = f"; could not save a local copy: {exc.strerror or exc}"
    where = f"; the result is saved in {saved}" if saved else problem
    return TrackingLostError(
        f"the tracking server at {uri} stopped answering while logging (the comparison is not "
        f"recorded){where}",
        result=result,
        saved=saved,
        field="tracking.uri",
        hint="restart the server and run again; exit code 3",
    )


class StoreClient:
    """A thin wrapper over ``MlflowClient`` for one comparison; create with :func:`open_tracker`.

    When an HTTP tracking server stops answering, ``lost`` is set and every later call does nothing: the
    comparison goes on, and the runner reports it as not recorded (``lost_error``).
    """

    def __init__(
        self, client: MlflowClient, experiment_id: str, uri: str, owner: Mapping[str, str] | None = None
    ) -> None:
        self.client = client
        self.experiment_id = experiment_id
        self.uri = uri
        self.lost = False
        self.owner = dict(owner) if owner is not None else owner_tags()
        self._open: list[str] = []

    def _call(self, method: Callable[..., Any], *args: Any, writing: str | None = None, **kwargs: Any) -> Any:
        """Call the MLflow client; once the server is found gone, skip (a retry loop per call would take
        minutes); a full disk is reported as such, naming ``writing`` (default: the store). A write that
        lost a race on a shared store (another run inserted the same dataset or experiment tag first) is
        tried again: the row now exists, and the store links or updates it."""
        if self.lost:
            return None
        for attempt in itertools.count():
            try:
                return method(*args, **kwargs)
            except Exception as exc:
                if attempt < 3 and _inserted_twice(exc):
                    time.sleep(0.1 * (attempt + 1))
                    continue
                full = disk_full(exc, writing or f"the MLflow store {self.uri}")
                if full is not None:
                    raise full from None
                if self._server_gone():
                    self.lost = True
                    return None
                raise

    def _server_gone(self) -> bool:
        if not self.uri.startswith(("http://", "https://")):
            return False
        try:
            check_reachable(self.uri, timeout=5.0)
        except TrackingError:
            return True
        return False

    def start_run(
        self, name: str, tags: Mapping[str, str], parent_id: str | None = None, description: str | None = None
    ) -> str:
        """Create a run (a child when ``parent_id`` is given), tagged with its owner process, and remember it
        until it is ended."""
        all_tags = {**dict(tags), **self.owner}
        if parent_id:
            all_tags[PARENT_RUN_TAG] = parent_id
        if description:
            all_tags[NOTE_TAG] = description
        run = self._call(self.client.create_run, self.experiment_id, run_name=name, tags=all_tags)
        if run is None:
            return UNRECORDED
        self._open.append(run.info.run_id)
        return run.info.run_id

    def end_run(self, run_id: str, status: str = "FINISHED") -> None:
        if run_id != UNRECORDED:
            self._call(self.client.set_terminated, run_id, status=status)
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
    def log_batch(
        self,
        run_id: str,
        metrics: Mapping[str, float] | None = None,
        params: Mapping[str, str] | None = None,
        tags: Mapping[str, str] | None = None,
    ) -> None:
        """Metrics, params and tags of one run in as few calls as MLflow's limits allow (one, usually)."""
        from mlflow.entities import Metric, Param, RunTag

        metric_items = [
            Metric(mlflow_key(k), float(v), 0, 0)
            for k, v in (metrics or {}).items()
            if v is not None and not (isinstance(v, float) and math.isnan(v))
        ]
        param_items = [Param(mlflow_key(k), str(v)) for k, v in (params or {}).items()]
        tag_items = [RunTag(k, str(v)[:MAX_TAG_VALUE_LENGTH]) for k, v in (tags or {}).items()]
        while metric_items or param_items or tag_items:
            # MLflow's log_batch limits: 1000 entities in all, at most 100 params and 100 tags
            params_now, param_items = param_items[:100], param_items[100:]
            tags_now, tag_items = tag_items[:100], tag_items[100:]
            room = 1000 - len(params_now) - len(tags_now)
            metrics_now, metric_items = metric_items[:room], metric_items[room:]
            self._call(self.client.log_batch, run_id, metrics=metrics_now, params=params_now, tags=tags_now)

    def log_artifacts(self, run_id: str, folder: Path) -> None:
        """Every file under ``folder``, at the same relative paths, in one call."""
        self._call(
            self.client.log_artifacts, run_id, str(folder), writing=f"the artifacts of run {run_id[:8]}"
        )

    def set_experiment_tags(self, tags: Mapping[str, str]) -> None:
        for key, value in tags.items():
            self._call(self.client.set_experiment_tag, self.experiment_id, key, str(value))

    def set_tags(self, run_id: str, tags: Mapping[str, str]) -> None:
        self.log_batch(run_id, tags=tags)

    def log_dataset(self, run_id: str, frame: pd.DataFrame, name: str, source: str, digest: str) -> None:
        """The evaluated query set as an MLflow dataset input (shown in the UI's Datasets column)."""
        import mlflow
        from mlflow.entities import DatasetInput, InputTag

        dataset = mlflow.data.from_pandas(frame, source=_dataset_source(source), name=name, digest=digest)
        tag = InputTag(key="mlflow.data.context", value="evaluation")
        inputs = [DatasetInput(dataset._to_mlflow_entity(), tags=[tag])]
        self._call(self.client.log_inputs, run_id, datasets=inputs)

    def log_traces(self, run_id: str, records: Sequence[Mapping[str, Any]]) -> None:
        """Traces of the run, from plain records (:func:`abcompare.tracking.traces.write_traces`)."""
        self._call(
            write_traces,
            self.uri,
            self.experiment_id,
            run_id,
            records,
            writing=f"the traces of run {run_id[:8]}",
        )


def _inserted_twice(exc: BaseException) -> bool:
    """Whether the store refused a row another writer inserted first (a unique key: PostgreSQL's
    UniqueViolation, MySQL's duplicate entry, SQLite's UNIQUE constraint), as two runs logging the same
    dataset at once can meet on a shared server."""
    text = str(exc)
    return any(
        mark in text for mark in ("UniqueViolation", "duplicate key", "Duplicate entry", "UNIQUE constraint")
    )


def ui_command(uri: str) -> tuple[str | None, str]:
    """How to look at a store: the ``mlflow ui`` command to start for a local store (``None`` for a server)
    and the base URL the UI then answers on: port 5000, or ``MLFLOW_PORT`` when set, which ``mlflow ui``
    reads as its ``--port``."""
    if uri.startswith(("http://", "https://")):
        return None, uri
    local_ui = f"http://127.0.0.1:{os.environ.get('MLFLOW_PORT') or 5000}"
    if uri.startswith("sqlite:///"):
        path = Path(uri[len("sqlite:///") :])
        if path.parent == Path.cwd():
            return f"mlflow ui --backend-store-uri sqlite:///{path.name}", local_ui
    return f"mlflow ui --backend-store-uri {uri}", local_ui


def quiet_mlflow() -> None:
    """MLflow's own output is noise on our console: its log lines (database migrations, tracebacks of errors
    we report in one line, the retries of a dying server), its run URLs, its artifact-download progress
    bars (and, in a notebook without ipywidgets, tqdm's warning when MLflow's GenAI modules import it); and a
    dying server is given up on after two retries."""
    import warnings

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="IProgress not found")
        import tqdm.auto  # noqa: F401 - imported once here, quietly; later imports do not warn again
    os.environ.setdefault("MLFLOW_SUPPRESS_PRINTING_URL_TO_STDOUT", "true")
    os.environ.setdefault("MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR", "false")
    os.environ.setdefault("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "2")
    os.environ.setdefault("MLFLOW_HTTP_REQUEST_TIMEOUT", "30")
    import mlflow  # noqa: F401 - configures its logger on import; the levels below are set after that

    logging.getLogger("mlflow").setLevel(logging.CRITICAL)
    logging.getLogger("alembic").setLevel(logging.WARNING)
    logging.getLogger("urllib3").setLevel(logging.ERROR)


def open_tracker(
    uri: str | None,
    experiment: str,
    artifact_location: str | None = None,
    *,
    owner: Mapping[str, str] | None = None,
) -> StoreClient:
    """Connect to the store (checking it first) and get or create the experiment.

    A SQLite store is created and migrated under a file lock beside it (``mlflow.db.lock``), so concurrent
    first runs in one folder wait for each other instead of racing. Runs left RUNNING by processes of this
    host that no longer exist are marked FAILED, with one warning line. ``owner`` names the process whose
    runs these are (default: this one; a writer process passes the comparison's).
    """
    resolved = resolve_tracking_uri(uri)
    check_reachable(resolved)
    quiet_mlflow()
    from mlflow import MlflowClient
    from mlflow.exceptions import MlflowException

    try:
        with _store_lock(resolved):
            client = MlflowClient(tracking_uri=resolved)
            experiment_id = _experiment_id(
                client, experiment, artifact_location or default_artifact_location(resolved)
            )
        _fail_orphaned_runs(client)
    except MlflowException as exc:
        full = disk_full(exc)
        if full is not None:
            raise full from None
        raise TrackingError(
            f"cannot use the MLflow store {resolved}: {_first_line(exc.message)}", field="tracking.uri"
        ) from None
    return StoreClient(client, experiment_id, resolved, owner)


def _first_line(text: str) -> str:
    lines = [line.strip() for line in str(text).splitlines() if line.strip()]
    return lines[0] if lines else str(text)


def _store_lock(uri: str) -> Any:
    """An exclusive lock on ``<database>.lock`` for a SQLite store (released even if the holder is killed,
    as it is an flock); nothing for other stores, which serialise themselves."""
    if not uri.startswith("sqlite:///"):
        return nullcontext()
    from filelock import FileLock, Timeout

    lock = FileLock(f"{sqlite_path(uri)}.lock", timeout=STORE_LOCK_SECONDS)

    @contextmanager
    def held() -> Iterator[None]:
        try:
            lock.acquire()
        except Timeout:
            raise TrackingError(
                f"another process has held the SQLite store's lock {lock.lock_file} for "
                f"{STORE_LOCK_SECONDS} s",
                field="tracking.uri",
                hint="wait for the other abcompare run, or check for a hung process",
            ) from None
        try:
            yield
        finally:
            lock.release()

    return held()


def _experiment_id(client: MlflowClient, experiment: str, location: str | None) -> str:
    """Get or create the experiment; another process creating it at the same moment (a server answers
    RESOURCE_ALREADY_EXISTS) is not an error: the lookup is tried again."""
    from mlflow.exceptions import MlflowException

    for attempt in range(6):
        found = client.get_experiment_by_name(experiment)
        if found is not None:
            if found.lifecycle_stage == "deleted":
                raise TrackingError(
                    f"experiment {experiment!r} is deleted in {client.tracking_uri}",
                    field="tracking.experiment",
                    hint="restore it in the MLflow UI or choose another experiment name",
                )
            return found.experiment_id
        try:
            return client.create_experiment(experiment, artifact_location=location)
        except MlflowException as exc:
            if exc.error_code != "RESOURCE_ALREADY_EXISTS" and "already exists" not in str(exc.message):
                raise
        time.sleep(0.1 * (attempt + 1))  # the other creator's transaction becomes visible
    found = client.get_experiment_by_name(experiment)
    if found is None:
        raise TrackingError(
            f"experiment {experiment!r} exists and cannot be read in {client.tracking_uri}",
            field="tracking.experiment",
        )
    return found.experiment_id


def _fail_orphaned_runs(client: MlflowClient) -> list[str]:
    """Mark FAILED the runs of this host left RUNNING by abcompare processes that no longer exist (killed
    with SIGKILL, or lost with their machine); one warning names how many and which processes."""
    from mlflow.entities import ViewType

    me = current_process()
    host = me.host.replace("'", "\\'")
    experiments = [e.experiment_id for e in _all_experiments(client, ViewType.ACTIVE_ONLY)]
    orphans: list[Any] = []
    for start in range(0, len(experiments), 100):
        orphans += [
            run
            for run in client.search_runs(
                experiments[start : start + 100],
                filter_string=f"attributes.status = 'RUNNING' and tags.`{HOST_TAG}` = '{host}'",
                max_results=1000,
            )
            if not _owner_alive(run.data.tags)
        ]
    for run in orphans:
        client.set_terminated(run.info.run_id, status="FAILED")
        client.set_tag(run.info.run_id, FAILURE_TAG, "its process ended without closing it (killed?)")
    if orphans:
        pids = sorted({run.data.tags.get(PID_TAG, "?") for run in orphans})
        warnings.warn(
            f"marked {len(orphans)} run(s) FAILED that were left RUNNING by abcompare processes that no "
            f"longer exist (PID {', '.join(pids)} on {me.host}): "
            + ", ".join(run.info.run_id[:8] for run in orphans[:10]),
            AbcompareWarning,
            stacklevel=3,
        )
    return [run.info.run_id for run in orphans]


def _all_experiments(client: MlflowClient, view_type: int) -> list[Any]:
    found: list[Any] = []
    token = None
    while True:
        page = client.search_experiments(view_type=view_type, max_results=1000, page_token=token)
        found += list(page)
        token = getattr(page, "token", None)
        if not token:
            return found


def _owner_alive(tags: Mapping[str, str]) -> bool:
    try:
        pid = int(tags.get(PID_TAG, ""))
    except ValueError:
        return True  # not a run whose owner we can know: leave it alone
    return is_alive(pid, tags.get(START_TAG, ""))
