"""The execution block of a config: defaults, --set, located errors, and the fingerprint it stays out of."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from support.configs import MINIMAL

from abcompare.config import load_config
from abcompare.core.errors import ConfigError


def write(tmp_path: Path, execution: str = "") -> Path:
    path = tmp_path / "x.yaml"
    path.write_text(MINIMAL + execution)
    return path


def test_the_default_backend_is_local_with_no_ray_settings(tmp_path: Path) -> None:
    execution = load_config(write(tmp_path)).execution
    assert (execution.backend, execution.address, execution.num_cpus) == ("local", None, None)
    assert (execution.num_gpus_per_encoder, execution.encoders, execution.retries) == (None, None, 3)


def test_set_selects_ray_and_a_cluster_address(tmp_path: Path) -> None:
    config = load_config(
        write(tmp_path), ["execution.backend=ray", "execution.address=10.0.0.5:6379", "execution.retries=0"]
    )
    assert (config.execution.backend, config.execution.address, config.execution.retries) == (
        "ray", "10.0.0.5:6379", 0,
    )  # fmt: skip
    assert load_config(write(tmp_path), ["execution.backend=ray", "execution.address=auto"]).execution.address


@pytest.mark.parametrize("address", ["10.0.0.5", "10.0.0.5:http", ":6379", "host:70000", "ray://h:1"])
def test_a_malformed_address_is_a_located_error(tmp_path: Path, address: str) -> None:
    path = write(tmp_path, f"execution:\n  backend: ray\n  address: '{address}'\n")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert "x.yaml:13" in str(info.value)
    assert "execution.address" in str(info.value)
    assert "HOST:PORT" in str(info.value)


def test_a_ray_setting_without_the_ray_backend_says_so(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"x.yaml:11: execution: .*address is a Ray setting: set backend"):
        load_config(write(tmp_path, "execution:\n  address: 10.0.0.5:6379\n"))
    # an explicit 'backend: local' runs locally whatever Ray settings the file also has
    path = write(tmp_path, "execution:\n  backend: ray\n  encoders: 2\n")
    config = load_config(path, ["execution.backend=local"])
    assert config.execution.backend == "local"


def test_num_cpus_sizes_only_a_private_ray(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="num_cpus sizes a private Ray"):
        load_config(write(tmp_path, "execution:\n  backend: ray\n  address: auto\n  num_cpus: 4\n"))
    with pytest.raises(ConfigError, match=r"execution.encoders.*greater than or equal to 1"):
        load_config(write(tmp_path), ["execution.backend=ray", "execution.encoders=0"])


def test_the_backend_is_not_part_of_the_config_fingerprint(tmp_path: Path) -> None:
    local = load_config(write(tmp_path))
    ray = load_config(write(tmp_path), ["execution.backend=ray", "execution.num_cpus=2"])
    assert local.fingerprint() == ray.fingerprint()
    assert local.fingerprint() != load_config(write(tmp_path), ["evaluation.cutoffs=[5]"]).fingerprint()


def test_the_local_backend_never_imports_ray(tmp_path: Path) -> None:
    script = f"""
import sys
from abcompare.config import load_config
from abcompare.runner import run_comparison
config = load_config({str(write(tmp_path))!r}, ["tracking.enabled=false", "significance.n_resamples=100"])
result = run_comparison(config)
assert len(result.comparison) == 15, result.comparison
print("ray imported:", "ray" in sys.modules)
"""
    command = [sys.executable, "-c", script]
    out = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().endswith("ray imported: False")


def test_a_ray_we_started_is_stopped_after_ray_datas_executor_threads() -> None:
    """Ray Data's scheduling thread can outlive its dataset by seconds; stopping Ray under it would make
    Ray's core worker end the process with status 1, so the stop waits for it."""
    import threading

    from support.clock import pause

    from abcompare.execution import ray_session

    session = object.__new__(ray_session.RaySession)  # no Ray needed: only the stop's order is checked
    events: list[str] = []
    session._stop = lambda: events.append("ray stopped")
    session._stopping = None

    def scheduling_loop() -> None:
        pause(0.3)  # the executor's last work: close must wait for it, however long
        events.append("executor done")

    name = f"{ray_session.RAY_DATA_THREAD}dataset_1"
    threading.Thread(target=scheduling_loop, name=name, daemon=True).start()
    session.close()
    assert events == ["executor done", "ray stopped"]
