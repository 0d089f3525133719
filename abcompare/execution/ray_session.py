"""Start or join the Ray a comparison runs on, and say in one line why it cannot.

``execution.address: null`` starts a private Ray on this machine (``ray.init(address="local")``: a bare
``ray.init()`` would join whatever cluster a stale ``ray_current_cluster`` file names). ``HOST:PORT`` or
``auto`` (``RAY_ADDRESS``, else the cluster the last ``ray start --head`` on this machine recorded) joins a
running cluster, after two quick checks so that a wrong address fails in seconds rather
than after Ray's own two-minute timeout: the port answers, and the cluster accepts our authentication
token (Ray 2.60 clusters started with a token refuse drivers without it). A Ray already running in this
process (a notebook, the tests) is used as it is and left running.
"""

from __future__ import annotations

import gc
import logging
import os
import socket
import threading
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import abcompare
from abcompare.core.errors import ExecutionError
from abcompare.core.progress import Reporter

if TYPE_CHECKING:
    from abcompare.config.models import ExecutionSettings

FIELD = "execution.address"
RAY_DATA_THREAD = "StreamingExecutor-"  # the name Ray Data 2.60 gives its executor's scheduling thread
RAY_DATA_GRACE = 60.0  # seconds Ray's stop waits for each of those threads
CONNECT_TIMEOUT = 3.0  # seconds for the TCP check of a cluster address
GCS_TIMEOUT = 10.0  # seconds for the cluster's first answer (authentication included)
TOKEN_HINT = (
    "export RAY_AUTH_MODE=token and the cluster's token as RAY_AUTH_TOKEN (or its file as "
    "RAY_AUTH_TOKEN_PATH); on the head node `ray get-auth-token` prints it (it is ~/.ray/auth_token there)"
)


class RaySession:
    """The Ray this comparison uses and what it has. :meth:`release` stops a Ray we started in the
    background, once the last task is back, while the driver still judges and logs."""

    def __init__(self, address: str, stop: Callable[[], None] | None = None) -> None:
        import ray

        self.address = address
        nodes = [node for node in ray.nodes() if node.get("Alive")]
        cpus = [node.get("Resources", {}).get("CPU", 0.0) for node in nodes]
        self.resources: dict[str, float] = dict(ray.cluster_resources())
        self.largest_node_cpus = max(1.0, max(cpus, default=1.0))
        self._stop = stop
        self._stopping: threading.Thread | None = None
        _quiet_ray()

    def release(self) -> None:
        """Nothing more will be asked of Ray: stop the one we started, in the background. The caller must
        hold no object ref by then: a ref freed while Ray stops reaches a core worker that is going away,
        and Ray ends the whole process with status 1 (seen after an encoder actor was killed). Garbage
        that still holds refs is collected here first, in the caller's thread."""
        if self._stop is not None and self._stopping is None:
            gc.collect()
            self._stopping = threading.Thread(
                target=self._stop_after_ray_data, name="abcompare-ray-stop", daemon=True
            )
            self._stopping.start()

    def _stop_after_ray_data(self) -> None:
        """Stop Ray once Ray Data's executor threads are done. Ray Data's shutdown waits 2 s for its
        scheduling thread and then lets it run on; a Ray stopped under a thread that still calls into it can
        end the process with status 1, as a freed object ref did (see :meth:`release`)."""
        for thread in threading.enumerate():
            if thread.name.startswith(RAY_DATA_THREAD) and thread is not threading.current_thread():
                thread.join(timeout=RAY_DATA_GRACE)
        self._stop()

    def close(self) -> None:
        """Stop (or wait for the stopping of) a Ray we started; a caller's Ray is left running."""
        self.release()
        if self._stopping is not None:
            self._stopping.join()

    @property
    def released(self) -> bool:
        """Whether :meth:`release` was called: a Ray we started may be stopping, so ask nothing more of it."""
        return self._stopping is not None

    @property
    def cpus(self) -> int:
        return int(self.resources.get("CPU", 0))

    @property
    def gpus(self) -> int:
        return int(self.resources.get("GPU", 0))


