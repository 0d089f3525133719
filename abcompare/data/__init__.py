"""Data layer: query sets, annotations, corpora and runs, their validation, annotation levels, alignment."""

from __future__ import annotations

from abcompare.data.annotations import read_annotations, read_spans, write_trec_qrels
from abcompare.data.runs import hits_from_run_frame, read_run, run_frame_from_hits, stable_keys, write_run

__all__ = [
    "hits_from_run_frame",
    "read_annotations",
    "read_run",
    "read_spans",
    "run_frame_from_hits",
    "stable_keys",
    "write_run",
    "write_trec_qrels",
]
