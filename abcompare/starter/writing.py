"""The commented config ``abcompare init`` writes from what it found: each choice it made (level,
convention, primary metric, chunking, the variants) beside the reason it was made, paths relative to the
config where they can be."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from abcompare.core.vocabulary import plural
from abcompare.starter.inspection import SHORT_DOCUMENTS, DatasetFindings, RunFindings

#: A YAML scalar that needs no quotes: letters, digits and a few safe characters.
_PLAIN = re.compile(r"[A-Za-z0-9_./~][A-Za-z0-9_./@+-]*")
#: Hits per query from which recall@100 is worth computing.
DEEP = 100
COMMENT_COLUMN = 40


def _scalar(text: str) -> str:
    """``text`` as a YAML scalar: plain when it can be, else double-quoted (JSON's quoting is YAML's)."""
    if _PLAIN.fullmatch(text) and text.lower() not in {
        "null",
        "true",
        "false",
        "yes",
        "no",
        "on",
        "off",
        "~",
    }:
        return text
    return json.dumps(text, ensure_ascii=False)


def _path(path: Path, folder: Path) -> str:
    """A path as the config writes it: relative to the config's folder when it lies inside it."""
    path, folder = path.absolute(), folder.absolute()
    shown = os.path.relpath(path, folder) if path.is_relative_to(folder) else str(path)
    return _scalar(shown)


def _line(text: str, comment: str = "") -> str:
    """A config line with its comment aligned, so the reasons read as one column."""
    if not comment:
        return text
    return (
        f"{text:<{COMMENT_COLUMN - 1}} # {comment}"
        if len(text) < COMMENT_COLUMN - 1
        else f"{text}  # {comment}"
    )


def _name(label: str) -> str:
    """A comparison or experiment name from the dataset's label: lower case, words joined by ``-``."""
    return re.sub(r"[^a-z0-9]+", "-", label.lower()).strip("-") or "dataset"


def config_text(
    dataset: DatasetFindings, runs: list[RunFindings], folder: Path, command: str
) -> tuple[str, str]:
    """The config (YAML with comments) and a one-line summary of the comparison it sets up. ``folder`` is
    where the config is written (paths inside it are written relative to it); ``command`` the command
    line that wrote it, quoted in its header."""
    retrieves = dataset.corpus is not None and len(runs) < 2
    depth = min([r.depth for r in runs] + ([DEEP] if retrieves else []))
    control, treatments, summary, short = _variants(dataset, runs, folder)
    n_judgments = len(dataset.annotations)
    judged = dataset.annotations["query_id"].nunique()
    held = [plural(len(dataset.queries), "query"), f"{n_judgments:,} judgments of {plural(judged, 'query')}"]
    if dataset.corpus is not None:
        held.append(f"{len(dataset.corpus):,} documents")
    lines = [
        f"# Written by `{command}` from what the dataset holds:",
        f"#   {', '.join(held)}.",
        "# Each choice is commented with its reason; change what does not fit, then:",
        "#   abcompare validate CONFIG && abcompare run CONFIG",
        f"name: {_scalar(_name(f'{dataset.label} {short}'))}",
        f"description: {_scalar(summary)}",
        "",
        "dataset:",
        *_dataset_lines(dataset, folder),
        "",
        *control,
        "",
        "treatments:",
        *treatments,
        "",
        "evaluation:",
        *_evaluation_lines(dataset, depth),
        "",
        "tracking:",
        f"  experiment: {_scalar('abcompare-' + _name(dataset.label))}",
        "",
    ]
    return "\n".join(lines), summary