def import_ray() -> Any:
    """The ray module, or a one-line error saying how to install it."""
    try:
        import ray
    except ImportError:
        raise ExecutionError(
            "the ray backend needs Ray, which is not installed",
            field="execution.backend",
            hint="pip install 'abcompare[ray]' (Ray 2.60 with Ray Data), or use backend: local",
        ) from None
    return ray


def resolve_address(address: str) -> tuple[str, str | None]:
    """``HOST:PORT`` as given, or the cluster ``auto`` finds, with where it found it: ``RAY_ADDRESS``, else
    the address the last ``ray start --head`` on this machine left in Ray's temp folder
    (``ray_current_cluster``, under ``$RAY_TMPDIR/ray``, by default ``/tmp/ray``). Ray's own ``auto`` also
    joins any Ray process it sees running here (another program's private Ray): abcompare does not."""
    if address != "auto":
        return address, None
    from ray._common.utils import get_ray_address_file
    from ray._private.services import canonicalize_bootstrap_address

    record = Path(get_ray_address_file(None))
    given, origin = os.environ.get("RAY_ADDRESS", "").strip(), "RAY_ADDRESS"
    if given in ("", "auto") and record.is_file():
        given, origin = record.read_text().strip(), str(record)
    if given in ("", "auto"):
        raise ExecutionError(
            "'auto' found no Ray cluster: none was started on this machine and RAY_ADDRESS is not set",
            field=FIELD,
            hint="start one with `ray start --head`, or give the head's HOST:PORT",
        )
    try:
        found = canonicalize_bootstrap_address(given)
    except Exception:  # noqa: BLE001 - Ray's parser raises several kinds
        found = None
    if not found:
        raise ExecutionError(
            f"'auto' read {given!r} from {origin}, which is not a Ray cluster's HOST:PORT",
            field=FIELD,
            hint="correct it, or give the head's HOST:PORT",
        )
    return found, origin


def check_reachable(address: str, found_in: str | None = None, timeout: float = CONNECT_TIMEOUT) -> None:
    """The cluster's head port accepts a TCP connection within ``timeout`` seconds. ``found_in``: where
    ``auto`` read the address (``RAY_ADDRESS`` or an earlier ``ray start``'s record), for the message."""
    host, _, port = address.rpartition(":")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout):
            pass
    except OSError as exc:
        reason = "timed out" if isinstance(exc, TimeoutError) else (exc.strerror or type(exc).__name__)
        where = f", the address 'auto' read from {found_in}" if found_in else ""
        raise ExecutionError(
            f"no Ray cluster answers at {address}{where} ({reason.lower()})",
            field=FIELD,
            hint=_unreachable_hint(found_in),
        ) from None


def _unreachable_hint(found_in: str | None) -> str:
    if found_in is None or found_in == "RAY_ADDRESS":
        return (
            "start the head with `ray start --head --port PORT` and give its HOST:PORT, "
            "or leave execution.address empty to start Ray on this machine"
        )
    return (
        "the record was left by a `ray start --head` whose cluster has stopped: start one again, "
        "delete the record, or give the head's HOST:PORT"
    )


