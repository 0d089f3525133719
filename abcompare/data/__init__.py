"""Data layer: query sets, annotations, corpora and runs, their validation, annotation levels, alignment."""

from __future__ import annotations

from abcompare.data.alignment import AlignmentReport, alignment_report, check_alignment
from abcompare.data.annotations import read_annotations, read_spans, write_trec_qrels
from abcompare.data.beir import load_beir
from abcompare.data.corpus import read_corpus
from abcompare.data.dataset import Dataset, assemble
from abcompare.data.levels import LEVELS, apply_level
from abcompare.data.queries import read_queries
from abcompare.data.runs import hits_from_run_frame, read_run, run_frame_from_hits, stable_keys, write_run
from abcompare.data.subset import common_query_ids, restrict_to_queries

__all__ = [
    "LEVELS",
    "AlignmentReport",
    "Dataset",
    "alignment_report",
    "apply_level",
    "assemble",
    "check_alignment",
    "common_query_ids",
    "hits_from_run_frame",
    "load_beir",
    "read_annotations",
    "read_corpus",
    "read_queries",
    "read_run",
    "read_spans",
    "restrict_to_queries",
    "run_frame_from_hits",
    "stable_keys",
    "write_run",
    "write_trec_qrels",
]
