"""What the unjudged hits could still do to a comparison: the smallest and largest mean delta of one metric
that the missing judgments allow, and how much each unjudged hit's judgment can move it.

An unjudged hit is a (query, key) in either variant's top k with no judgment of any grade; today it scores as
not relevant (the ``nonrelevant`` policy). Here each one is judged either way: not relevant (grade 0) or
relevant at the top grade ``G`` (the highest grade the judgments use, at least the relevance threshold), so
in the trec convention the nDCG range is the one over {0, G} for every unjudged hit. A hit in both lists is
one judgment that counts in both.

Queries are independent, so the range of the mean is the mean of each query's range. Within a query, with
``m`` of its unjudged hits judged relevant, every measure but MRR is ``(A + a.x) / B(m)`` in each variant
(precision: ``B`` the depth; recall: ``R + m``; F1 ``2 TP / (depth + R + m)``; nDCG: the ideal DCG, which
in both conventions depends on the hits only through ``m``): linear in the judgments ``x`` for a fixed
``m``, so the extreme is the best ``m`` hits by their coefficient, for the best ``m``. MRR's extreme needs
one hit at most (the one that becomes the first relevant hit of one list). The range is therefore exact for
every measure, in both conventions; tests check it against rescoring every assignment with the evaluator.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
import pandas as pd

from abcompare.core.vocabulary import CONTROL
from abcompare.evaluation.batch import evaluation_order
from abcompare.evaluation.convention import Convention, ratio_or_zero
from abcompare.evaluation.gains import discounts
from abcompare.evaluation.measures import parse_metric

__all__ = ["UnjudgedRange", "decisiveness", "unjudged_range", "unjudged_ranges"]


@dataclass(frozen=True)
class _QueryTerms:
    """One query's metric, as a function of the judgments of its unjudged hits (see the module docstring).

    ``linear``: per variant (treatment, control) ``A``, the coefficients ``a`` (one per unjudged hit) and
    ``B(m)`` for m = 0..M; ``first``/``position``: MRR's first relevant position and each hit's position
    (inf: not in that list's top k).
    """

    keys: tuple[str, ...]
    linear: tuple[tuple[float, np.ndarray, np.ndarray], tuple[float, np.ndarray, np.ndarray]] | None = None
    first: tuple[float, float] = (np.inf, np.inf)
    position: tuple[np.ndarray, np.ndarray] = (np.empty(0), np.empty(0))
    cutoff: int = 0

    def delta(self, chosen: np.ndarray) -> np.ndarray:
        """The treatment's minus the control's metric for each row of ``chosen`` (rows x hits, bool: the
        hits judged relevant)."""
        chosen = np.atleast_2d(chosen)
        if self.linear is None:
            return _reciprocal_rank(self, 0, chosen) - _reciprocal_rank(self, 1, chosen)
        m = chosen.sum(axis=1)
        x = chosen.astype(np.float64)
        (a_t, w_t, b_t), (a_c, w_c, b_c) = self.linear
        return ratio_or_zero(a_t + x @ w_t, b_t[m]) - ratio_or_zero(a_c + x @ w_c, b_c[m])

    def summary(self) -> tuple[float, float, float, np.ndarray]:
        """The delta as judged today (every unjudged hit not relevant), the smallest and largest delta over
        every judgment of the unjudged hits (exact), and each hit's delta if it alone were relevant."""
        n = len(self.keys)
        if self.linear is None:  # MRR: no hit, or the one hit that becomes a list's first relevant hit
            values = self.delta(np.vstack([np.zeros((1, n), dtype=bool), np.eye(n, dtype=bool)]))
            return float(values[0]), float(values.min()), float(values.max()), values[1:]
        (a_t, w_t, b_t), (a_c, w_c, b_c) = self.linear
        m = np.arange(n + 1)
        # (m, hits): each hit's weight in the delta when m hits are relevant
        weights = ratio_or_zero(w_t[None, :], b_t[:, None]) - ratio_or_zero(w_c[None, :], b_c[:, None])
        base = ratio_or_zero(np.full(n + 1, a_t), b_t) - ratio_or_zero(np.full(n + 1, a_c), b_c)
        ordered = np.sort(weights, axis=1)
        start = np.zeros((n + 1, 1))
        lowest = np.concatenate((start, np.cumsum(ordered, axis=1)), axis=1)[m, m]
        highest = np.concatenate((start, np.cumsum(ordered[:, ::-1], axis=1)), axis=1)[m, m]
        alone = base[1] + weights[1] if n else np.empty(0)
        return float(base[0]), float((base + lowest).min()), float((base + highest).max()), alone


def _reciprocal_rank(terms: _QueryTerms, side: int, chosen: np.ndarray) -> np.ndarray:
    position = np.where(chosen, terms.position[side][None, :], np.inf)
    first = np.minimum(terms.first[side], position.min(axis=1, initial=np.inf))
    return np.where(first < terms.cutoff, 1.0 / (first + 1.0), 0.0)


@dataclass(frozen=True)
class UnjudgedRange:
    """The range of one metric's mean delta (treatment - control) over every judgment of the unjudged hits.

    ``delta`` is the mean delta as judged today (unjudged = not relevant); ``low``/``high`` the smallest and
    largest the missing judgments allow (exact); ``n_unjudged`` the distinct unjudged (query, key) in either
    top k; ``top_grade`` the grade a relevant judgment is given; ``hits`` one row per unjudged hit
    (``query_id``, ``key``, ``swing``: the change of the mean delta if it alone were judged relevant).
    """

    metric: str
    convention: str
    n_queries: int
    n_unjudged: int
    top_grade: float
    delta: float
    low: float
    high: float
    hits: pd.DataFrame
    _terms: Sequence[_QueryTerms] = field(default=(), repr=False)
    _observed: np.ndarray = field(default_factory=lambda: np.empty(0), repr=False)
    _query_ids: Sequence[str] = field(default=(), repr=False)
    _alone: Sequence[np.ndarray] = field(default=(), repr=False)  # each hit's delta if it alone were relevant

    def fewest_judgments(
        self, target: float, direction: int, *, beyond: bool = False
    ) -> list[tuple[str, str]] | None:
        """The fewest unjudged hits found (greedily) whose judgment as relevant moves the mean delta to
        ``target`` (``beyond``: past it) in ``direction`` (+1: up, -1: down), as ``(query_id, key)`` in the
        order taken (empty: it is there already); None when no judgment can. Each step takes the hit that
        moves the mean furthest that way given the hits of its query already taken, so the set is
        achievable and its size an upper bound on the fewest."""
        n = max(self.n_queries, 1)
        total = float(self._observed.sum())

        def there(mean: float) -> bool:  # past the target by more than rounding, or at it
            return direction * (mean - target) > 1e-12 if beyond else direction * (mean - target) >= 0

        if there(total / n):
            return []
        chosen = [np.zeros(len(t.keys), dtype=bool) for t in self._terms]
        current = self._observed.copy()
        version = [0] * len(self._terms)
        heap: list[tuple[float, int, int, int, float]] = []
        for q, alone in enumerate(self._alone):  # the first step of each query: its hits' swings
            moves = direction * (alone - current[q])
            if moves.size and moves.max() > 1e-15:
                best = int(np.argmax(moves))
                heapq.heappush(heap, (-float(moves[best]), q, 0, best, float(alone[best])))
        picked: list[tuple[str, str]] = []
        while heap:
            _, q, seen, i, value = heapq.heappop(heap)
            if seen != version[q]:
                continue  # the query changed since: its fresh best is in the heap
            chosen[q][i] = True
            version[q] += 1
            total += value - current[q]
            current[q] = value
            picked.append((self._query_ids[q], self._terms[q].keys[i]))
            if there(total / n):
                return picked
            _push_best(heap, q, version[q], self._terms[q], chosen[q], current[q], direction)
        return None


def _push_best(
    heap: list[tuple[float, int, int, int, float]],
    q: int,
    version: int,
    terms: _QueryTerms,
    chosen: np.ndarray,
    now: float,
    direction: int,
) -> None:
    """Push the query's best next hit (the largest move in ``direction``), if one moves it that way."""
    free = np.flatnonzero(~chosen)
    if free.size == 0:
        return
    trials = np.repeat(chosen[None, :], free.size, axis=0)
    trials[np.arange(free.size), free] = True
    values = terms.delta(trials)
    moves = direction * (values - now)
    best = int(np.argmax(moves))
    if moves[best] > 1e-15:
        heapq.heappush(heap, (-float(moves[best]), q, version, int(free[best]), float(values[best])))


def unjudged_range(
    control_run: pd.DataFrame,
    treatment_run: pd.DataFrame,
    annotations: pd.DataFrame,
    query_ids: Sequence[str],
    *,
    metric: str,
    convention: str,
    relevance_threshold: float = 1,
) -> UnjudgedRange:
    """The exact range of ``metric``'s mean delta over every judgment of the unjudged hits in either top k.

    ``control_run``/``treatment_run`` are run tables at the annotation level (``query_id, key`` and
    ``rank`` or ``score``), read in the order the evaluator reads them; ``annotations`` has ``query_id,
    key, grade``; ``query_ids`` is the comparison's query set (the mean is over it). The ``nonrelevant``
    policy is assumed (an unjudged hit scores as not relevant today).
    """
    ranges = unjudged_ranges(
        control_run, {"treatment": treatment_run}, annotations, query_ids, metric=metric,
        convention=convention, relevance_threshold=relevance_threshold,
    )  # fmt: skip
    return ranges["treatment"]


def unjudged_ranges(
    control_run: pd.DataFrame,
    treatment_runs: Mapping[str, pd.DataFrame],
    annotations: pd.DataFrame,
    query_ids: Sequence[str],
    *,
    metric: str,
    convention: str,
    relevance_threshold: float = 1,
    unjudged: str = "nonrelevant",
) -> dict[str, UnjudgedRange]:
    """:func:`unjudged_range` of every treatment against the control (the control's lists read once);
    empty under the ``condensed`` policy, where an unjudged hit is removed, not scored."""
    if unjudged != "nonrelevant":
        return {}
    measure, k = parse_metric(metric)
    judged = annotations.assign(
        query_id=annotations["query_id"].astype("str"), key=annotations["key"].astype("str").str.strip()
    )
    best = judged.groupby(["query_id", "key"], sort=False)["grade"].max().reset_index()
    grades = pd.to_numeric(judged["grade"], errors="coerce")
    top_grade = float(max(grades.max() if len(grades) else relevance_threshold, relevance_threshold))
    graded: dict[str, dict[str, float]] = {}
    values = zip(
        best["query_id"].tolist(), best["key"].tolist(), best["grade"].astype(float).tolist(), strict=True
    )
    for q, key, grade in values:
        graded.setdefault(q, {})[key] = grade
    control = _top_lists(control_run, convention, k)
    queries = [str(q) for q in query_ids]
    out = {}
    for name, run in treatment_runs.items():
        treatment = _top_lists(run, convention, k)
        terms = [
            _query_terms(
                measure,
                k,
                convention,
                relevance_threshold,
                top_grade,
                graded.get(q, {}),
                treatment.get(q, ([], 0)),
                control.get(q, ([], 0)),
            )  # fmt: skip
            for q in queries
        ]
        out[name] = _range(metric, convention, top_grade, queries, terms)
    return out


def decisiveness(
    runs: Mapping[str, pd.DataFrame],
    annotations: pd.DataFrame,
    *,
    metric: str,
    convention: str,
    relevance_threshold: float = 1,
    unjudged: str = "nonrelevant",
) -> pd.DataFrame:
    """How far each unjudged hit's judgment can move a treatment's mean delta on ``metric``: ``query_id,
    key, decisiveness`` (the largest |swing| over the treatments against ``runs["control"]``), over the
    queries with a judgment (the comparison's query set). Empty without a treatment or judgments."""
    queries = list(dict.fromkeys(annotations["query_id"].astype("str")))
    treatments = {name: run for name, run in runs.items() if name != CONTROL}
    ranges = {}
    if CONTROL in runs and treatments and queries:
        ranges = unjudged_ranges(
            runs[CONTROL], treatments, annotations, queries, metric=metric, convention=convention,
            relevance_threshold=relevance_threshold, unjudged=unjudged,
        )  # fmt: skip
    frames = [r.hits.assign(decisiveness=r.hits["swing"].abs()) for r in ranges.values()]
    if not frames:
        return pd.DataFrame(columns=["query_id", "key", "decisiveness"])
    table = pd.concat(frames, ignore_index=True)
    return table.groupby(["query_id", "key"], sort=False, as_index=False)["decisiveness"].max()


def _range(
    metric: str, convention: str, top_grade: float, queries: list[str], terms: list[_QueryTerms]
) -> UnjudgedRange:
    n = max(len(terms), 1)
    summaries = _summaries(terms)
    observed = np.array([summary[0] for summary in summaries])
    bounds = np.array([summary[1:3] for summary in summaries]).reshape(-1, 2)
    query_of, keys, swing = [], [], []
    for q, t, summary in zip(queries, terms, summaries, strict=True):
        if t.keys:
            query_of += [q] * len(t.keys)
            keys += list(t.keys)
            swing.extend((summary[3] - summary[0]) / n)
    hits = pd.DataFrame({"query_id": query_of, "key": keys, "swing": np.asarray(swing, dtype=np.float64)})
    return UnjudgedRange(
        metric=metric, convention=convention, n_queries=len(terms), n_unjudged=len(keys),
        top_grade=top_grade, delta=float(observed.sum() / n), low=float(bounds[:, 0].sum() / n),
        high=float(bounds[:, 1].sum() / n), hits=hits, _terms=terms, _observed=observed,
        _query_ids=queries, _alone=[summary[3] for summary in summaries],
    )  # fmt: skip


def _summaries(terms: Sequence[_QueryTerms]) -> list[tuple[float, float, float, np.ndarray]]:
    """Each query's :meth:`_QueryTerms.summary`, the linear measures' computed together for the queries with
    the same number of unjudged hits (the same arithmetic on each query's row, so the same numbers): at
    10k+ queries the per-query numpy calls were most of the range's time."""
    out: list[tuple[float, float, float, np.ndarray] | None] = [None] * len(terms)
    groups: dict[int, list[int]] = {}
    for i, t in enumerate(terms):
        if t.linear is None:
            out[i] = t.summary()
        else:
            groups.setdefault(len(t.keys), []).append(i)
    for n, members in groups.items():
        for i, summary in zip(members, _linear_summaries([terms[i] for i in members], n), strict=True):
            out[i] = summary
    return out  # type: ignore[return-value]


def _linear_summaries(terms: list[_QueryTerms], n: int) -> list[tuple[float, float, float, np.ndarray]]:
    """:meth:`_QueryTerms.summary` of queries with ``n`` unjudged hits each, one row per query."""
    sides = [[t.linear[side] for t in terms] for side in (0, 1)]  # type: ignore[index]
    (a_t, w_t, b_t), (a_c, w_c, b_c) = (
        (np.array([a for a, _, _ in side]), np.array([w for _, w, _ in side]).reshape(len(terms), n),
         np.array([b for _, _, b in side]).reshape(len(terms), n + 1))
        for side in sides
    )  # fmt: skip
    m = np.arange(n + 1)
    # (query, m, hits): each hit's weight in the delta when m hits are relevant
    weights = ratio_or_zero(w_t[:, None, :], b_t[:, :, None]) - ratio_or_zero(
        w_c[:, None, :], b_c[:, :, None]
    )
    base = ratio_or_zero(np.repeat(a_t[:, None], n + 1, axis=1), b_t) - ratio_or_zero(
        np.repeat(a_c[:, None], n + 1, axis=1), b_c
    )
    ordered = np.sort(weights, axis=2)
    start = np.zeros((len(terms), n + 1, 1))
    lowest = np.concatenate((start, np.cumsum(ordered, axis=2)), axis=2)[:, m, m]
    highest = np.concatenate((start, np.cumsum(ordered[:, :, ::-1], axis=2)), axis=2)[:, m, m]
    low, high = (base + lowest).min(axis=1), (base + highest).max(axis=1)
    alone = base[:, 1, None] + weights[:, 1, :] if n else np.empty((len(terms), 0))
    return [(float(base[q, 0]), float(low[q]), float(high[q]), alone[q]) for q in range(len(terms))]


def _top_lists(run: pd.DataFrame, convention: str, k: int) -> dict[str, tuple[list[str], int]]:
    """Each query's keys in the evaluator's order (stripped), cut at ``k``, and the list's full length."""
    if run.empty:
        return {}
    order, query, labels = evaluation_order(run, convention)  # each query's rows one block, in order
    starts = np.flatnonzero(np.concatenate(([True], query[1:] != query[:-1])))
    lengths = np.diff(np.append(starts, query.size))
    block_query = query[starts]
    shown = np.minimum(lengths, k)  # only each list's top k becomes Python strings, not the whole run
    rows = np.repeat(starts, shown) + (np.arange(shown.sum()) - np.repeat(np.cumsum(shown) - shown, shown))
    keys = run["key"].iloc[order[rows]].astype("str").str.strip().tolist()
    bounds = np.concatenate(([0], np.cumsum(shown))).tolist()
    names = labels.to_pylist()
    return {
        str(names[q]): (keys[low:high], int(length))
        for q, low, high, length in zip(
            block_query.tolist(), bounds[:-1], bounds[1:], lengths.tolist(), strict=True
        )
    }


def _query_terms(
    measure: str,
    k: int,
    convention: str,
    threshold: float,
    top_grade: float,
    graded: dict[str, float],
    treatment: tuple[list[str], int],
    control: tuple[list[str], int],
) -> _QueryTerms:
    """One query's :class:`_QueryTerms` for ``measure@k`` from its judgments and both variants' top k."""
    keys = tuple(dict.fromkeys(key for key in treatment[0] + control[0] if key not in graded))
    index = {key: i for i, key in enumerate(keys)}
    n = len(keys)
    relevant = sum(1 for grade in graded.values() if grade >= threshold)
    rules = Convention.named(convention)
    new_gain = rules.unjudged_gain(top_grade)
    positive = sorted((g for g in graded.values() if g > 0), reverse=True)
    sides = []
    for hits, retrieved in (treatment, control):
        depth = int(rules.depth(k, retrieved))
        count, gain, position = np.zeros(n), np.zeros(n), np.full(n, np.inf)
        true_positives, dcg, first = 0.0, 0.0, np.inf
        table = discounts(max(len(hits), 1))
        for p, key in enumerate(hits):
            grade = graded.get(key)
            if grade is None:
                i = index[key]
                count[i] += 1
                gain[i] += new_gain * table[p]
                position[i] = min(position[i], p)
                continue
            if grade >= threshold:
                true_positives += 1
                first = min(first, p)
            if rules.binary and grade >= threshold:
                dcg += table[p]
            elif not rules.binary and grade > 0:
                dcg += grade * table[p]
        sides.append((depth, count, gain, position, true_positives, dcg, first))
    if measure == "mrr":
        return _QueryTerms(keys, None, (sides[0][6], sides[1][6]), (sides[0][3], sides[1][3]), k)
    m = np.arange(n + 1)
    linear = []
    for depth, count, gain, _, true_positives, dcg, _ in sides:
        if measure == "precision":
            linear.append((true_positives, count, np.full(n + 1, float(depth))))
        elif measure == "recall":
            linear.append((true_positives, count, (relevant + m).astype(float)))
        elif measure == "f1":
            linear.append((2.0 * true_positives, 2.0 * count, (depth + relevant + m).astype(float)))
        else:  # ndcg: the ideal depends on the hits only through how many become relevant
            ideal = _ideal_with_more(convention, n, k, depth, relevant, tuple(positive), top_grade)
            linear.append((dcg, gain, ideal))
    return _QueryTerms(keys, (linear[0], linear[1]), cutoff=k)


@lru_cache(maxsize=1 << 16)
def _ideal_with_more(
    convention: str, n: int, k: int, depth: int, relevant: int, positive: tuple[float, ...], top_grade: float
) -> np.ndarray:
    """:meth:`Convention.ideal_dcg_with_more` for ``m = 0..n``, computed once per distinct query shape:
    queries share few (unjudged count, depth, judged grades) shapes, and the Python loop per query was
    most of the range's time at 10k+ queries. Read-only, as it is shared."""
    ideal = Convention.named(convention).ideal_dcg_with_more(
        np.arange(n + 1), k, depth=depth, relevant=relevant, positive=list(positive), top_grade=top_grade
    )
    ideal.flags.writeable = False
    return ideal