def check_admitted(address: str, timeout: float = GCS_TIMEOUT) -> None:
    """The cluster's control service answers us, and accepts our token when it asks for one."""
    from ray._raylet import GcsClient
    from ray.exceptions import AuthenticationError

    outcome: list[BaseException | None] = []

    def ask() -> None:
        try:
            GcsClient(address=address).internal_kv_get(b"abcompare", namespace=None, timeout=timeout)
            outcome.append(None)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            outcome.append(exc)

    thread = threading.Thread(target=ask, name="abcompare-ray-check", daemon=True)
    thread.start()
    thread.join(timeout + 2)
    if not outcome:
        raise ExecutionError(
            f"{address} accepts connections but no Ray cluster answered within {timeout:.0f} s",
            field=FIELD,
            hint="check the port: it is the head's --port (6379 by default)",
        )
    error = outcome[0]
    if isinstance(error, AuthenticationError):
        mode = os.environ.get("RAY_AUTH_MODE", "unset")
        missing = mode != "token" or not _token_available()
        raise ExecutionError(
            f"the Ray cluster at {address} requires an authentication token, and "
            + ("this driver has none" if missing else "this driver's token does not match")
            + f" (RAY_AUTH_MODE is {mode})",
            field=FIELD,
            hint=TOKEN_HINT,
        )
    # any other answer (even an error about our request) means a live Ray cluster admitted us


def _token_available() -> bool:
    if os.environ.get("RAY_AUTH_TOKEN"):
        return True
    path = os.environ.get("RAY_AUTH_TOKEN_PATH")
    return Path(path).is_file() if path else (Path.home() / ".ray" / "auth_token").is_file()


def _quiet_ray() -> None:
    """Ray Data's progress bars and start-of-execution notes would interleave with our progress."""
    from ray.data import DataContext

    with warnings.catch_warnings():  # Ray Data's own deprecated fields, read as it makes its context
        warnings.simplefilter("ignore", DeprecationWarning)
        context = DataContext.get_current()
    context.enable_progress_bars = False
    context.print_on_execution_start = False
    for name in ("ray", "ray.data"):
        logging.getLogger(name).setLevel(logging.WARNING)


class _NotOurs(logging.Filter):
    """Drops Ray's note that the private Ray it started has token authentication (and a token in
    ~/.ray/auth_token): Ray's default, and not the user's business."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "Token authentication is enabled" not in record.getMessage()


@contextmanager
def _ray_notes_to_stderr() -> Iterator[None]:
    """Ray prints its cluster's notes ("(raylet) A worker died ...") on stdout, which ``--json`` keeps for
    the result: send them to stderr with our progress while the session lasts."""
    from ray._private import worker

    original = worker.print_to_stdstream

    def to_stderr(data: dict, ignore_prefix: bool) -> None:
        original({**data, "is_err": True}, ignore_prefix)

    worker.print_to_stdstream = to_stderr
    try:
        yield
    finally:
        worker.print_to_stdstream = original


@contextmanager
def ray_session(settings: ExecutionSettings, reporter: Reporter | None = None) -> Iterator[RaySession]:
    """The Ray to run on (see the module docstring); stopped or disconnected on exit if we opened it.
    The address is checked here, at once; Ray itself starts in the background (:class:`RaySession`)."""
    reporter = reporter or Reporter()
    ray = import_ray()
    if ray.is_initialized():
        yield RaySession("this process's Ray")
        return
    logging.getLogger("ray._private.authentication.authentication_token_setup").addFilter(_NotOurs())
    common: dict[str, Any] = {"log_to_driver": False, "logging_level": logging.WARNING}
    if settings.address is None:
        reporter.stage("starting Ray on this machine")
        # bound to the loopback interface: a private Ray has no business on the network
        ray.init(address="local", num_cpus=settings.num_cpus, _node_ip_address="127.0.0.1",
                 include_dashboard=False, **common)  # fmt: skip
        address = "local"
    else:
        address, found_in = resolve_address(settings.address)
        check_reachable(address, found_in)
        check_admitted(address)
        reporter.stage(f"joining the Ray cluster at {address}")
        # the driver's abcompare travels with the tasks, so every node runs the code this driver runs
        package = str(Path(abcompare.__file__).parent)
        ray.init(address=address, runtime_env={"py_modules": [package]}, **common)
    try:
        session = RaySession(address, stop=ray.shutdown)
    except BaseException:
        ray.shutdown()
        raise
    try:
        with _ray_notes_to_stderr():
            yield session
    finally:
        session.close()
