"""Annotation levels: judge hits as chunks (keys as they are), as documents, or by evidence-span overlap.

``apply_level`` turns (run, annotations) into the pair the evaluator consumes as chunk-level input:
- ``chunk``: unchanged.
- ``document``: hits collapse to their document id (``document_id`` column, else the key before ``#``);
  the first (best-ranked) hit of each document wins, ranks are renumbered, the key becomes the document id.
- ``span``: a hit is relevant when its ``[start, end)`` overlaps an evidence span of the same document for
  that query; its grade is the highest grade among the spans it overlaps. Spans no hit of the run
  overlaps stay in the annotations under a span key (``document_id@start-end``, with its document in
  the extra column ``span_document``), so missed evidence still counts against recall. The evidence of
  a query is taken as complete, as recall already assumes: a hit with known offsets that overlaps no
  evidence span is judged non-relevant (grade 0), so span-level judgments have no holes to pool.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd

from abcompare.core.errors import AbcompareWarning, DataError
from abcompare.data.alignment import alignment_report, check_alignment, document_ids

__all__ = ["LEVELS", "apply_level", "document_ids", "span_key"]

LEVELS = ("chunk", "document", "span")


def apply_level(
    run_df: pd.DataFrame,
    annotations: pd.DataFrame | None,
    level: str,
    spans: pd.DataFrame | None = None,
    *,
    corpus: pd.DataFrame | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The run and annotations to evaluate at an annotation level (see the module's docstring).

    Parameters
    ----------
    run_df : pandas.DataFrame
        A run table.
    annotations : pandas.DataFrame or None
        ``query_id, key, grade`` (chunk and document levels).
    level : {"chunk", "document", "span"}
        ``chunk``: keys as they are; ``document``: hits collapse to their document (best rank wins);
        ``span``: a hit is relevant when it overlaps an evidence span of its document for the query.
    spans : pandas.DataFrame, optional
        ``query_id, document_id, start, end[, grade]`` (span level).
    corpus : pandas.DataFrame, optional
        At span level, hits without ``start``/``end`` are located in it by their ``content``.

    Returns
    -------
    tuple of DataFrame
        The run and the annotations, both keyed as the evaluator compares them.

    Examples
    --------
    >>> import pandas as pd
    >>> run = pd.DataFrame({"query_id": ["q", "q"], "rank": [1, 2], "key": ["d#0", "d#1"]})
    >>> documents, _ = apply_level(run, pd.DataFrame(columns=["query_id", "key", "grade"]), "document")
    >>> documents[["rank", "key"]].values.tolist()
    [[1, 'd']]
    """
    if level == "chunk":
        return run_df, _require_annotations(annotations, level)
    if level == "document":
        return collapse_to_documents(run_df), _require_annotations(annotations, level)
    if level == "span":
        if spans is None:
            raise DataError(
                "level 'span' needs evidence spans",
                field="dataset.spans",
                hint="give a spans JSONL file ({query_id, document_id, start, end})",
            )
        return run_df, span_annotations(run_df, spans, corpus=corpus)
    raise DataError(
        f"unknown annotation level {level!r}", field="level", hint=f"use one of {', '.join(LEVELS)}"
    )


def _require_annotations(annotations: pd.DataFrame | None, level: str) -> pd.DataFrame:
    if annotations is None:
        raise DataError(
            f"level {level!r} needs annotations",
            field="dataset.annotations",
            hint="give an annotation file, or use level: span with evidence spans",
        )
    return annotations


def collapse_to_documents(run_df: pd.DataFrame) -> pd.DataFrame:
    """One row per (query, document): the best-ranked hit, ranks renumbered 1..n, key = document id.

    Queries and documents are joined on integer codes (one ``(query, document)`` code per hit)."""
    frame = run_df.copy()
    frame["key"] = document_ids(run_df).to_numpy()
    if "id" in frame:
        frame["id"] = frame["key"]
    qcodes, _ = pd.factorize(frame["query_id"], sort=False)
    kcodes, kuniques = pd.factorize(frame["key"], sort=False)
    order = np.lexsort((frame["rank"].to_numpy(), qcodes))
    pair = qcodes.astype(np.int64)[order] * (len(kuniques) + 1) + kcodes[order]
    keep = ~pd.Series(pair).duplicated(keep="first").to_numpy()
    frame = frame.iloc[order[keep]].reset_index(drop=True)
    codes = qcodes[order[keep]]
    frame["rank"] = frame.groupby(codes, sort=False).cumcount().to_numpy() + 1
    return frame


def span_key(document_id: str, start: int, end: int) -> str:
    """The annotation key of an evidence span no hit overlapped."""
    return f"{document_id}@{start}-{end}"


