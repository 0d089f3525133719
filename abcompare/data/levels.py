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
import pyarrow as pa

from abcompare.core.codes import encode, encode_grouped, lookup
from abcompare.core.errors import AbcompareWarning, DataError
from abcompare.core.ranking import repeated_within_queries
from abcompare.data.alignment import (
    alignment_report,
    check_alignment,
    document_ids,
    fraction_in_run,
    is_in,
    strings,
)
from abcompare.data.dataset import Dataset

__all__ = ["LEVELS", "apply_level", "check_run_alignment", "document_ids", "span_key"]

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
    keys = document_ids(run_df)
    query_codes, _ = encode_grouped(strings(run_df["query_id"].astype("str")))
    key_codes, labels = encode(strings(keys))
    order = np.lexsort((run_df["rank"].to_numpy(), query_codes))
    if len(order) and min(query_codes.min(), key_codes.min()) >= 0:  # queries ascending: sorted per query
        rows = order[~repeated_within_queries(query_codes[order], key_codes[order])]
    else:  # a missing id (code -1): one hash of the pairs
        pair = query_codes[order] * (len(labels) + 1) + key_codes[order]
        rows = order[~pd.Series(pair).duplicated(keep="first").to_numpy()]
    unchanged = len(rows) == len(run_df) and bool((rows == np.arange(len(rows))).all())
    frame = run_df.copy(deep=False) if unchanged else run_df.iloc[rows].reset_index(drop=True)
    frame["key"] = keys.array if unchanged else keys.array.take(rows)
    if "id" in frame:
        frame["id"] = frame["key"]
    codes = query_codes[rows]  # grouped: a query's hits are neighbours after the sort
    starts = np.flatnonzero(np.concatenate(([True], codes[1:] != codes[:-1]))) if len(codes) else codes
    frame["rank"] = np.arange(len(codes)) - np.repeat(starts, np.diff(np.append(starts, len(codes)))) + 1
    return frame


def span_key(document_id: str, start: int, end: int) -> str:
    """The annotation key of an evidence span no hit overlapped."""
    return f"{document_id}@{start}-{end}"


