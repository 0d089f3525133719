"""Every stage of a comparison pinned bit for bit across the rewrite of the data path (issue 38).

A seeded comparison (``benchmarks/scale_data.py``: 200 queries x 100 hits, two runs, graded qrels, at each
level and convention) is run through ``run_comparison`` with tracking off; what each stage produced is
compared with ``fixtures/scale_pin.json.gz``: the runs and annotations at the level, each variant's
alignment report, per-query table and graded run, the per-query attribution, the robustness and
queries-needed tables, and the whole ``--json`` output except the timings.

Where the fixture came from: it was written by ``python tests/runner/test_runner_scale_pin.py`` with the
code of ``main`` at commit 168410f, BEFORE the per-row Python of the data path was rewritten (issue 38), so
it pins "unchanged by the rewrite", not correctness. It was regenerated once since, after issue 37's fixes
met the rewrite: its only differences from the first were those fixes' two intended changes (a query absent
from a run counts as one without an annotated hit; a zero delta has no queries-needed figure), and again after
issue 41's rows: each row's interval at its verdict's level (the bootstrap interval kept as ``boot_ci_*``,
equal to the old ``ci_*``; ``ci_level``, ``ci_agrees``, ``ci_note``), the sentences and settings line that
state them, the attribution's ``reorder_up`` and the signed ``delta`` of queries needed; no p-value, mean or
per-query score moved; and again after wt-rows' ``untimed_query_encoding`` cost key (null here), its only
difference; and again after wt-largen's per-row ``min_effect_used``, ``min_effect_source`` and
``below_min_effect`` columns (no row flagged in any case), its only difference.
Correctness is checked independently below: the
document-level per-query nDCG / P / recall / MRR against pytrec_eval on the same files. Regenerate the
fixture only for an intended change of results, and say so in the commit.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import math
import sys
import warnings
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from support.environment import needs

REPO_ROOT = Path(__file__).resolve().parents[2]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from benchmarks.scale_data import write_comparison  # noqa: E402

FIXTURE = Path(__file__).parent / "fixtures" / "scale_pin.json.gz"

#: case -> (level the data is written for, level evaluated, convention, document ids as keys, overrides)
CASES: dict[str, tuple[str, str, str, bool, tuple[str, ...]]] = {
    "document-trec-chunk-keys": ("document", "document", "trec", True, ()),
    "document-ai4j-document-ids": ("document", "document", "ai4j", False, ()),
    "chunk-ai4j": ("chunk", "chunk", "ai4j", True, ()),
    "chunk-trec": ("chunk", "chunk", "trec", True, ()),
    "span-ai4j": ("span", "span", "ai4j", True, ()),
    # qrels on documents judged at chunk level: the alignment diagnosis names the shape
    "misaligned-chunk-vs-document": (
        "document", "chunk", "ai4j", True,
        ("dataset.level=chunk", "evaluation.allow_misaligned=true"),
    ),
}  # fmt: skip


def _frame(frame: pd.DataFrame | None, *, digest: bool = False) -> Any:
    """A table as plain JSON: columns, dtypes, index and values (floats as their exact repr); with
    ``digest`` the index and values are kept as the SHA-256 of that JSON (the large hit tables)."""
    if frame is None:
        return None
    body = {
        "index": [str(i) for i in frame.index],
        "values": [[_value(v) for v in row] for row in frame.itertuples(index=False, name=None)],
    }
    if digest:
        text = json.dumps(body, separators=(",", ":"))
        body = {"rows": len(frame), "sha256": hashlib.sha256(text.encode()).hexdigest()}
    return {"columns": [str(c) for c in frame.columns], "dtypes": [str(t) for t in frame.dtypes], **body}


def _value(value: Any) -> Any:
    if value is None or value is pd.NA:
        return None
    if isinstance(value, float) and math.isnan(value):
        return "nan"
    if hasattr(value, "item"):
        value = value.item()
    return value if isinstance(value, (int, float, str, bool)) else str(value)


def capture(case: str, folder: Path) -> dict[str, Any]:
    """Each stage's output for one case, as plain JSON."""
    from abcompare.config.loading import load_config
    from abcompare.data.experiment import load_dataset_for_experiment
    from abcompare.data.levels import apply_level
    from abcompare.data.runs import read_run
    from abcompare.outcome.console import result_as_json
    from abcompare.runner import run_comparison

    written, level, convention, chunk_keys, overrides = CASES[case]
    config_path = write_comparison(
        folder, level=written, n_queries=200, hits=100, seed=38, chunk_keys=chunk_keys,
        convention=convention, n_resamples=500,
    )  # fmt: skip
    config = load_config(config_path, list(overrides))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = run_comparison(config, config_path=config_path)
        dataset = load_dataset_for_experiment(config.dataset)
        at_level = {}
        for name, variant in config.variants().items():
            run = read_run(config_path.parent / variant.run.path, variant.run.format)
            run, annotations = apply_level(
                run, dataset.annotations, level, spans=dataset.spans, corpus=dataset.corpus
            )
            at_level[name] = {
                "run": _frame(run, digest=True),
                "annotations": _frame(annotations, digest=True),
            }
    payload = result_as_json(result)
    payload.pop("timings")
    return {
        "json": json.loads(json.dumps(payload, default=str)),
        "at_level": at_level,
        "variants": {
            name: {
                "alignment": json.loads(json.dumps(asdict(o.alignment), default=str)),
                "per_query": _frame(o.per_query),
                "graded_run": _frame(o.run, digest=True),
            }
            for name, o in result.variants.items()
        },
        "attribution_per_query": _frame(result.attribution_per_query, digest=True),
        "robustness": _frame(result.robustness),
        "queries_needed": _frame(result.queries_needed),
    }


