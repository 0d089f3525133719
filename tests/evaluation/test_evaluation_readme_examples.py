"""The README's two worked examples ("Metrics and the two conventions"), read out of the README itself and
checked in both conventions through the public API: ``evaluate_run`` and the per-query evaluators; and the
unjudged-hits warning's threshold and example sentence ("Incomplete judgments").

Each expected value is also worked out by hand below, so a README figure that drifts from the arithmetic
fails as surely as code that drifts from the README.
"""

from __future__ import annotations

import math
import re
import warnings

import pytest
from support.readme import README, as_printed, doc_match, doc_section, readme_match

from abcompare import RagEvaluator, RagHit, TrecEvaluator, evaluate_run
from abcompare.evaluation.judgments import JudgedCoverage, judged_gap_warnings

MEASURES = {"P": "precision", "R": "recall", "F1": "f1", "MRR": "mrr", "nDCG": "ndcg"}
NUMBER = r"([0-9]+(?:\.[0-9]+|/[0-9]+)?)"

# hits a, b, c, d, relevant {b, d}, k = 4: two of four hits relevant, both relevant found, first at rank 2;
# DCG = 1/log2(3) + 1/log2(5), ideal DCG = 1 + 1/log2(3)
FIRST_BY_HAND = {
    "precision": 2 / 4,
    "recall": 2 / 2,
    "f1": 2 * 0.5 * 1.0 / (0.5 + 1.0),
    "mrr": 1 / 2,
    "ndcg": (1 / math.log2(3) + 1 / math.log2(5)) / (1 + 1 / math.log2(3)),
}
# hits a, a, b, relevant {a}, k = 10. ai4j counts the repeat: tp 2 over min(10, 3) hits, 2 of 1 relevant,
# DCG 1 + 1/log2(3) over an ideal of min(3, 1) = 1 position. trec counts a once and divides by k.
SECOND_BY_HAND = {
    "ai4j": {"precision": 2 / 3, "recall": 2 / 1, "ndcg": (1 + 1 / math.log2(3)) / 1},
    "trec": {"precision": 1 / 10, "recall": 1 / 1, "ndcg": 1 / 1},
}


def stated(clause: str) -> dict[str, str]:
    """The figures of one clause of the README sentence, ``P 0.5, R 1.0 ... and nDCG 0.6509``, by measure."""
    pairs = re.findall(rf"\b({'|'.join(MEASURES)}) {NUMBER}", clause)
    return {MEASURES[name]: number for name, number in pairs}


def first_example() -> dict[str, str]:
    found = readme_match(
        r"Example: hits `a, b, c, d`, relevant `\{b, d\}`, k = 4 give (.*?) in both conventions\.",
        doc_section("docs/metrics.md", "Metrics and the two conventions"),
    )
    return stated(found.group(1))


def second_example() -> dict[str, dict[str, str]]:
    found = readme_match(
        r"With hits `a, a, b`, relevant `\{a\}` and k = 10, `ai4j` gives (.*?), while `trec` gives (.*?)\. ",
        doc_section("docs/metrics.md", "Metrics and the two conventions"),
    )
    return {"ai4j": stated(found.group(1)), "trec": stated(found.group(2))}


