"""The cost line a person reads beside each verdict (``Cost vs control: ...``) and the cost table as plain
data, from ``stats.cost.cost_table``; the duration, size and ratio formats are
:mod:`abcompare.outcome.rows`'."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pandas as pd

from abcompare.outcome.rows import format_bytes, format_duration, format_ratio
from abcompare.stats.cost import CACHED, NO_EMBEDDINGS, PARTLY_CACHED, PYTHON, RETRIEVED


def _speed(ratio: float) -> str:
    """A time ratio (the treatment's over the control's) in words: ``2.3x faster``, ``1.8x slower``."""
    if ratio == 1:
        return "as fast"
    return f"{format_ratio(1 / ratio)} faster" if ratio < 1 else f"{format_ratio(ratio)} slower"


def _size(ratio: float) -> str:
    return "the same size" if ratio == 1 else f"{format_ratio(ratio)} the size"


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _encoding_clause(row: Mapping[str, Any], control: Mapping[str, Any]) -> str:
    """How fast the treatment encodes its chunks against the control; cached vectors were never timed, so
    they are said to be cached, never 0 s of encoding."""

    def rate(r: Mapping[str, Any]) -> str:
        return f"{format_duration(r['encode_seconds_per_1000_chunks'])} per 1,000 chunks"

    def part(r: Mapping[str, Any], whose: str) -> list[str]:
        if r["embeddings"] != PARTLY_CACHED:
            return []
        return [f"{whose}{int(r['encoded_chunks']):,} of {int(r['embedded_chunks']):,} chunks encoded here, "
                "the rest cached"]  # fmt: skip

    ours, theirs = row["embeddings"], control["embeddings"]
    if ours == NO_EMBEDDINGS and theirs == NO_EMBEDDINGS:
        return ""
    mine = not _missing(row["encode_seconds_per_1000_chunks"])
    other = not _missing(control["encode_seconds_per_1000_chunks"])
    notes = part(row, "") + part(control, "the control: ")
    if mine and other:
        head = f"encodes {_speed(row['encode_ratio'])}"
        both = [format_duration(r["encode_seconds_per_1000_chunks"]) for r in (row, control)]
        notes.insert(0, f"{both[0]} vs {both[1]} per 1,000 chunks")
    elif mine:
        head = f"encodes {rate(row)}"
        notes.append(
            "the control encodes nothing"
            if theirs == NO_EMBEDDINGS
            else "the control's embeddings were cached"
        )
    elif ours == CACHED:
        head = "encoding not timed (its embeddings were cached)"
    else:
        head = "encodes nothing"
        notes.append(f"the control: {rate(control)}" if other else "the control's embeddings were cached")
    return head + (f" ({'; '.join(notes)})" if notes else "")


def _query_clause(row: Mapping[str, Any], control: Mapping[str, Any]) -> str:
    """The treatment's latency against the control's: a ratio beyond the noise, or within it."""
    if _missing(row["query_ratio"]):
        return "queries not timed"
    figures = (
        f"{format_duration(row['seconds_per_query'])} vs {format_duration(control['seconds_per_query'])} "
        f"per query, p95 {format_duration(row['seconds_per_query_p95'])} vs "
        f"{format_duration(control['seconds_per_query_p95'])}"
    )
    if bool(row["query_within_noise"]):
        return f"queries within the noise ({figures})"
    return f"queries {_speed(row['query_ratio'])} ({figures})"


def _bytes_clause(what: str, row: Mapping[str, Any], control: Mapping[str, Any]) -> str:
    ours, theirs = float(row[f"{what}_bytes"]), float(control[f"{what}_bytes"])
    if not ours and not theirs:
        return f"no {what}"
    if not theirs:
        return f"{what} {format_bytes(ours)} (the control has none)"
    if not ours:
        return f"no {what} (the control's: {format_bytes(theirs)})"
    ratio = float(row[f"{what}_ratio"])
    if ratio == 1:
        return f"{what} the same size ({format_bytes(ours)})"
    return f"{what} {_size(ratio)} ({format_bytes(ours)} vs {format_bytes(theirs)})"


def _own_clauses(row: Mapping[str, Any]) -> list[str]:
    """A retrieved variant's own cost figures, with no control to compare them with."""

    clauses = []
    if not _missing(row["encode_seconds_per_1000_chunks"]):
        clauses.append(f"encodes {format_duration(row['encode_seconds_per_1000_chunks'])} per 1,000 chunks")
    elif row["embeddings"] in (CACHED, PARTLY_CACHED):
        clauses.append("encoding not timed (its embeddings were cached)")
    if _missing(row["seconds_per_query"]):
        clauses.append("queries not timed")
    else:
        clauses.append(f"queries {format_duration(row['seconds_per_query'])} per query, p95 "
                       f"{format_duration(row['seconds_per_query_p95'])}")  # fmt: skip
    for what in ("model", "index"):
        size = float(row[f"{what}_bytes"])
        clauses.append(f"{what} {format_bytes(size)}" if size else f"no {what}")
    return clauses