def _offsets(run_df: pd.DataFrame, corpus: pd.DataFrame | None) -> pd.DataFrame:
    """query_id, key, document, start, end for every hit whose character offsets are known."""
    hits = pd.DataFrame(
        {
            "query_id": run_df["query_id"].astype("str").array,  # Arrow-backed: no Python string per row
            "key": run_df["key"].astype("str").array,
            "document_id": document_ids(run_df).array,
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
        for i in np.flatnonzero(unknown):  # only hits without offsets: located in their document's text
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

    Columns ``query_id, key, grade, span_document`` (the last set only on missed-span rows). Rows: the
    relevant hits, then the other hits of the evidence's queries, then the missed spans (each (query,
    key) once, in the order first met), ordered by the evidence's first mention of their query. Joined
    on integer codes of the ids (each hashed once).
    """
    hits = _offsets(run_df, corpus)
    n_hits = len(hits)
    evidence_query, evidence_document = spans["query_id"].astype("str"), spans["document_id"].astype("str")
    query, query_labels = encode(pa.concat_arrays([strings(hits["query_id"]), strings(evidence_query)]))
    document, n_documents = encode(
        pa.concat_arrays([strings(hits["document_id"]), strings(evidence_document)])
    )
    grade = np.asarray(spans["grade"] if "grade" in spans else np.ones(len(spans)), dtype=np.int64)
    hit_span = _same_document(query * (len(n_documents) + 1) + document, n_hits)
    hit, span = hit_span
    evidence_start, evidence_end = spans["start"].to_numpy(dtype=float), spans["end"].to_numpy(dtype=float)
    overlap = (hits["start"].to_numpy()[hit] < evidence_end[span]) & (
        evidence_start[span] < hits["end"].to_numpy()[hit]
    )
    hit, span = hit[overlap], span[overlap]

    key, key_labels = encode(strings(hits["key"]))
    hit_query = query[:n_hits]
    in_evidence = np.isin(hit_query, query[n_hits:])
    relevant = _first_pairs(hit_query[hit], key[hit], grade[span], len(key_labels))
    located = _first_pairs(
        hit_query[in_evidence], key[in_evidence], np.zeros(int(in_evidence.sum()), np.int64), len(key_labels)
    )
    elsewhere = ~np.isin(
        located[0] * (len(key_labels) + 1) + located[1], relevant[0] * (len(key_labels) + 1) + relevant[1]
    )
    frames = [
        _annotation_rows(query_labels.take(pa.array(q)), key_labels.take(pa.array(k)), g, None)
        for q, k, g in (relevant, tuple(part[elsewhere] for part in located))
    ]
    if count_missed_spans:
        missed = np.flatnonzero(~np.isin(np.arange(len(spans)), span))
        documents = evidence_document.to_numpy()[missed]
        keys = [
            span_key(d, s, e)
            for d, s, e in zip(
                documents, spans["start"].to_numpy()[missed], spans["end"].to_numpy()[missed], strict=True
            )
        ]
        frames.append(_annotation_rows(evidence_query.to_numpy()[missed], keys, grade[missed], documents))
        # hits' pairs are distinct already: only a missed span's key met twice (or named like a hit) merges
        if frames[-1][["query_id", "key"]].duplicated().any() or (
            len(keys) and is_in(keys, key_labels).any()
        ):
            return _merged_by_evidence_order(pd.concat(frames, ignore_index=True), evidence_query)
    return _by_evidence_order(pd.concat(frames, ignore_index=True), evidence_query)


def _same_document(pair: np.ndarray, n_hits: int) -> tuple[np.ndarray, np.ndarray]:
    """Every (hit, span) of the same query and document: ``pair`` holds the hits' (query, document) codes,
    then the spans'; each hit's spans in their order (an inner join on codes)."""
    hit_pair, span_pair = pair[:n_hits], pair[n_hits:]
    order = np.argsort(span_pair, kind="stable")
    sorted_pair = span_pair[order]
    low, high = (
        np.searchsorted(sorted_pair, hit_pair, "left"),
        np.searchsorted(sorted_pair, hit_pair, "right"),
    )
    counts = high - low
    hit = np.repeat(np.arange(n_hits), counts)
    offset = np.arange(len(hit)) - np.repeat(np.cumsum(counts) - counts, counts)
    return hit, order[low[hit] + offset]


def _first_pairs(
    query: np.ndarray, key: np.ndarray, grade: np.ndarray, n_keys: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each distinct (query, key) once, in the order first met, with its highest grade."""
    pair = query * (n_keys + 1) + key
    distinct, first, inverse = np.unique(pair, return_index=True, return_inverse=True)
    best = np.full(len(distinct), np.iinfo(np.int64).min)
    np.maximum.at(best, inverse, grade)
    order = np.argsort(first, kind="stable")
    return query[first[order]], key[first[order]], best[order]


def _annotation_rows(query: object, key: object, grade: np.ndarray, document: object) -> pd.DataFrame:
    rows = pd.DataFrame(
        {"query_id": pd.array(query, dtype="str"), "key": pd.array(key, dtype="str"), "grade": grade}
    )
    rows["span_document"] = pd.Series(pd.NA if document is None else document, index=rows.index, dtype="str")
    return rows