def batch_row(hits: list[str], relevant: list[str], k: int, convention: str) -> dict[str, float]:
    """``evaluate_run`` on one query: its measures at ``k``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the repeated key of the second example is reported, as it should
        frame = evaluate_run({"q": hits}, {"q": relevant}, k=k, convention=convention)
    return {measure: float(frame.loc["q", f"{measure}@{k}"]) for measure in MEASURES.values()}


def evaluator_row(hits: list[str], relevant: list[str], k: int, convention: str) -> dict[str, float]:
    """The per-query evaluator of ``convention`` (``RagEvaluator`` or ``TrecEvaluator``) on the same query."""
    evaluator = RagEvaluator() if convention == "ai4j" else TrecEvaluator()
    result = evaluator.evaluate([RagHit(id=key) for key in hits], relevant, top_k=k)
    return {
        "precision": result.precision_at_k,
        "recall": result.recall_at_k,
        "f1": result.f1_at_k,
        "mrr": result.mrr,
        "ndcg": result.ndcg,
    }


def test_the_readme_states_the_figures_the_hand_calculation_gives() -> None:
    first = first_example()
    assert set(first) == set(MEASURES.values())
    assert {m: as_printed(FIRST_BY_HAND[m], text) for m, text in first.items()} == first
    second = second_example()
    assert {convention: set(figures) for convention, figures in second.items()} == {
        "ai4j": {"precision", "recall", "ndcg"},
        "trec": {"precision", "recall", "ndcg"},
    }
    for convention, figures in second.items():
        by_hand = SECOND_BY_HAND[convention]
        assert {m: as_printed(by_hand[m], text) for m, text in figures.items()} == figures, convention


@pytest.mark.parametrize("row", [batch_row, evaluator_row], ids=["evaluate_run", "evaluator"])
@pytest.mark.parametrize("convention", ["ai4j", "trec"])
def test_hits_abcd_relevant_bd_at_4_give_the_readme_figures_in_both_conventions(row, convention) -> None:
    got = row(["a", "b", "c", "d"], ["b", "d"], 4, convention)
    first = first_example()
    assert {m: as_printed(got[m], text) for m, text in first.items()} == first
    assert got == pytest.approx(FIRST_BY_HAND, abs=1e-12)


@pytest.mark.parametrize("row", [batch_row, evaluator_row], ids=["evaluate_run", "evaluator"])
@pytest.mark.parametrize("convention", ["ai4j", "trec"])
def test_a_repeated_relevant_hit_at_10_gives_the_readme_figures_of_each_convention(row, convention) -> None:
    got = row(["a", "a", "b"], ["a"], 10, convention)
    figures = second_example()[convention]
    assert {m: as_printed(got[m], text) for m, text in figures.items()} == figures
    assert {m: got[m] for m in SECOND_BY_HAND[convention]} == pytest.approx(
        SECOND_BY_HAND[convention], abs=1e-12
    )


# -------------------------------------------------- the unjudged-hits warning, as the README shows it
def readme_warning() -> tuple[float, str]:
    """The README's threshold ("0.05 or more below the control's") and its example warning."""
    found = doc_match(
        r"\*\*A warning\*\* when a treatment's `judged@k` is ([0-9.]+) or more below the control's, "
        r"naming the unjudged hits involved: `([^`]+)`",
        page="docs/judgments.md",
    )
    return float(found.group(1)), found.group(2)


def coverage(control: float, treatment: float, unjudged: tuple[int, int] = (31, 142)) -> dict:
    return {
        "control": JudgedCoverage("control", 10, control, unjudged[0]),
        "dense": JudgedCoverage("dense", 10, treatment, unjudged[1]),
    }


def test_the_readme_example_warning_is_the_one_written_for_its_figures() -> None:
    _, example = readme_warning()
    figures = re.search(r"judged@10 ([0-9.]+) vs ([0-9.]+); (\d+) unjudged hits against (\d+)\)", example)
    treatment, control, many, few = figures.groups()
    (sentence,) = judged_gap_warnings(coverage(float(control), float(treatment), (int(few), int(many))))
    pattern = ".*?".join(re.escape(part.strip()) for part in example.split("..."))
    assert re.match(pattern, sentence.replace("`", "")), sentence
    gap = round(100 * (float(control) - float(treatment)))
    assert example.startswith(f"dense: {gap}% more of its top 10 is unjudged")  # 0.93 - 0.81 = 12%


def test_the_warning_starts_at_the_readme_gap() -> None:
    threshold, _ = readme_warning()
    assert len(judged_gap_warnings(coverage(0.90, 0.90 - threshold))) == 1  # exactly the gap: warned
    assert judged_gap_warnings(coverage(0.90, 0.90 - threshold + 0.001)) == []  # just under it: not


# -------------------------------------------------------- the same examples in docs/evaluation.md
def docs_table(after: str, columns: list[str]) -> dict[str, dict[str, str]]:
    """The first table after ``after`` in docs/evaluation.md: per convention, each cell's leading figure."""
    text = (README.parent / "docs" / "evaluation.md").read_text(encoding="utf-8")
    start = text.index(after)
    rows = {}
    for convention in ("ai4j", "trec"):
        cells = re.search(rf"^\| {convention} \|(.*)\|$", text[start:], re.M).group(1).split("|")
        rows[convention] = dict(zip(columns, (cell.split()[0] for cell in cells), strict=True))
    return rows


@pytest.mark.parametrize("convention", ["ai4j", "trec"])
def test_the_evaluation_docs_tables_give_the_same_figures(convention) -> None:
    first = docs_table("An example. The hits are `a, b, c, d`", list(MEASURES.values()))[convention]
    got = batch_row(["a", "b", "c", "d"], ["b", "d"], 4, convention)
    assert {m: as_printed(got[m], text) for m, text in first.items()} == first
    second = docs_table("With hits\n`a, a, b`, relevant `{a}` and k = 10", ["precision", "recall", "ndcg"])
    got = batch_row(["a", "a", "b"], ["a"], 10, convention)
    assert {m: as_printed(got[m], text) for m, text in second[convention].items()} == second[convention]
