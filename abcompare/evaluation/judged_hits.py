"""What every metric is computed from: for each judged query, where its judged hits stand in its list.

Both ways into the evaluator (the general path over any run table, and the fast path over pytrec_eval's
``{query: {key: score}}`` mappings) produce this; the metrics are then one vectorised computation.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class JudgedHits:
    """Judged queries and the positions of their judged hits.

    ``query_ids`` are the evaluated queries (output order); ``best_pair``/``best_grade`` the judgments, as
    ``query code * n_ids + id code`` (ascending) and the best grade of each; ``retrieved`` the length of
    each query's list; ``query``/``position``/``grade`` one entry per judged hit, in (query, position)
    order; ``repeated_queries`` how many lists repeat a key.
    """

    query_ids: np.ndarray
    n_ids: int
    best_pair: np.ndarray
    best_grade: np.ndarray
    retrieved: np.ndarray
    query: np.ndarray
    position: np.ndarray
    grade: np.ndarray
    repeated_queries: int
