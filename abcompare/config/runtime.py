"""The settings of how an experiment runs and where it is recorded, not of what it compares: tracking
(MLflow), the efficiency pass (latency timing) and the execution backend (this process or Ray)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from abcompare.config.base import Model, located
from abcompare.core.limits import (
    MAX_CPUS,
    MAX_ENCODERS,
    MAX_GPUS_PER_ENCODER,
    MAX_QUERIES,
    MAX_RETRIES,
    MAX_TAG_VALUE_LENGTH,
)
from abcompare.core.naming import label_problem, tag_key_problem
from abcompare.retrieval.settings import without_null_entries

#: The experiment of a config that names none and compares several collections; one collection's is
#: ``abcompare-<collection>`` (:func:`abcompare.config.loading.load_config`).
DEFAULT_EXPERIMENT = "abcompare"


class TrackingSettings(Model):
    """Where results are logged in MLflow."""

    enabled: bool = True
    uri: str | None = Field(
        None, description="MLflow tracking URI; default sqlite:///mlflow.db in the working directory."
    )
    experiment: str = Field(
        DEFAULT_EXPERIMENT,
        min_length=1,
        description="The MLflow experiment; default abcompare-<collection> (the dataset's name).",
    )
    run_name: str | None = None
    artifact_location: str | None = Field(
        None, description="Artifact root for a new experiment; default ./mlruns beside a SQLite store."
    )
    tags: dict[str, str] = Field(
        default_factory=dict,
        description="Extra tags on every run; keys 'abcompare.*' and 'mlflow.*' are ours.",
    )

    @field_validator("experiment")
    @classmethod
    def _experiment_label(cls, value: str) -> str:
        problem = label_problem(value, max_length=500)
        if problem is not None:
            raise ValueError(f"experiment name {problem}")
        return value

    @field_validator("run_name")
    @classmethod
    def _run_name_label(cls, value: str | None) -> str | None:
        problem = None if value is None else label_problem(value)
        if problem is not None:
            raise ValueError(f"run name {problem}")
        return value

    @field_validator("tags", mode="before")
    @classmethod
    def _drop_null_tags(cls, value: Any) -> Any:
        return without_null_entries(value)

    @field_validator("tags")
    @classmethod
    def _tags_are_mlflow_tags(cls, value: dict[str, str]) -> dict[str, str]:
        for key, text in value.items():
            problem = tag_key_problem(key)
            if problem is None and key.startswith(("abcompare.", "mlflow.")):
                problem = "is reserved ('abcompare.*' and 'mlflow.*' tags are set by abcompare and MLflow)"
            if problem is None and len(text) > MAX_TAG_VALUE_LENGTH:
                problem = f"has a value of {len(text):,} characters (at most {MAX_TAG_VALUE_LENGTH:,})"
            if problem is not None:
                raise located(f"tag {key!r} {problem}", key)
        return value


class EfficiencySettings(Model):
    """How each variant's query latency is timed: after every variant has run, its query stage is re-run
    one query at a time on a sample of the queries, in interleaved rounds after a warm-up, in this process
    (also with the Ray backend). Only the cost figures depend on these; no quality number does."""

    repeats: int = Field(
        5,
        ge=0,
        le=100,
        description="Timed rounds over the sampled queries; 0 skips the timing pass (no latency is reported: "
        "a rerun whose query vectors are cached then need not load the model).",
    )
    max_queries: int = Field(
        100,
        ge=1,
        le=MAX_QUERIES,
        description="At most this many queries, spread over the query set, are timed.",
    )
    budget_seconds: float = Field(
        2.0,
        gt=0,
        le=86_400,
        description="What the timing pass may spend on its warm-up and rounds (checked after every query: "
        "at most one query's stages over). Fewer queries (at least 5) are timed when max_queries would take "
        "longer; 3 whole rounds (fewer when fewer are asked) are always timed, and said when they run past "
        "it. Loading a model the run did not load comes before it, once per process, and is said.",
    )
    noise_floor: float = Field(
        0.1,
        ge=0,
        lt=1,
        description="Two latencies differ only when the interval of their ratio lies wholly outside "
        "[1/(1+f), 1+f]: closer than this fraction they are within the noise.",
    )

    def timing_plan(self) -> Any:
        """The retrieval stage's timing plan."""
        from abcompare.retrieval.latency import TimingPlan

        return TimingPlan(self.repeats, self.max_queries, self.budget_seconds)


RAY_ONLY_SETTINGS = ("address", "num_cpus", "num_gpus_per_encoder", "encoders")


class ExecutionSettings(Model):
    """Where the variants are produced and the corpus encoded: in this process, or on Ray.

    Statistics and MLflow always run in the driver (this process), and so does evaluation unless a run is
    large enough to be split in query blocks on Ray; the backend never changes a number, so it is not part
    of the config's fingerprint.
    """

    backend: Literal["local", "ray"] = Field(
        "local",
        description="local: everything in this process (Ray is not imported); ray: variants as Ray tasks "
        "and corpus encoding as a Ray Data pipeline (pip install 'abcompare[ray]').",
    )
    address: str | None = Field(
        None,
        description="The Ray cluster to join: HOST:PORT of its head (ray start --head), or 'auto' for the "
        "one running on this machine; null starts a private Ray on this machine.",
    )
    num_cpus: int | None = Field(
        None,
        ge=1,
        le=MAX_CPUS,
        description="CPUs of the private Ray started when address is null (default: all).",
    )
    num_gpus_per_encoder: float | None = Field(
        None,
        gt=0,
        le=MAX_GPUS_PER_ENCODER,
        description="GPUs per encoder actor; default 1 when the cluster has GPUs (one actor per GPU), "
        "else the encoders run on CPU.",
    )
    encoders: int | None = Field(
        None,
        ge=1,
        le=MAX_ENCODERS,
        description="Encoder actors in the Ray Data pool; default one per GPU, or on CPUs one per as many "
        "CPUs as this machine's torch threads (each actor runs that many, for bit-identical vectors).",
    )
    retries: int = Field(
        3,
        ge=0,
        le=MAX_RETRIES,
        description="How often Ray reruns a task, or restarts an encoder, whose worker died; 0 fails the "
        "comparison at the first lost worker.",
    )

    @field_validator("address")
    @classmethod
    def _host_port_or_auto(cls, value: str | None) -> str | None:
        if value is None or value == "auto":
            return value
        host, sep, port = value.strip().rpartition(":")
        if "://" in value or not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise ValueError(
                f"expected HOST:PORT of the head (e.g. 10.0.0.5:6379; no ray:// client address) or 'auto', "
                f"got {value!r}"
            )
        return value.strip()

    @model_validator(mode="after")
    def _consistent(self) -> ExecutionSettings:
        if "backend" not in self.model_fields_set:  # an explicit 'backend: local' ignores Ray settings
            given = [name for name in RAY_ONLY_SETTINGS if getattr(self, name) is not None]
            if given:
                raise ValueError(f"{given[0]} is a Ray setting: set backend: ray (or remove {given[0]})")
        if self.address is not None and self.num_cpus is not None:
            raise ValueError("num_cpus sizes a private Ray; a cluster joined by address has its own CPUs")
        return self
