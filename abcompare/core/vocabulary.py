"""The names a comparison speaks in: tests, corrections, roles and verdicts, each spelled here once.

Every stage may import this module (like ``errors`` and ``hits``); it imports only ``abcompare.core.errors``.
The config's choices, the per-query and statistics tables, the console, MLflow and the sentences all use
these names, so a new measure, test, correction or verdict is added in one place.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from abcompare.core.errors import ConfigError

# ---------------------------------------------------------------------------------------------- measures
MEASURES: tuple[str, ...] = ("precision", "recall", "f1", "mrr", "ndcg")
"""The per-query measures every convention reports and a comparison tests, in column order."""

JUDGED_MEASURE = "judged"
"""The share of the top k that has a judgment of any grade (``judged@k``): a diagnostic, never tested."""

COUNT_MEASURE = "true_positive_count"
"""The one count that depends on the cutoff (``true_positive_count@k``)."""

COUNT_COLUMNS: tuple[str, ...] = ("retrieved_count", "relevant_count", "judged_count")
"""Counts that do not depend on the cutoff."""

_NAME = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*?)\s*(?:@|_at_)\s*(\d+)\s*$")


@dataclass(frozen=True, order=True)
class Metric:
    """A measure at a cutoff, with its canonical name: ``str(Metric("ndcg", 10)) == "ndcg@10"``.

    ``@`` lives everywhere inside abcompare; MLflow does not allow it, so keys there are ``ndcg_at_10``
    (:attr:`mlflow_key`). :meth:`parse` reads both forms, in any letter case.

    >>> Metric.parse("nDCG@10"), Metric.parse("recall_at_5").mlflow_key
    (Metric(measure='ndcg', k=10), 'recall_at_5')
    """

    measure: str
    k: int

    def __post_init__(self) -> None:
        measure = str(self.measure).strip().lower()
        if measure not in (*MEASURES, JUDGED_MEASURE, COUNT_MEASURE):
            raise ConfigError(
                f"unknown measure {measure!r}", field="metrics", hint=f"use one of {', '.join(MEASURES)}"
            )
        object.__setattr__(self, "measure", measure)
        object.__setattr__(self, "k", cutoff(self.k))

    def __str__(self) -> str:
        return f"{self.measure}@{self.k}"

    @property
    def mlflow_key(self) -> str:
        return f"{self.measure}_at_{self.k}"

    @classmethod
    def parse(cls, name: str) -> Metric:
        match = _NAME.match(name) if isinstance(name, str) else None
        if match is None:
            raise ConfigError(
                f"not a metric name: {name!r}", field="metrics", hint="write it as measure@k, e.g. ndcg@10"
            )
        return cls(match.group(1), int(match.group(2)))


def metric_name(measure: str, k: int) -> str:
    """The canonical name of a measure at cutoff ``k``: ``metric_name("ndcg", 10) == "ndcg@10"``."""
    return str(Metric(measure, k))


def parse_metric(name: str) -> tuple[str, int]:
    """``"ndcg@10" -> ("ndcg", 10)``; also accepts the MLflow form ``ndcg_at_10`` and any letter case."""
    metric = Metric.parse(name)
    return metric.measure, metric.k


def not_computed(metric: str, measures: Sequence[str], cutoffs: Sequence[int]) -> str | None:
    """Why ``metric`` is not one of the computed metrics (``measures`` at ``cutoffs``) and what to add, or
    None: the one rule for every metric a config names (the primary metric, a sweep's ``select.metric``)."""
    measure, k = parse_metric(metric)
    missing = [f"{measure} to evaluation.metrics"] * (measure not in measures)
    missing += [f"{k} to evaluation.cutoffs"] * (k not in cutoffs)
    if not missing:
        return None
    return (
        f"{metric!r} is not computed (metrics {list(measures)}, cutoffs {sorted(set(cutoffs))}): "
        f"add {' and '.join(missing)}, or name a computed metric"
    )


def mlflow_key(name: str) -> str:
    """A name in MLflow's key spelling, the one rule for metric and param keys: ``@`` is not allowed
    there (``ndcg@10 -> ndcg_at_10``), and any other character MLflow rejects becomes ``_``."""
    return re.sub(r"[^0-9A-Za-z_\-. /]", "_", name.replace("@", "_at_"))


def cutoff(value: object) -> int:
    """``value`` as a positive int, or a ``ConfigError`` on the field ``k``."""
    try:
        if isinstance(value, bool):
            raise TypeError
        k = operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        k = 0
    if k <= 0:
        raise ConfigError(f"cutoff must be a positive integer, got {value!r}", field="k", hint="e.g. k=10")
    return k


def normalise_cutoffs(k: int | Iterable[int]) -> tuple[int, ...]:
    """The cutoffs as a sorted tuple of distinct positive ints; a bad one is a ``ConfigError`` on ``k``."""
    values = tuple(k) if isinstance(k, Iterable) and not isinstance(k, str) else (k,)
    if not values:
        raise ConfigError("no cutoff given", field="k", hint="give at least one k, e.g. k=(1, 5, 10)")
    return tuple(sorted({cutoff(value) for value in values}))


# ---------------------------------------------------------------------------------------------- tests
T_TEST = "t"
PERMUTATION = "permutation"
BOOTSTRAP = "bootstrap"
WILCOXON = "wilcoxon"
#: The paired tests, by the suffix of their p-value column (``p_t``, ``p_permutation``, ...).
TESTS: tuple[str, ...] = (T_TEST, PERMUTATION, BOOTSTRAP, WILCOXON)
#: Other spellings users write for a test.
TEST_ALIASES: dict[str, str] = {
    "ttest": T_TEST,
    "t-test": T_TEST,
    "sign-flip": PERMUTATION,
    "randomization": PERMUTATION,
}

#: Wilcoxon's policies for queries whose score did not change (zero differences).
ZERO_METHODS: tuple[str, ...] = ("pratt", "wilcox", "zsplit")

# ---------------------------------------------------------------------------------------------- corrections
HOLM = "holm"
BH = "bh"
MAXT = "maxt"
NO_CORRECTION = "none"
#: Multiple-comparison corrections, by their canonical name.
CORRECTION_NAMES: tuple[str, ...] = (HOLM, BH, MAXT, NO_CORRECTION)
#: Accepted spellings of each correction.
CORRECTIONS: dict[str, str] = {
    HOLM: HOLM,
    BH: BH,
    "fdr_bh": BH,
    "benjamini-hochberg": BH,
    MAXT: MAXT,
    "max-t": MAXT,
    "westfall-young": MAXT,
    NO_CORRECTION: NO_CORRECTION,
}
#: How a correction is named in a sentence ("after max-T correction").
CORRECTION_LABELS: dict[str, str] = {
    HOLM: "Holm",
    BH: "Benjamini-Hochberg",
    MAXT: "max-T",
    NO_CORRECTION: "no",
}

# ---------------------------------------------------------------------------------------------- variants
#: The name of the variant every treatment is compared with (the config's ``control:`` section, a run's
#: role tag, the key of its per-query table): one name, so no module spells it.
CONTROL = "control"

# ---------------------------------------------------------------------------------------------- roles
PRIMARY = "primary"
SECONDARY = "secondary"
#: A metric's role in a comparison: the declared primary metric decides the verdict, the others inform.
ROLES: tuple[str, ...] = (PRIMARY, SECONDARY)

# ---------------------------------------------------------------------------------------------- verdicts
BETTER = "better"
WORSE = "worse"
NO_DIFFERENCE = "no significant difference"
INCONCLUSIVE = "inconclusive"
VERDICTS: tuple[str, ...] = (BETTER, WORSE, NO_DIFFERENCE, INCONCLUSIVE)
#: The verdicts that say the treatment differs from the control (what the report stars and colours).
SIGNIFICANT: tuple[str, ...] = (BETTER, WORSE)
#: A verdict as a number (MLflow metrics are numbers): +1 better, -1 worse, 0 neither.
VERDICT_CODE: dict[str, int] = {BETTER: 1, WORSE: -1, NO_DIFFERENCE: 0, INCONCLUSIVE: 0}

#: The verdicts of the one-sided non-inferiority test (``significance.non_inferiority_margin``): the
#: treatment is shown not to be worse than the control by more than the margin, or it is not shown.
NON_INFERIOR = "non-inferior"
NOT_SHOWN_NON_INFERIOR = "not shown non-inferior"
NON_INFERIORITY_VERDICTS: tuple[str, ...] = (NON_INFERIOR, NOT_SHOWN_NON_INFERIOR)
#: A non-inferiority verdict as a number (an MLflow metric): 1 non-inferior, 0 not shown.
NON_INFERIORITY_CODE: dict[str, int] = {NON_INFERIOR: 1, NOT_SHOWN_NON_INFERIOR: 0}

# ---------------------------------------------------------------------------------------------- metrics
#: The measure and cutoff the primary metric defaults to.
DEFAULT_PRIMARY_MEASURE = "ndcg"
DEFAULT_PRIMARY_CUTOFF = 10


def _split(metric: str) -> tuple[str, int | None]:
    """``"ndcg@10" -> ("ndcg", 10)`` by :class:`Metric`'s one grammar of names; a name without a cutoff
    gives ``(name, None)`` (here, unlike :meth:`Metric.parse`, such a name is not an error)."""
    match = _NAME.match(str(metric))
    return (match.group(1).lower(), int(match.group(2))) if match else (str(metric), None)


def default_primary_metric(metrics: Sequence[str]) -> str:
    """The primary metric when none is declared: ndcg@10 if compared, else nDCG at the cutoff nearest 10,
    else the first metric's measure at the cutoff nearest 10 (the smaller cutoff on a tie).

    ``metrics`` are the compared ``measure@k`` names in config order (measure by measure).
    """
    if not metrics:
        raise ValueError("no metrics to choose a primary metric from")
    parsed = [_split(m) for m in metrics]
    measures = [measure for measure, _ in parsed]
    measure = DEFAULT_PRIMARY_MEASURE if DEFAULT_PRIMARY_MEASURE in measures else measures[0]
    cutoffs = [
        (abs(k - DEFAULT_PRIMARY_CUTOFF), k, name)
        for (m, k), name in zip(parsed, metrics, strict=True)
        if m == measure and k is not None
    ]
    if not cutoffs:
        return str(metrics[measures.index(measure)])
    return min(cutoffs)[2]


# ---------------------------------------------------------------------------------------------- wording
def relevance_mark(grade: float | None, relevance_threshold: float) -> str:
    """How a hit is marked where people read hit lists (the notebook, ``report.html``): ``✓`` annotated
    relevant (grade at the threshold or above), ``○`` judged not relevant, ``""`` not judged (no grade)."""
    if grade is None or grade != grade:  # None or NaN: nobody judged the hit
        return ""
    return "✓" if float(grade) >= relevance_threshold else "○"


def plural(count: int, noun: str, plural_form: str | None = None) -> str:
    """``1 query``, ``2 queries``, ``0 queries``, ``4,009 hits``: a count with its noun in the right number,
    its thousands separated (the one way a count of things is written)."""
    if count == 1:
        return f"{count} {noun}"
    if plural_form is None:
        plural_form = noun[:-1] + "ies" if noun.endswith("y") and noun[-2:-1] not in "aeiou" else noun + "s"
    return f"{count:,} {plural_form}"


# ------------------------------------------------------------------------------------ relevance judge
#: The relevance prompts a judge can be asked with, newest last (the texts live in abcompare.judging.prompt).
JUDGE_PROMPT_VERSIONS: tuple[str, ...] = ("umbrela-0.1",)
JUDGE_PROVIDERS: tuple[str, ...] = ("transformers", "openai", "python", "file")


# ------------------------------------------------------------------------------------------------ answers
#: The per-query answer metrics (docs/answers.md), in the order tables show them; the first two need a judge.
ANSWER_METRICS: tuple[str, ...] = (
    "faithfulness",
    "answer_relevance",
    "citation_precision",
    "citation_recall",
)