def _given_cost(row: Mapping[str, Any], control: Mapping[str, Any] | None) -> str:
    """What is known of a variant whose run was given: a Python retriever's one call, or nothing."""

    if row["source"] != PYTHON:
        return "not measured here (a run file: it was retrieved elsewhere)"
    if _missing(row["seconds_per_query"]):
        return "not measured here (a Python retriever)"
    against = ""
    if control is not None and not _missing(control["seconds_per_query"]):
        against = (
            f"; the control's, timed one query at a time: {format_duration(control['seconds_per_query'])}"
        )
    return (
        f"the Python retriever took {format_duration(row['seconds_per_query'])} per query (one call over "
        f"every query, timed once, so not compared with the control{against}); its index and model are "
        "its own, not measured here"
    )


def cost_sentence(cost: pd.DataFrame, treatment: str) -> str:
    """What a treatment costs against the control, from the cost table (``stats.cost.cost_table``), e.g.

    ``Cost vs control: encodes 2.3x faster (41 s vs 95 s per 1,000 chunks), queries 1.8x faster (3.1 ms vs
    5.6 ms per query, p95 ...), model 0.25x the size (23 MB vs 91 MB), index the same size (7.7 MB).``

    Latencies whose ratio's interval reaches into the noise floor's band are "within the noise"; cached
    embeddings are said to be cached, never 0 s of encoding. A treatment given as a run file or a Python
    retriever gets what is known of it (``Cost: ...``), and so does a retrieved treatment whose control
    was given (its own figures, and that the control's were not measured here).
    """

    row = cost.loc[treatment].to_dict()
    control = cost.loc["control"].to_dict() if "control" in cost.index else None
    source = row.get("source", RETRIEVED)
    if source != RETRIEVED:
        retrieved = control is not None and control.get("source", RETRIEVED) == RETRIEVED
        return f"Cost: {_given_cost(row, control if retrieved else None)}."
    if control is None or control.get("source", RETRIEVED) != RETRIEVED:
        whose = "not measured here" if control is None else _given_cost(control, None)
        return f"Cost: {', '.join(_own_clauses(row))}; the control's: {whose}."
    clauses = [
        _encoding_clause(row, control),
        _query_clause(row, control),
        _bytes_clause("model", row, control),
        _bytes_clause("index", row, control),
    ]
    return "Cost vs control: " + ", ".join(c for c in clauses if c) + "."


def _plain_value(value: Any) -> Any:
    """A cost-table cell as JSON has it: None for a missing one, a bool, a float, or text."""
    import numpy as np

    if _missing(value):
        return None
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    return float(value) if isinstance(value, (int, float, np.integer, np.floating)) else value


def cost_json(cost: pd.DataFrame | None) -> dict[str, Any]:
    """The cost table as plain data: per variant its figures (and a treatment's ratios and sentence)."""
    if cost is None:
        return {}
    out: dict[str, Any] = {}
    for name, row in cost.iterrows():
        values = {k: _plain_value(v) for k, v in row.to_dict().items()}
        if values["query_within_noise"] is not None:
            values["query_within_noise"] = bool(values["query_within_noise"])
        if name != "control" and "control" in cost.index:
            values["sentence"] = cost_sentence(cost, str(name))
        out[str(name)] = values
    return out
