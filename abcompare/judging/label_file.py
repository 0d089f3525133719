"""The ``file`` provider: model-made labels produced elsewhere (TREC qrels, or JSONL as the annotations
reader takes it), imported as the judge's labels, never as people's: each row carries the ``source`` the
config gives it."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from abcompare.core.errors import DataError
from abcompare.data.annotations import read_annotations
from abcompare.judging.grades import SCALE

LABEL_COLUMNS = ["query_id", "key", "grade", "source", "judge", "prompt_version"]


def read_judge_labels(
    path: str | Path, source: str, queries: Iterable[str] | None = None, prompt_version: str = ""
) -> pd.DataFrame:
    """The labels in ``path`` as the judged-pairs table (``query_id, key, grade, source, judge,
    prompt_version``); a grade off the 0-3 scale or a label for a query not in ``queries`` is a located
    error, not a silent drop."""
    frame = read_annotations(path)
    off_scale = frame[~frame["grade"].isin(SCALE)]
    if len(off_scale):
        row = off_scale.iloc[0]
        raise DataError(
            f"{len(off_scale)} labels are off the judge's scale 0-3 (query {row['query_id']!r}, "
            f"key {row['key']!r}: grade {row['grade']})",
            file=path,
            field="judge.path",
        )
    if queries is not None:
        known = set(queries)
        unknown = sorted(set(frame["query_id"]) - known)
        if unknown:
            raise DataError(
                f"labels for {len(unknown)} queries not in the query set (first: {unknown[0]!r})",
                file=path,
                field="judge.path",
                hint="the judge's labels must be for this collection's queries",
            )
    out = frame[["query_id", "key", "grade"]].copy()
    out["grade"] = out["grade"].astype("Int64")
    out["source"] = source
    out["judge"] = f"file:{source}"
    out["prompt_version"] = prompt_version
    return out.reset_index(drop=True)[LABEL_COLUMNS]
