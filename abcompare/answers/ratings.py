"""People's ratings of answers (optional): a JSONL file of ``query_id``, ``variant``, ``rating`` (0-3, the
judge's answer relevance scale), read with every problem located at its line (the lines by the one JSONL
rule, ``abcompare.data._jsonl``); and the judge's agreement with them on the answers both rated (weighted
kappa, Krippendorff's alpha, the confusion table: the judge issue's agreement, resampling whole queries)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

import pandas as pd

from abcompare.answers.errors import AnswerError
from abcompare.answers.scores import ANSWER_RELEVANCE, AnswerScores
from abcompare.data._jsonl import jsonl_records
from abcompare.judging.grades import SCALE
from abcompare.stats.agreement import Agreement, agreement

RATING_COLUMNS = ("query_id", "variant", "rating")
_HINT = "each line is a JSON object with query_id, variant and rating (0-3)"


def read_answer_ratings(path: str | Path, queries: Iterable[str], variants: Iterable[str]) -> pd.DataFrame:
    """The ratings in ``path`` (one row per rated answer); an unknown query or variant, a rating off the 0-3
    scale, or a second rating of the same answer is one located error."""
    path = Path(path)
    known_q, known_v = set(map(str, queries)), set(map(str, variants))
    rows: dict[tuple[str, str], int] = {}
    for number, record in jsonl_records(path, "answer ratings", _HINT):
        if any(c not in record for c in RATING_COLUMNS):
            raise AnswerError(
                "each line is a JSON object with query_id, variant and rating", file=path, line=number
            )
        query_id, variant, rating = str(record["query_id"]), str(record["variant"]), record["rating"]
        if query_id not in known_q:
            raise AnswerError(f"query {query_id!r} is not in the query set", file=path, line=number)
        if variant not in known_v:
            raise AnswerError(
                f"variant {variant!r} is not compared (known: {', '.join(sorted(known_v))})",
                file=path,
                line=number,
            )
        if isinstance(rating, bool) or rating not in SCALE:
            raise AnswerError(f"rating {rating!r} is off the scale 0-3", file=path, line=number)
        if (query_id, variant) in rows:
            again = f"a second rating of variant {variant!r}'s answer to query {query_id!r}"
            raise AnswerError(again, file=path, line=number)
        rows[(query_id, variant)] = int(rating)
    return pd.DataFrame([(q, v, r) for (q, v), r in rows.items()], columns=list(RATING_COLUMNS))


def answer_agreement(
    ratings: pd.DataFrame, scores: Mapping[str, AnswerScores], *, n_resamples: int = 1000, seed: int = 0
) -> tuple[Agreement, int]:
    """The judge's agreement with people on the answers both rated (people's ``rating`` against the judge's
    answer relevance grade), and how many rated answers the judge could not grade (left out, counted)."""
    human, judged, groups, unjudged = [], [], [], 0
    for query_id, variant, rating in ratings[list(RATING_COLUMNS)].itertuples(index=False):
        table = scores[variant].table
        grade = table.at[query_id, ANSWER_RELEVANCE] if query_id in table.index else float("nan")
        if pd.isna(grade):
            unjudged += 1
            continue
        human.append(int(rating))
        judged.append(int(grade))
        groups.append(query_id)
    return agreement(human, judged, groups, n_resamples=n_resamples, seed=seed), unjudged
