"""A setting that its variant's kind ignores is refused at its key, never dropped without a word: a
``rerank`` or ``query_planning`` on a variant that reads a run file (before: exit 0, "every query scored
the same", the rerank's model never looked up), and the class around it (a run variant's retrieval
settings, RRF's ``k`` under another fusion method, RM3's settings without RM3, query fusion without
rewrites, chunk sizes under strategy 'none', a file format for a Python retriever).

What a treatment inherits from the control is the control's, not refused: a treatment that switches to a
run file keeps the control's retrievers (configs/precomputed_run.yaml)."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

import pytest
from support.cli import REPO, error_lines, invoke_cli
from support.configs import block_config

from abcompare.config import load_config
from abcompare.core.errors import ConfigError

REWRITES = REPO / "configs" / "query_variants" / "hr_docs.jsonl"
RUN = REPO / "configs" / "runs" / "hr_docs_production.trec"
RETRIEVES = {"retrievers": {"bm25": {}}}
READS = {"run": {"path": str(RUN), "format": "trec"}}
RERANK = {"type": "cross-encoder", "model": "cross-encoder/ms-marco-MiniLM-L-6-v2"}  # refused before lookup
PACKAGED_RERANK = {"type": "bi-encoder", "model": "all-MiniLM-L6-v2"}

#: (control, treatment, the key refused): each written by hand from the pipeline's documented behaviour.
CASES: list[tuple[dict[str, Any], dict[str, Any], str]] = [
    (RETRIEVES, {**READS, "rerank": RERANK}, "treatments.t.rerank"),
    (RETRIEVES, {**READS, "query_planning": {"variants": str(REWRITES)}}, "treatments.t.query_planning"),
    (RETRIEVES, {**READS, "top_k": 10}, "treatments.t.top_k"),
    (RETRIEVES, {**READS, "depth": 10}, "treatments.t.depth"),
    (RETRIEVES, {**READS, "chunking": {"size": 500}}, "treatments.t.chunking"),
    (RETRIEVES, {**READS, "retrievers": {"bm25": {"k1": 0.9}}}, "treatments.t.retrievers"),
    (RETRIEVES, {**READS, "fusion": {"method": "rrf"}}, "treatments.t.fusion"),
    ({**READS, "rerank": RERANK}, {"run": {"path": str(RUN), "format": "auto"}}, "control.rerank"),
    (READS, {"rerank": RERANK}, "treatments.t.rerank"),  # inherits the control's run file
    (READS, {"query_planning": {"expansion": "rm3"}}, "treatments.t.query_planning"),
    ({"run": {"python": "ours", "format": "trec"}}, READS, "control.run.format"),
    (
        {"retrievers": {"bm25": {}, "dense": {}}, "fusion": {"method": "dbsf", "k": 30}},
        {"depth": 50},
        "control.fusion.k",
    ),
    (
        {"retrievers": {"bm25": {}, "dense": {}}, "fusion": {"method": "dbsf"}},
        {"fusion": {"k": 5}},
        "treatments.t.fusion.k",
    ),
    ({"chunking": {"strategy": "none", "size": 500}, **RETRIEVES}, {"depth": 50}, "control.chunking.size"),
    (RETRIEVES, {"chunking": {"strategy": "none", "overlap": 0}}, "treatments.t.chunking.overlap"),
    (
        RETRIEVES,
        {"query_planning": {"expansion": "rm3", "fusion": {"method": "rrf"}}},
        "treatments.t.query_planning.fusion",
    ),
    (
        RETRIEVES,
        {"query_planning": {"expansion": "rm3", "include_original": False}},
        "treatments.t.query_planning.include_original",
    ),
    *[
        (
            RETRIEVES,
            {"query_planning": {"variants": str(REWRITES), key: value}},
            f"treatments.t.query_planning.{key}",
        )
        for key, value in {"fb_docs": 5, "fb_terms": 5, "original_weight": 0.3, "fb_max_df": 0.5}.items()
    ],
    (
        RETRIEVES,
        {"query_planning": {"variants": str(REWRITES), "fusion": {"method": "rsf", "k": 10}}},
        "treatments.t.query_planning.fusion.k",
    ),
]


write = partial(block_config, name="ignored")


def line_of_key(path: Path, field: str) -> int:
    """The 1-based line of the key ``field`` in a block-style YAML file (found by walking its indents)."""
    lines, at, indent = path.read_text().splitlines(), 0, -2
    for key in field.split("."):
        for i in range(at, len(lines)):
            text = lines[i]
            depth = len(text) - len(text.lstrip())
            if depth > indent and text.strip().startswith(f"{key}:"):
                at, indent = i, depth
                break
        else:
            raise AssertionError(f"{field} not in {path}")
    return at + 1


@pytest.mark.parametrize(("control", "treatment", "field"), CASES, ids=[c[2] for c in CASES])
def test_a_setting_its_variant_ignores_is_refused_at_its_key(
    tmp_path: Path, control, treatment, field
) -> None:
    path = write(tmp_path, control, treatment)
    with pytest.raises(ConfigError, match="is ignored") as info:
        load_config(path)
    assert (info.value.file, info.value.field) == (str(path), field)
    assert info.value.line == line_of_key(path, field)


@pytest.mark.parametrize(
    ("control", "treatment"),
    [
        (
            {**RETRIEVES, "rerank": PACKAGED_RERANK, "chunking": {"size": 500}},
            READS,
        ),  # inherited, the control's own
        (
            READS,
            {**RETRIEVES, "run": None, "rerank": PACKAGED_RERANK},
        ),  # a null removes the run: it retrieves
        ({**RETRIEVES, "fusion": {"method": "rrf", "k": 30}}, {"fusion": {"method": "dbsf"}}),  # k inherited
        (READS, {"rerank": None, "query_planning": None}),  # a null sets nothing
    ],
)
def test_what_is_inherited_or_removed_is_not_refused(tmp_path: Path, control, treatment) -> None:
    load_config(write(tmp_path, control, treatment))


def test_the_shipped_precomputed_run_config_is_still_valid() -> None:
    """Its treatment reads a run file and inherits the control's retrievers, fusion, depth and top_k."""
    config = load_config(REPO / "configs" / "precomputed_run.yaml")
    assert config.treatments["production"].run is not None


def test_a_rerank_on_a_run_file_is_one_located_error_from_validate_and_run(
    tmp_path: Path, embedding_cache
) -> None:
    """The issue's case on the command line: exit 2, one error line naming the file, line and key."""
    path = write(tmp_path, RETRIEVES, {**READS, "rerank": RERANK})
    for command in (["validate", str(path)], ["run", str(path), "--set", "tracking.enabled=false"]):
        result = invoke_cli(command, tmp_path, embedding_cache)
        assert result.returncode == 2, result.stderr[-2000:]
        (line,) = error_lines(result.stderr)
        assert (
            f"{path}:{line_of_key(path, 'treatments.t.rerank')}: treatments.t.rerank: rerank is ignored"
            in line
        )
