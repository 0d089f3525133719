"""README figures that come from a quick real run, read out of the README and compared with that run's output.

The alignment pitfall: the docs' example error is what the main job says when it is given the shipped
example's document-level judgments at chunk level (annotation ids ``travel-per-diems``, hit keys such as
``acceptable-use#chunk-0``: the check runs before retrieval, on the keys each variant can return). The docs
abridge the line; its figures and example ids must be the run's.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
from support.cli import REPO, error_lines, invoke_cli
from support.readme import doc_section

DOCUMENT_QRELS = REPO / "abcompare" / "examples" / "hr_docs" / "qrels" / "test.tsv"
FIGURES = (
    r"only (?P<matched>\d+) of (?P<annotated>\d+) annotated ids \((?P<share>\d+)%\) appear among the hit keys"
    r".*?document ids \(e\.g\. '(?P<document>[^']+)'.*?chunk keys \(e\.g\. '(?P<chunk>[^']+)'.*?"
    r"(?P<suffix>\d+)% of annotated ids match once the '#\.\.\.' chunk suffix is dropped"
)


def readme_alignment_error() -> str:
    """The error the README's "The alignment pitfall" shows, on one line."""
    section = doc_section("docs/inputs.md", "Data: queries, annotations, runs")
    block = re.search(r"the run stops:\n\n```\n(error: .*?)```", section, re.S)
    assert block, "README shows the alignment error in 'The alignment pitfall'"
    return " ".join(block.group(1).split())


def test_the_alignment_pitfall_error_has_the_readme_figures(tmp_path: Path, embedding_cache: Path) -> None:
    readme = re.search(FIGURES, readme_alignment_error())
    assert readme, readme_alignment_error()
    at_chunk_level = ["--set", f"dataset.annotations={DOCUMENT_QRELS}", "--set", "tracking.enabled=false"]
    result = invoke_cli(
        ["run", str(REPO / "configs" / "rrf_vs_dbsf.yaml"), *at_chunk_level], tmp_path, embedding_cache
    )
    assert result.returncode == 2, result.stderr[-3000:]
    (line,) = error_lines(result.stderr)
    said = re.search(FIGURES, line)
    assert said, line
    assert said.groupdict() == readme.groupdict()
    distinct = pd.read_csv(DOCUMENT_QRELS, sep="\t", dtype=str)["corpus-id"].nunique()  # counted here
    assert int(said["annotated"]) == distinct
    # the README's advice is the run's, word for word
    advice = readme_alignment_error().split("chunk suffix is dropped ", 1)[1]
    assert line.endswith(advice), line