def _merged_by_evidence_order(out: pd.DataFrame, evidence_query: pd.Series) -> pd.DataFrame:
    """Each (query, key) once (highest grade, first span document), stably ordered by the evidence's first
    mention of its query."""
    query, query_labels = encode(strings(out["query_id"]))
    key, key_labels = encode(strings(out["key"]))
    pair = query * (len(key_labels) + 1) + key
    distinct, first, inverse = np.unique(pair, return_index=True, return_inverse=True)
    best = np.full(len(distinct), np.iinfo(np.int64).min)
    np.maximum.at(best, inverse, out["grade"].to_numpy(dtype=np.int64))
    span_document = out["span_document"]
    known = span_document.notna().to_numpy()
    first_known = np.full(len(distinct), len(out))
    np.minimum.at(first_known, inverse[known], np.flatnonzero(known))
    keep = np.argsort(first, kind="stable")
    rows = first[keep]
    merged = pd.DataFrame(
        {
            "query_id": out["query_id"].array.take(rows),
            "key": out["key"].array.take(rows),
            "grade": best[keep],
        }
    )
    document = np.where(first_known[keep] < len(out), first_known[keep], 0)
    merged["span_document"] = span_document.array.take(document)
    merged.loc[first_known[keep] >= len(out), "span_document"] = pd.NA
    return _by_evidence_order(merged, evidence_query)


def _by_evidence_order(rows: pd.DataFrame, evidence_query: pd.Series) -> pd.DataFrame:
    """The rows stably ordered by the evidence's first mention of their query, in the annotations' dtypes."""
    order = pd.Index(pd.unique(evidence_query))
    rows = rows.iloc[np.argsort(order.get_indexer(rows["query_id"]), kind="stable")].reset_index(drop=True)
    return rows.astype({"query_id": "str", "key": "str", "grade": np.int64, "span_document": "str"})


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


def check_run_alignment(
    run: pd.DataFrame,
    dataset: Dataset,
    level: str,
    *,
    relevance_threshold: float,
    min_alignment: float,
    allow_misaligned: bool,
) -> None:
    """``judged_at_level``'s check alone, for a check before the comparison starts: at chunk and document
    level the fraction needs only the run's distinct keys at the level, so the collapse and the full report
    (with its diagnosis) are built only when the fraction fails (then that raises, as the run would)."""
    annotations = dataset.annotations
    if level in ("chunk", "document") and annotations is not None and "span_document" not in annotations:
        keys = document_ids(run) if level == "document" else run["key"].astype("str")
        fraction = fraction_in_run(
            run["query_id"].astype("str"), keys, annotations, relevance_threshold=relevance_threshold
        )
        if not np.isnan(fraction) and fraction >= min_alignment:
            return
    options = {"min_alignment": min_alignment, "allow_misaligned": allow_misaligned}
    judged_at_level(run, dataset, level, relevance_threshold=relevance_threshold, **options)


def with_grades(run: pd.DataFrame, annotations: pd.DataFrame) -> pd.DataFrame:
    """The run table with each hit's judgment ``grade`` at the run's level (NaN: nobody judged the hit): the
    highest grade of its (query, key), looked up by integer codes (the judgments' ids hashed once)."""
    if "grade" not in annotations or run.empty:
        return run.assign(grade=float("nan"))
    ann_query, query_labels = encode(strings(annotations["query_id"].astype("str")))
    ann_key, key_labels = encode(strings(annotations["key"].astype("str")))
    distinct, inverse = np.unique(ann_query * (len(key_labels) + 1) + ann_key, return_inverse=True)
    best = np.full(len(distinct), -np.inf)
    np.fmax.at(best, inverse, annotations["grade"].to_numpy(dtype=float, na_value=np.nan))  # NaN skipped
    best[np.isneginf(best)] = np.nan
    query = lookup(strings(run["query_id"].astype("str")), query_labels)
    key = lookup(strings(run["key"].astype("str")), key_labels)
    pair = query * (len(key_labels) + 1) + key
    at = np.minimum(np.searchsorted(distinct, pair), max(len(distinct) - 1, 0))
    found = (query >= 0) & (key >= 0) & (distinct[at] == pair) if len(distinct) else np.zeros(len(run), bool)
    grade = np.where(found, best[at] if len(distinct) else np.nan, np.nan)
    return run.drop(columns=["grade"], errors="ignore").assign(grade=grade)
