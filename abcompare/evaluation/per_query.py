"""The evaluation stage's one entry point: a variant's run and the judgments -> its per-query table.

Every variant of a comparison is scored on the same fixed query set with the same rules
(:mod:`abcompare.evaluation.judgments`), so the per-query tables of the control and the treatments
pair up row by row.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import pandas as pd

from abcompare.core.errors import AbcompareWarning
from abcompare.evaluation.batch import evaluate_run
from abcompare.evaluation.measures import per_query_columns


def per_query_metrics(
    run: pd.DataFrame,
    annotations: pd.DataFrame,
    query_ids: Sequence[str],
    *,
    measures: Sequence[str],
    cutoffs: Sequence[int],
    convention: str,
    relevance_threshold: float,
    unjudged: str = "nonrelevant",
) -> pd.DataFrame:
    """One row per query of ``query_ids`` (in that order): ``measure@k`` for the configured measures,
    ``judged@k``, and the counts.

    ``query_ids`` is the comparison's fixed query set; each of them is judged (the data stage keeps
    judged queries only), so each gets its own evaluated row. A query with no judgment at this level
    (possible at span level, for a query judged by document only) scores 0 and is named in a warning.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AbcompareWarning)  # repeated keys: reported by the alignment stage
        table = evaluate_run(
            run,
            annotations,
            k=tuple(cutoffs),
            convention=convention,
            relevance_threshold=relevance_threshold,
            unjudged=unjudged,
        )
    return per_query_table(table, query_ids, cutoffs=cutoffs, measures=measures, stacklevel=3)


def per_query_table(
    table: pd.DataFrame,
    query_ids: Sequence[str],
    *,
    cutoffs: Sequence[int],
    measures: Sequence[str],
    stacklevel: int = 2,
) -> pd.DataFrame:
    """``evaluate_run``'s table (or the blocks of one, stacked) as the comparison's per-query table: the
    rows of ``query_ids`` in that order, a query without a judgment at 0 (named in one warning), the
    configured columns."""
    wanted = pd.Index([str(q) for q in query_ids], name="query_id")
    absent = wanted.difference(table.index, sort=False)
    if len(absent):
        shown = ", ".join(repr(q) for q in absent[:5])
        warnings.warn(
            f"{len(absent)} queries have no judgment at this annotation level and score 0 (e.g. {shown})",
            AbcompareWarning,
            stacklevel=stacklevel,
        )
    out = table.reindex(wanted, fill_value=0)[per_query_columns(cutoffs, measures)]
    out.attrs = dict(table.attrs)
    return out
