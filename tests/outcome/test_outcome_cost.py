"""The cost line under each verdict, and its formats, from hand-made cost tables: ratios against the
control, "within the noise", cached embeddings said to be cached, models and indexes by size."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from abcompare.core.settings import ComparisonSettings, PairedComparison
from abcompare.outcome.rows import format_bytes, format_duration, format_ratio
from abcompare.outcome.sentences import cost_json, cost_sentence
from abcompare.outcome.verdicts import verdict_lines
from abcompare.stats.cost import cost_table


def build(index: float, model: float, embedded: float, encoded: float, rate: float | None) -> dict:
    values = {"efficiency.index_bytes": index, "efficiency.model_bytes": model,
              "efficiency.embedded_chunks": embedded, "efficiency.encoded_chunks": encoded}  # fmt: skip
    if rate is not None:
        values["efficiency.encode_seconds_per_1000_chunks"] = rate
    return values


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(448.08, "448 s"), (2.5, "2.5 s"), (0.8127, "813 ms"), (0.0031, "3.1 ms"), (0.000213, "0.213 ms")],
)
def test_durations_keep_three_significant_digits(seconds, text) -> None:
    assert format_duration(seconds) == text


@pytest.mark.parametrize(
    ("count", "text"),
    [(90868376, "90.9 MB"), (492488, "492 kB"), (0, "0 B"), (999, "999 B"), (2.5e9, "2.5 GB")],
)
def test_sizes_are_si_units(count, text) -> None:
    assert format_bytes(count) == text


def test_ratios_keep_a_decimal_below_ten() -> None:
    assert [format_ratio(r) for r in (2.34, 12.4, 0.31, 0.031, 0.25)] == [
        "2.3x",
        "12x",
        "0.31x",
        "0.031x",
        "0.25x",
    ]


@pytest.fixture()
def table() -> pd.DataFrame:
    base = np.full((5, 10), 4e-3)  # control: 4 ms a query on every query and round
    efficiency = {
        "control": build(1_000_000, 90_000_000, 200, 200, 40.0),
        "small": build(1_000_000, 22_500_000, 200, 200, 17.0),
        "same": build(500_000, 90_000_000, 200, 0, None),
        "bm25": build(250_000, 0, 0, 0, None),
    }
    samples = {"control": base, "small": base / 2, "same": base * 1.03, "bm25": base * 4}
    return cost_table(efficiency, samples, noise_floor=0.1)


def test_a_faster_smaller_treatment_reads_as_ratios_with_its_figures(table) -> None:
    # encode 17 s vs 40 s per 1,000 chunks: 40/17 = 2.35 -> 2.4x faster; queries 2 ms vs 4 ms: 2.0x faster;
    # model 22.5 MB / 90 MB = 0.25x; the index is the same size. The ratio and its interval lead (every
    # query and round 2 ms vs 4 ms: 0.50, and every resample too); the times come with their sample
    # (5 rounds of 10 queries) and the rounds' spread (none here)
    assert cost_sentence(table, "small") == (
        "Cost vs control: encodes 2.4x faster (17 s vs 40 s per 1,000 chunks), queries 2.0x faster "
        "(time ratio 0.50 [0.50, 0.50]; 10 queries × 5 rounds: 2 ms vs 4 ms per query, mean over the queries "
        "of the median over the rounds; interquartile range of the round means 2–2 ms vs 4–4 ms), model "
        "0.25x the size (22.5 MB vs 90 MB), "
        "index the same size (1 MB)."
    )


def test_the_readmes_example_cost_line_is_this_cases(table) -> None:
    from support.readme import doc_text

    assert f"`{cost_sentence(table, 'small')}`" in doc_text("docs/configuration.md")


def test_equal_latency_is_within_the_noise_and_cached_embeddings_say_cached(table) -> None:
    sentence = cost_sentence(table, "same")
    assert sentence == (
        "Cost vs control: encoding not timed (its embeddings were cached), queries within the noise "
        "(time ratio 1.03 [1.03, 1.03]; 10 queries × 5 rounds: 4.12 ms vs 4 ms per query, mean over the "
        "queries of the median over the rounds; interquartile range of the round means 4.12–4.12 ms vs 4–4 "
        "ms), "
        "model the same size (90 MB), "
        "index 0.5x the size (500 kB vs 1 MB)."
    )


def test_a_bm25_treatment_has_no_model_and_encodes_nothing(table) -> None:
    assert cost_sentence(table, "bm25") == (
        "Cost vs control: encodes nothing (the control: 40 s per 1,000 chunks), queries 4.0x slower "
        "(time ratio 4.00 [4.00, 4.00]; 10 queries × 5 rounds: 16 ms vs 4 ms per query, mean over the "
        "queries of the median over the rounds; interquartile range of the round means 16–16 ms vs 4–4 ms), "
        "no "
        "model (the control's: 90 MB), "
        "index 0.25x the size (250 kB vs 1 MB)."
    )


def test_the_json_cost_object_is_plain_data_with_each_treatments_sentence(table) -> None:
    import json

    payload = cost_json(table)
    json.dumps(payload)  # plain data only
    assert set(payload) == {"control", "small", "same", "bm25"}
    assert "sentence" not in payload["control"] and payload["control"]["query_within_noise"] is None
    assert payload["same"]["query_within_noise"] is True and payload["same"]["embeddings"] == "cached"
    assert payload["same"]["encode_seconds_per_1000_chunks"] is None  # cached: no rate, never 0
    assert payload["small"]["sentence"] == cost_sentence(table, "small")
    assert math.isclose(payload["small"]["query_ratio"], 0.5)


def test_the_cost_line_follows_each_treatments_verdict_and_secondary_lines(table) -> None:
    comparison = pd.DataFrame(
        {"treatment": ["small"], "metric": ["ndcg@10"], "role": ["primary"], "verdict": ["better"],
         "delta": [0.1], "relative_delta": [0.2], "ci_low": [0.05], "ci_high": [0.15], "p_adjusted": [0.01],
         "family_size": [1]}
    )  # fmt: skip
    lines = verdict_lines(PairedComparison(comparison, ComparisonSettings()), None, None, cost=table)
    assert [line.kind for line in lines] == ["verdict", "cost"]
    assert lines[1].text == cost_sentence(table, "small")
    assert [
        line.kind for line in verdict_lines(PairedComparison(comparison, ComparisonSettings()), None, None)
    ] == ["verdict"]


def test_the_report_tabulates_each_variants_cost_and_puts_the_line_under_the_verdict(table) -> None:
    from abcompare.outcome.html import page as render_page
    from abcompare.outcome.view import ComparisonView, ExperimentView

    comparison = pd.DataFrame(
        {"treatment": ["small"], "metric": ["ndcg@10"], "role": ["primary"], "verdict": ["better"],
         "delta": [0.1], "relative_delta": [0.2], "ci_low": [0.05], "ci_high": [0.15], "p_adjusted": [0.01],
         "p_primary": [0.01], "family_size": [1], "control_mean": [0.5], "treatment_mean": [0.6],
         "n_queries": [1]}
    )  # fmt: skip
    per_query = {"control": pd.DataFrame({"ndcg@10": [0.5]}, index=["q"]),
                 "small": pd.DataFrame({"ndcg@10": [0.6]}, index=["q"])}  # fmt: skip
    inputs = ComparisonView(
        name="c", description="", dataset="d", n_queries=1, level="chunk", convention="ai4j",
        comparison=comparison, settings=ComparisonSettings(), per_query=per_query, queries=pd.DataFrame(),
        cost=table,
    )  # fmt: skip
    page = render_page(ExperimentView.shown(inputs))
    assert f'<span class="cost">{cost_sentence(table, "small")}</span>' in page
    section = page[page.index("<h2>Cost</h2>") : page.index("</section>", page.index("<h2>Cost</h2>"))]
    # control: 40 s per 1,000 chunks, 4 ms a query; "same": its embeddings were cached; bm25: none
    control = "<td>control</td><td>40 s</td><td>4 ms</td><td>4 ms</td><td>4 ms–4 ms</td><td>90 MB</td>"
    assert control in section
    assert "<td>same</td><td>cached</td>" in section and "<td>bm25</td><td>none</td>" in section


def given_table(control: dict, control_samples: np.ndarray | None, given: dict[str, str]) -> pd.DataFrame:
    efficiency = {
        "control": control,
        "python": {**build(0, 0, 0, 0, None), "efficiency.seconds_per_query": 0.0125},
        "file": {},
        "dense": build(1_000_000, 90_000_000, 200, 0, None),
    }
    samples = {"dense": np.full((5, 10), 4e-3)}
    if control_samples is not None:
        samples["control"] = control_samples
    return cost_table(efficiency, samples, noise_floor=0.1, given=given)


def test_a_python_retriever_and_a_run_file_get_what_is_known_of_their_cost() -> None:
    table = given_table(build(1_000_000, 90_000_000, 200, 200, 40.0), np.full((5, 10), 2e-3),
                        {"python": "python", "file": "run file"})  # fmt: skip
    assert cost_sentence(table, "python") == (
        "Cost: the Python retriever took 12.5 ms per query (one call over every query, timed once, so not "
        "compared with the control; the control's, timed one query at a time: 2 ms); its index and model "
        "are its own, not measured here."
    )
    assert cost_sentence(table, "file") == "Cost: not measured here (a run file: it was retrieved elsewhere)."
    assert table.loc["python", "source"] == "python" and math.isnan(table.loc["python", "query_ratio"])
    comparison = pd.DataFrame(
        {"treatment": ["python", "file"], "metric": ["ndcg@10"] * 2, "role": ["primary"] * 2,
         "verdict": ["better"] * 2, "delta": [0.1] * 2, "relative_delta": [0.2] * 2, "ci_low": [0.05] * 2,
         "ci_high": [0.15] * 2, "p_adjusted": [0.01] * 2, "family_size": [2] * 2}
    )  # fmt: skip
    lines = verdict_lines(PairedComparison(comparison, ComparisonSettings()), None, None, cost=table)
    assert [(line.kind, line.text) for line in lines if line.kind != "verdict"] == [
        ("cost", cost_sentence(table, "python")),
        ("cost", cost_sentence(table, "file")),
    ]  # a line under each given treatment's verdict, as under a retrieved one's


def test_a_retrieved_treatment_beside_a_run_file_control_gives_its_own_figures() -> None:
    table = given_table({}, None, {"file": "run file", "python": "python", "control": "run file"})
    assert cost_sentence(table, "dense") == (
        "Cost: encoding not timed (its embeddings were cached), queries 4 ms per query (10 queries × 5 "
        "rounds, mean over the queries of the median over the rounds; interquartile range of the round means "
        "4–4 ms), model 90 MB, index 1 MB; the control's: not "
        "measured here (a run file: it was retrieved elsewhere)."
    )
    # the Python treatment's seconds are not set against a control that was not timed
    assert cost_sentence(table, "python") == (
        "Cost: the Python retriever took 12.5 ms per query (one call over every query, timed once, so not "
        "compared with the control); its index and model are its own, not measured here."
    )


def test_one_encoding_charged_to_both_variants_is_said_to_be_shared() -> None:
    efficiency = {"control": build(1_000_000, 90_000_000, 200, 200, 148.0),
                  "dbsf": build(1_000_000, 90_000_000, 200, 200, 148.0)}  # fmt: skip
    samples = {"control": np.full((5, 10), 4e-3), "dbsf": np.full((5, 10), 4e-3)}
    sentence = cost_sentence(cost_table(efficiency, samples, noise_floor=0.1), "dbsf")
    assert sentence.startswith(
        "Cost vs control: encoding shared with the control (148 s per 1,000 chunks, one encoding for both), "
    )
    assert "as fast" not in sentence


def test_a_shared_query_encoding_left_untimed_is_said_beside_the_timed_figures() -> None:
    """The timing pass left out a query encoding every variant shares (its model was never loaded): the
    figures are the rest of the query's work, and the line and the table say which encoding is missing."""
    efficiency = {"control": build(1_000_000, 90_000_000, 200, 0, None),
                  "dbsf": build(1_000_000, 90_000_000, 200, 0, None)}  # fmt: skip
    samples = {"control": np.full((3, 5), 2e-3), "dbsf": np.full((3, 5), 2e-3)}
    table = cost_table(efficiency, samples, noise_floor=0.1, untimed_encoding=("all-MiniLM-L6-v2",))
    assert cost_sentence(table, "dbsf") == (
        "Cost vs control: encoding not timed (its embeddings were cached), queries within the noise "
        "(time ratio 1.00 [1.00, 1.00]; 5 queries × 3 rounds: 2 ms vs 2 ms per query, mean over the queries "
        "of the median over the rounds; interquartile range of the round means 2–2 ms vs 2–2 ms; query "
        "encoding by all-MiniLM-L6-v2 not timed: both share it "
        "and its vectors were cached), model the same size (90 MB), index the same size (1 MB)."
    )
    assert cost_json(table)["control"]["untimed_query_encoding"] == "all-MiniLM-L6-v2"
    timed = cost_table(efficiency, samples, noise_floor=0.1)  # every encoding timed: nothing said
    assert timed.loc["dbsf", "untimed_query_encoding"] == "" and "query encoding" not in cost_sentence(
        timed, "dbsf"
    )