def _dataset_lines(dataset: DatasetFindings, folder: Path) -> list[str]:
    lines: list[str] = []
    if dataset.example is not None:
        lines.append(_line(f"  name: {_scalar(dataset.example)}", "the example shipped with abcompare"))
    elif dataset.folder is not None:
        lines.append(_line(f"  path: {_path(dataset.folder, folder)}", "a BEIR folder"))
    if dataset.folder is not None and dataset.split is not None:
        others = f" (other splits: {', '.join(dataset.other_splits)})" if dataset.other_splits else ""
        lines.append(_line(f"  split: {_scalar(dataset.split)}", f"qrels/{dataset.split}.tsv{others}"))
    if dataset.split is None:  # the files were named
        if dataset.folder is None:
            lines.append(f"  queries: {_path(dataset.queries_file, folder)}")
        lines.append(f"  annotations: {_path(dataset.qrels_file, folder)}")
    how = "a hit counts for its document, once" if dataset.level == "document" else "hit keys are chunk ids"
    lines.append(_line(f"  level: {dataset.level}", f"{dataset.level_reason}: {how}"))
    return lines


def _variants(
    dataset: DatasetFindings, runs: list[RunFindings], folder: Path
) -> tuple[list[str], list[str], str, str]:
    """The control's lines, the treatments' lines, the comparison's one-line summary and its short name."""

    def run_line(run: RunFindings, indent: str) -> str:
        return _line(f"{indent}run: {{path: {_path(run.path, folder)}}}", f"--run {run.name}")

    if len(runs) >= 2:
        control = ["control:", run_line(runs[0], "  ")]
        treatments: list[str] = []
        for run in runs[1:]:
            treatments += [f"  {_scalar(run.name)}:", run_line(run, "    ")]
        names = ", ".join(r.name for r in runs[1:])
        summary = f"{runs[0].name} (control) vs {names} on {dataset.label}"
        return control, treatments, summary, f"{runs[0].name} vs {runs[1].name}"
    short = dataset.median_document_length is not None and dataset.median_document_length <= SHORT_DOCUMENTS
    length = f"median {dataset.median_document_length:,} characters"
    chunking = (
        _line("  chunking: {strategy: none}", f"documents are short ({length}): one chunk each")
        if short
        else _line(
            "  chunking: {strategy: recursive, size: 1000, overlap: 200}", f"long documents ({length})"
        )
    )
    control = [
        _line("control:", "BM25 over the corpus: the baseline"),
        chunking,
        "  retrievers:",
        "    bm25: {}",
        _line(f"  depth: {DEEP}", "hits per retriever before fusion"),
        _line(f"  top_k: {DEEP}", "the final list's length"),
    ]
    if runs:
        (run,) = runs
        treatments = [f"  {_scalar(run.name)}:", run_line(run, "    ")]
        return control, treatments, f"BM25 (control) vs {run.name} on {dataset.label}", f"bm25 vs {run.name}"
    treatments = [
        _line("  hybrid-rrf:", "no run files given: a first question, does dense MiniLM help?"),
        "    retrievers:",
        "      dense: {model: all-MiniLM-L6-v2}",
        "    fusion: {method: rrf}",
    ]
    summary = f"BM25 (control) vs BM25 + dense MiniLM fused with RRF (treatment) on {dataset.label}"
    return control, treatments, summary, "bm25 vs hybrid"


def _evaluation_lines(dataset: DatasetFindings, depth: int) -> list[str]:
    cutoffs = [1, 10, 100] if depth >= DEEP else [1, 5, 10]
    convention, why = (
        ("trec", "document judgments: trec_eval's definitions, as BEIR results are reported")
        if dataset.level == "document"
        else ("ai4j", "chunk judgments: the reference RAG evaluator's definitions")
    )
    grades = dataset.grades
    if dataset.graded:
        judged = (
            f"graded qrels (grades {grades[0]}-{grades[-1]}): nDCG uses each grade as its gain; precision, "
            "recall and MRR count grade >= 1"
        )
    else:
        judged = "binary qrels (grade 1 = relevant)"
    return [
        _line(f"  cutoffs: [{', '.join(map(str, cutoffs))}]", f"lists of up to {depth:,} hits"),
        _line(f"  convention: {convention}", why),
        f"  # {judged}",
        _line(
            "  primary_metric: ndcg@10", "the verdict is about this one; every other metric@k is secondary"
        ),
    ]
