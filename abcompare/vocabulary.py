"""The names a comparison speaks in: tests, corrections, roles and verdicts, each spelled here once.

Every stage may import this module (like ``errors`` and ``hits``); it imports nothing from abcompare.
The config's choices, the statistics table's values, the console, MLflow and the sentences all use these
names, so a new test, correction or verdict is added in one place.
"""

from __future__ import annotations

from collections.abc import Sequence

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
#: A verdict as a number (MLflow metrics are numbers): +1 better, -1 worse, 0 neither.
VERDICT_CODE: dict[str, int] = {BETTER: 1, WORSE: -1, NO_DIFFERENCE: 0, INCONCLUSIVE: 0}

# ---------------------------------------------------------------------------------------------- metrics
#: The measure and cutoff the primary metric defaults to.
DEFAULT_PRIMARY_MEASURE = "ndcg"
DEFAULT_PRIMARY_CUTOFF = 10


def _split(metric: str) -> tuple[str, int | None]:
    """``"ndcg@10" -> ("ndcg", 10)``; a name without a numeric cutoff gives ``(name, None)``."""
    measure, at, k = str(metric).rpartition("@")
    return (measure, int(k)) if at and k.isdigit() else (str(metric), None)


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