def _offsets(run_df: pd.DataFrame, corpus: pd.DataFrame | None) -> pd.DataFrame:
    """query_id, key, document, start, end for every hit whose character offsets are known."""
    hits = pd.DataFrame(
        {
            "query_id": run_df["query_id"].astype("str").to_numpy(),
            "key": run_df["key"].astype("str").to_numpy(),
            "document_id": document_ids(run_df).to_numpy(),
        }
    )
    start = run_df["start"] if "start" in run_df else pd.Series(pd.NA, index=run_df.index)
    end = run_df["end"] if "end" in run_df else pd.Series(pd.NA, index=run_df.index)
    hits["start"] = pd.to_numeric(start, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    hits["end"] = pd.to_numeric(end, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    unknown = np.isnan(hits["start"].to_numpy()) | np.isnan(hits["end"].to_numpy())
    if unknown.any() and corpus is not None and "content" in run_df:
        texts = dict(zip(corpus["doc_id"].astype("str"), corpus["text"].astype("str"), strict=True))
        contents = run_df["content"].to_numpy()
        for i in np.flatnonzero(unknown):
            content, text = contents[i], texts.get(hits.at[i, "document_id"])
            if isinstance(content, str) and content and text is not None:
                found = text.find(content)
                if found >= 0:
                    hits.loc[i, ["start", "end"]] = [found, found + len(content)]
        unknown = np.isnan(hits["start"].to_numpy()) | np.isnan(hits["end"].to_numpy())
    if unknown.all():
        raise DataError(
            "level 'span' needs each hit's character offsets, and no hit has them",
            field="start",
            hint="give hits document_id plus metadata start/end (or content and the corpus)",
        )
    if unknown.any():
        warnings.warn(
            f"{int(unknown.sum())} of {len(hits)} hits have no character offsets and cannot match a span",
            AbcompareWarning,
            stacklevel=3,
        )
    return hits[~unknown].reset_index(drop=True)


def span_annotations(
    run_df: pd.DataFrame,
    spans: pd.DataFrame,
    *,
    corpus: pd.DataFrame | None = None,
    count_missed_spans: bool = True,
) -> pd.DataFrame:
    """Annotations keyed by hit keys: a hit overlapping an evidence span of its document for its query is
    relevant with the highest grade among the spans it overlaps; missed spans keep a span key.

    Columns ``query_id, key, grade, span_document`` (the last set only on missed-span rows).
    """
    hits = _offsets(run_df, corpus)
    evidence = spans.assign(
        query_id=spans["query_id"].astype("str"),
        document_id=spans["document_id"].astype("str"),
        grade=spans.get("grade", 1),
    ).reset_index(drop=True)
    evidence["span"] = np.arange(len(evidence))
    pairs = hits.merge(evidence, on=["query_id", "document_id"], suffixes=("", "_span"))
    overlap = (pairs["start"] < pairs["end_span"]) & (pairs["start_span"] < pairs["end"])
    pairs = pairs[overlap]
    relevant = pairs.groupby(["query_id", "key"], sort=False)["grade"].max().reset_index()
    relevant["span_document"] = pd.Series(pd.NA, index=relevant.index, dtype="str")
    located = hits[hits["query_id"].isin(evidence["query_id"])][["query_id", "key"]].drop_duplicates()
    elsewhere = located[
        ~pd.MultiIndex.from_frame(located).isin(pd.MultiIndex.from_frame(relevant[["query_id", "key"]]))
    ]
    non_relevant = elsewhere.assign(
        grade=0, span_document=pd.Series(pd.NA, index=elsewhere.index, dtype="str")
    )
    frames = [relevant, non_relevant]
    if count_missed_spans:
        missed = evidence[~evidence["span"].isin(pairs["span"])]
        keys = [
            span_key(d, s, e)
            for d, s, e in zip(missed["document_id"], missed["start"], missed["end"], strict=True)
        ]
        frames.append(
            pd.DataFrame(
                {
                    "query_id": missed["query_id"].to_numpy(),
                    "key": keys,
                    "grade": missed["grade"].to_numpy(),
                    "span_document": missed["document_id"].to_numpy(),
                }
            )
        )
    out = pd.concat(frames, ignore_index=True)
    grouped = out.groupby(["query_id", "key"], sort=False)
    out = grouped.agg(grade=("grade", "max"), span_document=("span_document", "first")).reset_index()
    order = pd.Index(pd.unique(evidence["query_id"]))
    out = out.iloc[np.argsort(order.get_indexer(out["query_id"]), kind="stable")].reset_index(drop=True)
    return out.astype({"query_id": "str", "key": "str", "grade": np.int64, "span_document": "str"})


def judged_at_level(
    run: pd.DataFrame,
    dataset: Any,
    level: str,
    *,
    relevance_threshold: float,
    min_alignment: float,
    allow_misaligned: bool,
) -> tuple[pd.DataFrame, pd.DataFrame, Any]:
    """A variant's run and the dataset's annotations at the configured ``level``, with the run's alignment
    report, checked (a misaligned run fails loudly here, before any metric)."""
    run, annotations = apply_level(
        run, dataset.annotations, level, spans=dataset.spans, corpus=dataset.corpus
    )
    report = alignment_report(run, annotations, relevance_threshold=relevance_threshold)
    check_alignment(report, min_fraction=min_alignment, allow_misaligned=allow_misaligned)
    return run, annotations, report


def with_grades(run: pd.DataFrame, annotations: pd.DataFrame) -> pd.DataFrame:
    """The run table with each hit's judgment ``grade`` at the run's level (NaN: nobody judged the hit)."""
    if "grade" not in annotations or run.empty:
        return run.assign(grade=float("nan"))
    grades = annotations.groupby(["query_id", "key"], sort=False)["grade"].max().rename("grade")
    joined = run.drop(columns=["grade"], errors="ignore").join(grades, on=["query_id", "key"])
    return joined.astype({"grade": float})
