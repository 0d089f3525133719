"""The bounds abcompare puts on the numbers it reads, in one place: beyond them a value is a located error,
never a silent wrap-around (a grade of 1e30 cast to int64 turns negative) or an allocation of gigabytes."""

from __future__ import annotations

#: Relevance grades are integers in the 32-bit range (trec_eval reads them as C ints; real scales are 0-4).
MIN_GRADE = -(2**31)
MAX_GRADE = 2**31 - 1
#: Character offsets, ranks, chunk indexes and page numbers: integers that float64 still holds exactly.
MAX_INDEX = 2**53
#: Deepest nesting of a JSON record (queries, corpus, spans, annotations, runs); real records nest two levels.
MAX_JSON_DEPTH = 64