def first_difference(want: Any, got: Any, path: str = "") -> str | None:
    """Where two captures first differ (None when they are identical, NaN equal to NaN)."""
    if isinstance(want, dict) and isinstance(got, dict):
        if list(want) != list(got):
            return f"{path}: keys {list(want)} != {list(got)}"
        for key in want:
            found = first_difference(want[key], got[key], f"{path}/{key}")
            if found:
                return found
        return None
    if isinstance(want, list) and isinstance(got, list):
        if len(want) != len(got):
            return f"{path}: length {len(want)} != {len(got)}"
        for i, (w, g) in enumerate(zip(want, got, strict=True)):
            found = first_difference(w, g, f"{path}[{i}]")
            if found:
                return found
        return None
    same = json.dumps(want) == json.dumps(got)  # exact: a float's repr, NaN == NaN, 1 != 1.0
    return None if same else f"{path}: {want!r} != {got!r}"


@pytest.fixture(scope="module")
def pinned() -> dict[str, Any]:
    with gzip.open(FIXTURE, "rt") as handle:
        return json.load(handle)


@pytest.mark.parametrize("case", list(CASES))
def test_every_stage_is_unchanged_by_the_rewrite(case: str, pinned: dict[str, Any], tmp_path: Path) -> None:
    got = json.loads(json.dumps(capture(case, tmp_path)))
    assert first_difference(pinned["cases"][case], got) is None


@needs("pytrec_eval")
def test_document_level_per_query_numbers_match_pytrec_eval(tmp_path: Path) -> None:
    """The independent reference: trec_eval's per-query nDCG@10, P@5, recall@100 and MRR on the same files."""
    import pytrec_eval

    from abcompare.config.loading import load_config
    from abcompare.runner import run_comparison

    config_path = write_comparison(
        tmp_path, level="document", n_queries=200, hits=100, seed=38, chunk_keys=False, convention="trec",
        n_resamples=200,
    )  # fmt: skip
    result = run_comparison(load_config(config_path))
    qrels: dict[str, dict[str, int]] = {}
    for line in (tmp_path / "qrels.txt").read_text().splitlines():
        qid, _, doc, grade = line.split()
        qrels.setdefault(qid, {})[doc] = int(grade)
    measures = {"ndcg_cut.10", "P.5", "recall.100", "recip_rank"}
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, measures)
    for name in ("control", "treatment"):
        run: dict[str, dict[str, float]] = {}
        for line in (tmp_path / f"{name}.trec").read_text().splitlines():
            qid, _, doc, _, score, _ = line.split()
            run.setdefault(qid, {})[doc] = float(score)
        reference = pd.DataFrame(evaluator.evaluate(run)).T
        ours = result.variants[name].per_query.loc[reference.index]
        assert len(reference) > 150
        pairs = {"ndcg@10": "ndcg_cut_10", "precision@5": "P_5", "recall@100": "recall_100"}
        for column, theirs in pairs.items():
            assert (ours[column] - reference[theirs]).abs().max() < 1e-12, column
        # MRR@100 is trec_eval's reciprocal rank when the first relevant hit is within 100 (all are, 100 hits)
        assert (ours["mrr@100"] - reference["recip_rank"]).abs().max() < 1e-12


if __name__ == "__main__":  # write the fixture (see the module's docstring for when)
    import tempfile

    cases = {}
    for name in CASES:
        with tempfile.TemporaryDirectory() as folder:
            cases[name] = capture(name, Path(folder))
    FIXTURE.parent.mkdir(exist_ok=True)
    note = sys.argv[1] if len(sys.argv) > 1 else ""
    with gzip.open(FIXTURE, "wt", compresslevel=9) as handle:
        json.dump({"generated_by": note, "cases": cases}, handle, separators=(",", ":"))
    print(FIXTURE, FIXTURE.stat().st_size)
