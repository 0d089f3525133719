"""What a dataset and its run files hold, read with the data stage's own readers: the queries, the split's
judgments and their grades, the corpus, the level the judgments name, and each run's alignment report."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from abcompare.core.errors import ConfigError, DataError
from abcompare.core.naming import first_collision, name_problem
from abcompare.data.alignment import alignment_report
from abcompare.data.annotations import read_annotations
from abcompare.data.corpus import read_corpus
from abcompare.data.levels import apply_level
from abcompare.data.queries import read_queries
from abcompare.data.runs import read_run
from abcompare.examples import EXAMPLES, example_key, example_path

#: The files of a BEIR folder (the names the data stage reads).
QUERIES, CORPUS, QRELS = "queries.jsonl", "corpus.jsonl", "qrels"
#: Chunk-level qrels shipped beside a split's document qrels (``test.chunks.tsv``): not a split.
CHUNK_QRELS = ".chunks.tsv"
#: Documents up to this median length (characters) are indexed whole (``chunking: {strategy: none}``).
SHORT_DOCUMENTS = 2000


@dataclass(frozen=True)
class DatasetFindings:
    """What a dataset holds, and where: the files, their tables, and the level its judgments name."""

    label: str  # what the dataset is called (the folder's or the example's name)
    queries: pd.DataFrame
    annotations: pd.DataFrame
    corpus: pd.DataFrame | None
    qrels_file: Path
    queries_file: Path
    folder: Path | None = None  # a BEIR folder
    example: str | None = None  # a shipped example, by name
    split: str | None = None
    other_splits: tuple[str, ...] = ()
    level: str = "document"
    level_reason: str = ""

    @property
    def grades(self) -> list[int]:
        """The distinct positive grades the judgments give."""
        return sorted(int(g) for g in pd.unique(self.annotations["grade"]) if g > 0)

    @property
    def graded(self) -> bool:
        """Whether the judgments grade relevance (more than one positive grade), not just mark it."""
        return len(self.grades) > 1

    @property
    def median_document_length(self) -> int | None:
        if self.corpus is None:
            return None
        return int((self.corpus["title"].str.len() + self.corpus["text"].str.len()).median())


@dataclass(frozen=True)
class RunFindings:
    """One run file: its name, path, table, hits per query and its alignment report against the qrels."""

    name: str
    path: Path
    run: pd.DataFrame
    report: object = field(repr=False)

    @property
    def depth(self) -> int:
        """The most hits any query has."""
        return int(self.run.groupby("query_id", sort=False).size().max()) if len(self.run) else 0


def inspect_dataset(
    dataset: str | None, queries: Path | None = None, qrels: Path | None = None
) -> DatasetFindings:
    """Read what ``dataset`` holds: a BEIR folder, a shipped example's name (``hr-docs``), or none when
    ``queries`` and ``qrels`` name the files (they also override a folder's). A problem is a located
    ``DataError`` (exit 2): a folder that does not exist, lacks its queries or qrels, a file that does not
    parse."""
    folder, example = _dataset_folder(dataset, given_files=queries is not None and qrels is not None)
    queries_file = queries or _needed(folder, QUERIES, "--dataset")
    split, others = (None, ())
    if qrels is None:
        split, others = _split(folder)
        qrels = folder / QRELS / f"{split}.tsv"
    corpus_file = folder / CORPUS if folder is not None and (folder / CORPUS).is_file() else None
    findings = DatasetFindings(
        label=example or (folder.name if folder is not None else Path(queries_file).stem),
        queries=read_queries(queries_file),
        annotations=read_annotations(qrels),
        corpus=read_corpus(corpus_file) if corpus_file is not None else None,
        qrels_file=Path(qrels),
        queries_file=Path(queries_file),
        folder=folder,
        example=example,
        split=split,
        other_splits=others,
    )
    level, reason = judged_level(findings.annotations, findings.corpus)
    return DatasetFindings(**{**findings.__dict__, "level": level, "level_reason": reason})


def _dataset_folder(dataset: str | None, *, given_files: bool) -> tuple[Path | None, str | None]:
    """The BEIR folder ``dataset`` names, and the example's name when it names a shipped one."""
    if dataset is None:
        if not given_files:
            raise ConfigError(
                "give the dataset: a BEIR folder, or --queries and --qrels files",
                field="--dataset",
                hint="e.g. abcompare init --dataset /data/beir/scifact",
            )
        return None, None
    folder = Path(dataset).expanduser()
    if not folder.exists() and example_key(dataset) in EXAMPLES:
        return example_path(dataset), example_key(dataset)
    if not folder.exists():
        known = ", ".join(sorted(EXAMPLES))
        raise DataError(
            "no such folder",
            file=folder,
            field="--dataset",
            hint=f"give a BEIR folder, or an example: {known}",
        )
    if not folder.is_dir():
        raise DataError(
            "expected a BEIR folder (corpus.jsonl, queries.jsonl, qrels/<split>.tsv), found a file",
            file=folder,
            field="--dataset",
            hint="give its folder, or name the files with --queries and --qrels",
        )
    return folder, None


def _needed(folder: Path | None, name: str, option: str) -> Path:
    assert folder is not None
    path = folder / name
    if not path.is_file():
        raise DataError(
            f"the dataset folder has no {name}",
            file=folder,
            field=option,
            hint="a BEIR folder holds corpus.jsonl, queries.jsonl and qrels/<split>.tsv (or use --queries)",
        )
    return path


def _split(folder: Path | None) -> tuple[str, tuple[str, ...]]:
    """The split to judge (``test`` when there is one, else the first) and the folder's other splits."""
    assert folder is not None
    qrels = folder / QRELS
    splits = sorted(p.name[: -len(".tsv")] for p in qrels.glob("*.tsv") if not p.name.endswith(CHUNK_QRELS))
    if not splits:
        raise DataError(
            f"the dataset folder has no judgments: no {QRELS}/<split>.tsv",
            file=qrels if qrels.is_dir() else folder,
            field="--dataset",
            hint="a BEIR folder holds qrels/test.tsv (query-id, corpus-id, score), or give --qrels FILE",
        )
    chosen = "test" if "test" in splits else splits[0]
    return chosen, tuple(s for s in splits if s != chosen)


def judged_level(annotations: pd.DataFrame, corpus: pd.DataFrame | None) -> tuple[str, str]:
    """The level the judgments name, and why: ``document`` when their ids are the corpus' document ids
    (or, without a corpus, ids without a ``#``), ``chunk`` when they are chunk keys (``doc#chunk-N``)."""
    ids = pd.Series(pd.unique(annotations.loc[annotations["grade"] > 0, "key"].astype("str")))
    if ids.empty:
        ids = pd.Series(pd.unique(annotations["key"].astype("str")))
    n = len(ids)
    if corpus is not None:
        documents = pd.Index(corpus["doc_id"].astype("str"))
        whole = int(ids.isin(documents).sum())
        parts = int(ids.str.split("#", n=1).str[0].isin(documents).sum())
        if whole >= parts or whole >= n / 2:
            return "document", f"{whole:,} of {n:,} judged ids are corpus documents"
        return "chunk", f"{parts:,} of {n:,} judged ids are chunks (document#...) of corpus documents"
    chunked = int(ids.str.contains("#", regex=False).sum())
    if chunked > n / 2:
        return "chunk", f"{chunked:,} of {n:,} judged ids are chunk keys (document#...)"
    return "document", f"{n - chunked:,} of {n:,} judged ids are document ids (no '#')"


def parse_run_option(option: str) -> tuple[str, Path]:
    """``NAME=FILE`` (``--run``): the variant's name and its run file."""
    name, sep, file = option.partition("=")
    if not sep or not name.strip() or not file.strip():
        raise ConfigError(
            f"expected NAME=FILE, got {option!r}", field="--run", hint="e.g. --run prod=prod.trec"
        )
    problem = name_problem(name.strip())
    if problem is not None:
        raise ConfigError(f"run name {name.strip()!r} {problem}", field="--run")
    return name.strip(), Path(file.strip()).expanduser()


def inspect_runs(runs: list[tuple[str, Path]], dataset: DatasetFindings) -> list[RunFindings]:
    """Each run file read (any format ``read_run`` reads; a problem names its file and line) and aligned
    against the judgments at the dataset's level, as ``abcompare run`` will align it."""
    names = [name for name, _ in runs]
    repeated = next((name for name in names if names.count(name) > 1), None)
    if repeated is not None:
        raise ConfigError(
            f"two runs are named {repeated!r}", field="--run", hint="give each run its own name"
        )
    if "control" in names[1:]:
        raise ConfigError("'control' names the first run only", field="--run")
    clash = first_collision(["control", *names[1:]])  # the first run is the variant named control
    if clash is not None:
        first, second = clash
        given = {name: f"--run {name}={path}" for name, path in runs}
        which = [given.get(first, f"the control (--run {runs[0][0]}=...)"), given[second]]
        raise ConfigError(
            f"the run names {first!r} and {second!r} become the same MLflow key and file name "
            f"({which[0]}, {which[1]})",
            field="--run",
            hint="rename one of the two --run options (NAME=FILE)",
        )
    found: list[RunFindings] = []
    evaluated = set(dataset.queries["query_id"].astype("str"))
    for name, path in runs:
        run = read_run(path)
        run = run[run["query_id"].astype("str").isin(evaluated)].reset_index(drop=True)
        leveled, annotations = apply_level(run, dataset.annotations, dataset.level, corpus=dataset.corpus)
        found.append(RunFindings(name, path, run, alignment_report(leveled, annotations)))
    return found
