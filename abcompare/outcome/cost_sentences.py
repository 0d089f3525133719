"""The cost line a person reads beside each verdict (``Cost vs control: ...``) and the cost table as plain
data, from ``stats.cost.cost_table``; the duration, size and ratio formats are
:mod:`abcompare.outcome.rows`'."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pandas as pd

from abcompare.core.json_values import json_value
from abcompare.outcome.rows import format_bytes, format_duration, format_ratio
from abcompare.stats.cost import (
    CACHED,
    GENERATOR,
    JUDGE,
    NO_EMBEDDINGS,
    PARTLY_CACHED,
    PYTHON,
    RETRIEVED,
    WORK_COLUMNS,
)  # fmt: skip


def _speed(ratio: float) -> str:
    """A time ratio (the treatment's over the control's) in words: ``2.3x faster``, ``1.8x slower``."""
    if ratio == 1:
        return "as fast"
    return f"{format_ratio(1 / ratio)} faster" if ratio < 1 else f"{format_ratio(ratio)} slower"


def _size(ratio: float) -> str:
    return "the same size" if ratio == 1 else f"{format_ratio(ratio)} the size"


def _missing(value: object) -> bool:
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
    shared = (
        mine and other and row["encode_seconds_per_1000_chunks"] == control["encode_seconds_per_1000_chunks"]
    )
    if shared and row["model_bytes"] == control["model_bytes"]:  # one encoding, charged to both
        head = f"encoding shared with the control ({rate(row)}, one encoding for both)"
    elif mine and other:
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


def _spread(row: Mapping[str, Any]) -> str:
    """The interquartile range of a variant's timed rounds' means: ``12.9–13.4 ms``."""
    low, high = format_duration(row["seconds_per_query_low"]), format_duration(row["seconds_per_query_high"])
    unit = low.rsplit(" ", 1)[-1]
    return f"{low.rsplit(' ', 1)[0]}–{high}" if high.endswith(f" {unit}") else f"{low}–{high}"


def _query_clause(row: Mapping[str, Any], control: Mapping[str, Any]) -> str:
    """The treatment's latency against the control's: the ratio and its interval first (what a busy
    machine moves least), then the absolute times only beside their sample and the rounds' spread."""
    if _missing(row["query_ratio"]):
        return "queries not timed"
    ratio = (
        f"time ratio {row['query_ratio']:.2f} [{row['query_ratio_low']:.2f}, {row['query_ratio_high']:.2f}]"
    )
    sample = f"{int(row['timed_queries'])} queries × {int(row['timed_rounds'])} rounds"
    figures = (  # two statistics, named: a slow spell moves the rounds' means, not the queries' medians
        f"{sample}: {format_duration(row['seconds_per_query'])} vs "
        f"{format_duration(control['seconds_per_query'])} per query, mean over the queries of the median "
        f"over the rounds; interquartile range of the round means {_spread(row)} vs {_spread(control)}"
    )
    head = "within the noise" if bool(row["query_within_noise"]) else _speed(row["query_ratio"])
    return f"queries {head} ({ratio}; {figures}{_untimed_encoding(row, 'both share it')})"


def _untimed_encoding(row: Mapping[str, Any], shared: str) -> str:
    """What the timed figures leave out: the query encoding of a model every variant shares that the run
    never loaded (``stats.cost.cost_table``'s ``untimed_query_encoding``), or nothing."""
    models = row.get("untimed_query_encoding")
    if _missing(models) or not models:
        return ""
    return f"; query encoding by {models} not timed: {shared} and its vectors were cached"


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
        sample = f"{int(row['timed_queries'])} queries × {int(row['timed_rounds'])} rounds"
        spread = (
            f"mean over the queries of the median over the rounds; interquartile range of the round means "
            f"{_spread(row)}"
        )
        untimed = _untimed_encoding(row, "every variant shares it")
        clauses.append(
            f"queries {format_duration(row['seconds_per_query'])} per query ({sample}, {spread}{untimed})"
        )
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


def _plain_value(value: object) -> object:
    """A cost-table cell as JSON has it (:func:`abcompare.core.json_values.json_value`): None for a
    missing one, a bool, a float, or text."""
    value = json_value(value)
    if value is None or isinstance(value, bool):
        return value
    return float(value) if isinstance(value, (int, float)) else value


def cost_json(cost: pd.DataFrame | None) -> dict[str, Any]:
    """The cost table as plain data: per variant its figures (and a treatment's ratios and sentence); per
    judge and answer generator (``stats.cost.with_work_rows``) its calls, tokens, seconds and cache hits."""
    if cost is None:
        return {}
    out: dict[str, Any] = {}
    for name, row in cost.iterrows():
        if row["source"] in (JUDGE, GENERATOR):
            out[str(name)] = {k: _plain_value(row[k]) for k in ("source", *WORK_COLUMNS)}
            continue
        values = {k: _plain_value(v) for k, v in row.to_dict().items() if k not in WORK_COLUMNS}
        if values["query_within_noise"] is not None:
            values["query_within_noise"] = bool(values["query_within_noise"])
        if name != "control" and "control" in cost.index:
            values["sentence"] = cost_sentence(cost, str(name))
        out[str(name)] = values
    return out
