"""The evaluation stage sharded on Ray: a large run's per-query metrics computed by blocks of queries, one
Ray task per block, so the work of a run of millions of hits spreads over the cluster's CPUs.

A query's metrics read only its own hits and judgments (every count and sum runs within a query, in the
order of its hits), so a block's table holds the numbers the whole run's would, to the bit, whatever the
number of blocks. Only the per-query tables (a few floats per query) come back; the driver stacks them and
applies the query set as the local path does (:func:`abcompare.evaluation.per_query.per_query_table`).
Hits and judgments of a query outside the query set go to the last block (the local path evaluates them
too, then drops their rows), so the settings the table carries in ``attrs`` add up the same.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd
import pyarrow as pa
import ray

from abcompare.core.errors import AbcompareWarning, WorkerLostError
from abcompare.evaluation import codes
from abcompare.evaluation.batch import evaluate_run
from abcompare.evaluation.per_query import per_query_metrics, per_query_table
from abcompare.execution.ray_encoding import first_line

__all__ = ["ROWS_PER_TASK", "evaluation_blocks", "per_query_metrics_on_ray"]

#: Hits per evaluation task: below twice this a run is evaluated in the driver (shipping it costs more
#: than the work saved).
ROWS_PER_TASK = 1_000_000


def evaluation_blocks(n_hits: int, n_cpus: int, rows_per_task: int | None = None) -> int:
    """How many query blocks to evaluate a run of ``n_hits`` in: one per ``rows_per_task`` hits (default
    :data:`ROWS_PER_TASK`), at most one per CPU (1: in the driver)."""
    return max(1, min(n_cpus, n_hits // max(rows_per_task or ROWS_PER_TASK, 1)))


@ray.remote
def _evaluate_block(
    hits: pd.DataFrame, annotations: pd.DataFrame, options: dict[str, object]
) -> pd.DataFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AbcompareWarning)  # repeated keys: reported by the alignment stage
        return evaluate_run(hits, annotations, **options)  # type: ignore[arg-type]


def per_query_metrics_on_ray(
    run: pd.DataFrame,
    annotations: pd.DataFrame,
    query_ids: Sequence[str],
    *,
    blocks: int,
    measures: Sequence[str],
    cutoffs: Sequence[int],
    convention: str,
    relevance_threshold: float,
    unjudged: str = "nonrelevant",
) -> pd.DataFrame:
    """:func:`abcompare.evaluation.per_query.per_query_metrics`, the queries in ``blocks`` consecutive
    blocks of ``query_ids`` evaluated as Ray tasks (on the Ray this process is connected to); the same
    table, bit for bit, for any number of blocks."""
    size = math.ceil(len(query_ids) / blocks) if len(query_ids) else 1
    if blocks <= 1 or len(query_ids) <= size:
        return per_query_metrics(
            run, annotations, query_ids, measures=measures, cutoffs=cutoffs, convention=convention,
            relevance_threshold=relevance_threshold, unjudged=unjudged,
        )  # fmt: skip
    options = {"k": tuple(cutoffs), "convention": convention, "relevance_threshold": relevance_threshold,
               "unjudged": unjudged}  # fmt: skip
    wanted = codes.as_strings([str(q) for q in query_ids])
    last = math.ceil(len(query_ids) / size) - 1
    run_parts, annotation_parts = _split(run, wanted, size, last), _split(annotations, wanted, size, last)
    refs = [
        _evaluate_block.remote(hits, judged, options)
        for hits, judged in zip(run_parts, annotation_parts, strict=True)
    ]
    tables = _gathered(refs)
    table = pd.concat(tables)
    table.attrs = dict(tables[0].attrs)
    table.attrs["queries_with_repeated_keys"] = sum(t.attrs["queries_with_repeated_keys"] for t in tables)
    return per_query_table(table, query_ids, cutoffs=cutoffs, measures=measures, stacklevel=2)


def _gathered(refs: list[ray.ObjectRef]) -> list[pd.DataFrame]:
    """``ray.get`` of the blocks' tables, a task's failure raised as the local path raises it: a user error
    (bad input, exit 2) as it is, one located line without Ray's remote traceback; a bug in a task as its
    own exception; a worker lost beyond Ray's retries as a :class:`WorkerLostError`."""
    from ray.exceptions import RayError, RayTaskError

    try:
        return ray.get(refs)
    except RayTaskError as exc:
        cause = exc.cause
        if isinstance(cause, BaseException) and not isinstance(cause, RayError):
            raise cause from None
        raise _lost(exc) from None
    except RayError as exc:
        raise _lost(exc) from None


def _lost(exc: BaseException) -> WorkerLostError:
    return WorkerLostError(
        f"a Ray worker was lost while evaluating a block of queries: {first_line(exc)}",
        field="execution",
        hint="Ray reran lost work up to execution.retries times; check the cluster's memory and nodes "
        "(`ray status`), then run again",
    )


def _split(frame: pd.DataFrame, wanted: pa.Array, size: int, last: int) -> list[pd.DataFrame]:
    """``frame``'s rows by query block (``size`` queries of ``wanted`` each; a query outside it in block
    ``last``), each block's rows in their order in ``frame``."""
    query = _large(codes.as_strings(frame["query_id"]))  # as the evaluator takes them: not stripped
    code = codes.lookup(query, _large(wanted))
    block = np.where(code < 0, last, code // size)
    order = np.argsort(block, kind="stable")
    bounds = np.searchsorted(block[order], np.arange(last + 2))
    return [frame.iloc[order[bounds[b] : bounds[b + 1]]] for b in range(last + 1)]


def _large(strings: pa.Array) -> pa.Array:
    return strings if pa.types.is_large_string(strings.type) else strings.cast(pa.large_string())
