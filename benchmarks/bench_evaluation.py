"""Evaluation benchmark: TREC run + qrels files on disk -> per-query P, R, F1, MRR, nDCG at 1/5/10/100.

abcompare (``read_run`` + ``read_annotations`` + ``evaluate_run``, trec convention) against pytrec_eval
(``parse_run``/``parse_qrel`` + ``RelevanceEvaluator``), ranx (``Qrels/Run.from_file`` + ``evaluate``,
object construction included) and ir_measures (``read_trec_*`` + ``iter_calc``). Every tool's per-query
numbers are compared with pytrec_eval's before a ratio is reported.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchmarks.harness import Measurement, fmt_mb, fmt_ratio, fmt_seconds, measure, peer_available

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

# numpy and pandas are imported inside the functions: a peer's timed child must not carry pandas in its
# peak memory when the peer itself does not use it.

CUTOFFS: tuple[int, ...] = (1, 5, 10, 100)
MEASURES: tuple[str, ...] = ("precision", "recall", "f1", "mrr", "ndcg")
COLUMNS: list[str] = [f"{m}@{k}" for m in MEASURES for k in CUTOFFS]
TOLERANCE = 1e-9  # largest absolute difference accepted between two tools' per-query values
PEERS: dict[str, str] = {"pytrec_eval": "pytrec_eval", "ranx": "ranx", "ir_measures": "ir_measures"}
_PYTREC_MEASURES = {
    "P." + ",".join(map(str, CUTOFFS)),
    "recall." + ",".join(map(str, CUTOFFS)),
    "ndcg_cut." + ",".join(map(str, CUTOFFS)),
    "recip_rank",
}


@dataclass
class Output:
    """What a timed evaluation returned, tagged with the tool so ``to_frame`` can normalise it."""

    tool: str
    raw: Any


# ------------------------------------------------------------------------------------------ the tools
def abcompare_task(run_path: str, qrels_path: str) -> Callable[[], Output]:
    """abcompare from files: read the TREC run and qrels, evaluate every query in the trec convention."""
    from abcompare.data.annotations import read_annotations
    from abcompare.data.runs import read_run
    from abcompare.evaluation.batch import evaluate_run

    def work() -> Output:
        run = read_run(run_path, fmt="trec")
        annotations = read_annotations(qrels_path, fmt="trec")
        return Output("abcompare", evaluate_run(run, annotations, k=CUTOFFS, convention="trec"))

    return work


def pytrec_eval_task(run_path: str, qrels_path: str) -> Callable[[], Output]:
    """pytrec_eval from files: its own parsers, one ``RelevanceEvaluator``, ``evaluate`` per query."""
    import pytrec_eval

    def work() -> Output:
        with open(qrels_path) as qrels_file:
            qrels = pytrec_eval.parse_qrel(qrels_file)
        with open(run_path) as run_file:
            run = pytrec_eval.parse_run(run_file)
        return Output("pytrec_eval", pytrec_eval.RelevanceEvaluator(qrels, _PYTREC_MEASURES).evaluate(run))

    return work


def ranx_task(run_path: str, qrels_path: str) -> Callable[[], Output]:
    """ranx end to end: ``Qrels.from_file`` and ``Run.from_file`` (object construction), then ``evaluate``."""
    import ranx

    def work() -> Output:
        qrels = ranx.Qrels.from_file(qrels_path, kind="trec")
        run = ranx.Run.from_file(run_path, kind="trec")
        scores = ranx.evaluate(qrels, run, _ranx_metrics(), return_mean=False)
        return Output("ranx", (list(run.keys()), scores))

    return work


def ir_measures_task(run_path: str, qrels_path: str) -> Callable[[], Output]:
    """ir_measures from files: ``read_trec_qrels``/``read_trec_run`` and per-query ``iter_calc``."""
    import ir_measures
    from ir_measures import RR, P, R, nDCG

    measures = [measure @ k for measure in (P, R, RR, nDCG) for k in CUTOFFS]

    def work() -> Output:
        qrels = ir_measures.read_trec_qrels(qrels_path)
        run = ir_measures.read_trec_run(run_path)
        rows = [(m.query_id, str(m.measure), m.value) for m in ir_measures.iter_calc(measures, qrels, run)]
        return Output("ir_measures", rows)

    return work


TASKS: dict[str, Callable[[str, str], Callable[[], Output]]] = {
    "abcompare": abcompare_task,
    "pytrec_eval": pytrec_eval_task,
    "ranx": ranx_task,
    "ir_measures": ir_measures_task,
}


# ------------------------------------------------------------------------------- in-memory dicts (issue 16)
def _pytrec_dicts(run_path: str, qrels_path: str) -> tuple[Any, Any]:
    """The files as pytrec_eval's own input shape, ``{query: {doc: score}}`` and ``{query: {doc: grade}}``
    (read by pytrec_eval's parsers, untimed: both tools get the very same objects)."""
    import pytrec_eval

    with open(qrels_path) as qrels_file:
        qrels = pytrec_eval.parse_qrel(qrels_file)
    with open(run_path) as run_file:
        run = pytrec_eval.parse_run(run_file)
    return run, qrels


def abcompare_dicts_task(run_path: str, qrels_path: str) -> Callable[[], Output]:
    """abcompare from in-memory dicts: ``evaluate_run(run_dict, qrels_dict)``, trec convention."""
    from abcompare.evaluation.batch import evaluate_run

    run, qrels = _pytrec_dicts(run_path, qrels_path)

    def work() -> Output:
        return Output("abcompare", evaluate_run(run, qrels, k=CUTOFFS, convention="trec"))

    return work


def pytrec_eval_dicts_task(run_path: str, qrels_path: str) -> Callable[[], Output]:
    """pytrec_eval from the same dicts: one ``RelevanceEvaluator``, ``evaluate``."""
    import pytrec_eval

    run, qrels = _pytrec_dicts(run_path, qrels_path)

    def work() -> Output:
        return Output("pytrec_eval", pytrec_eval.RelevanceEvaluator(qrels, _PYTREC_MEASURES).evaluate(run))

    return work


#: The dict benchmark's tools: evaluation only, from the same in-memory objects.
DICT_TASKS: dict[str, Callable[[str, str], Callable[[], Output]]] = {
    "abcompare": abcompare_dicts_task,
    "pytrec_eval": pytrec_eval_dicts_task,
}


def _ranx_metrics() -> list[str]:
    return [f"{m}@{k}" for m in MEASURES for k in CUTOFFS]


# ------------------------------------------------------------------------------------------ same numbers
def to_frame(output: Output) -> pd.DataFrame:
    """Any tool's per-query output as one table: index query_id (sorted), the 20 ``measure@k`` columns.

    pytrec_eval has no MRR@k nor F1@k: MRR@k is its reciprocal rank where the first relevant rank is <= k,
    F1@k is 2PR/(P+R) of its P@k and R@k; ir_measures' F1@k is derived the same way.
    """
    import numpy as np
    import pandas as pd

    if output.tool == "abcompare":
        frame = output.raw[COLUMNS].copy()
        frame.index = frame.index.astype(str)
    elif output.tool == "pytrec_eval":
        frame = _from_pytrec(output.raw)
    elif output.tool == "ranx":
        query_ids, scores = output.raw
        frame = pd.DataFrame({name: np.asarray(scores[name]) for name in COLUMNS}, index=query_ids)
    elif output.tool == "ir_measures":
        frame = _from_ir_measures(output.raw)
    else:
        raise ValueError(f"unknown tool {output.tool!r}")
    frame.index.name = "query_id"
    return frame[COLUMNS].astype(np.float64).sort_index()


def _f1(precision: np.ndarray, recall: np.ndarray) -> np.ndarray:
    import numpy as np

    total = precision + recall
    return np.divide(2.0 * precision * recall, total, out=np.zeros_like(total), where=total > 0)


def _from_pytrec(raw: dict[str, dict[str, float]]) -> pd.DataFrame:
    import numpy as np
    import pandas as pd

    table = pd.DataFrame.from_dict(raw, orient="index")
    rr = table["recip_rank"].to_numpy()
    first_rank = np.where(rr > 0, np.rint(1.0 / np.where(rr > 0, rr, 1.0)), np.inf)
    columns = {}
    for k in CUTOFFS:
        precision, recall = table[f"P_{k}"].to_numpy(), table[f"recall_{k}"].to_numpy()
        columns |= {
            f"precision@{k}": precision,
            f"recall@{k}": recall,
            f"f1@{k}": _f1(precision, recall),
            f"mrr@{k}": np.where(first_rank <= k, rr, 0.0),
            f"ndcg@{k}": table[f"ndcg_cut_{k}"].to_numpy(),
        }
    return pd.DataFrame(columns, index=table.index.astype(str))


def _from_ir_measures(rows: list[tuple[str, str, float]]) -> pd.DataFrame:
    import pandas as pd

    long = pd.DataFrame(rows, columns=["query_id", "measure", "value"])
    wide = long.pivot(index="query_id", columns="measure", values="value")
    columns = {}
    for k in CUTOFFS:
        precision, recall = wide[f"P@{k}"].to_numpy(), wide[f"R@{k}"].to_numpy()
        columns |= {
            f"precision@{k}": precision,
            f"recall@{k}": recall,
            f"f1@{k}": _f1(precision, recall),
            f"mrr@{k}": wide[f"RR@{k}"].to_numpy(),
            f"ndcg@{k}": wide[f"nDCG@{k}"].to_numpy(),
        }
    return pd.DataFrame(columns, index=wide.index.astype(str))


def max_difference(reference: pd.DataFrame, other: pd.DataFrame, tolerance: float = TOLERANCE) -> float:
    """The largest absolute per-query difference; ``AssertionError`` naming the worst cell above tolerance
    or when the two tables do not cover the same queries."""
    import numpy as np

    if not reference.index.equals(other.index):
        missing = reference.index.symmetric_difference(other.index)
        raise AssertionError(
            f"the tools scored different queries ({len(missing)} differ, e.g. {list(missing[:3])})"
        )
    diff = np.abs(reference[COLUMNS].to_numpy() - other[COLUMNS].to_numpy())
    worst = float(diff.max()) if diff.size else 0.0
    if not worst <= tolerance:
        row, col = np.unravel_index(int(np.nanargmax(diff)), diff.shape)
        raise AssertionError(
            f"{COLUMNS[col]} of query {reference.index[row]!r}: {reference.iat[row, col]!r} vs "
            f"{other.iat[row, col]!r} (|diff| {worst:.3g} > {tolerance:g})"
        )
    return worst


# ------------------------------------------------------------------------------------------ the benchmark
@dataclass
class EvaluationRow:
    """One workload size: every tool's measurement and its largest difference from pytrec_eval."""

    n_queries: int
    measurements: dict[str, Measurement]
    differences: dict[str, float | str]
    workload: str = "distinct"  # which workload (see ``benchmarks.workloads.WORKLOADS``), or "dicts"


def tools_available(tools: Sequence[str] = tuple(TASKS)) -> list[str]:
    """The tools of ``tools`` that can run here (abcompare always; a peer when it is installed)."""
    return [tool for tool in tools if tool == "abcompare" or peer_available(PEERS[tool])]


def run_evaluation(
    sizes: Sequence[int],
    *,
    repeats: int = 3,
    tools: Sequence[str] = tuple(TASKS),
    hits: int = 100,
    seed: int = 0,
    data_dir: Path | None = None,
    warm_up: bool = True,
    kind: str = "distinct",
    dicts: bool = False,
    log: Callable[[str], None] = print,
) -> list[EvaluationRow]:
    """Measure every available tool on each size; check each tool against pytrec_eval before it counts.

    A tool whose numbers differ from pytrec_eval's beyond ``TOLERANCE`` raises ``AssertionError``: no ratio
    is reported on different numbers. With ``warm_up`` each tool first runs once untimed (numba's on-disk
    cache, the page cache). ``kind`` picks the workload; ``dicts`` times abcompare and pytrec_eval on the
    workload read into pytrec_eval's dicts beforehand (evaluation only).
    """
    import pandas as pd

    from benchmarks.workloads import DATA_DIR, evaluation_workload

    data_dir = data_dir or DATA_DIR
    tasks = DICT_TASKS if dicts else TASKS
    tools = tools_available([tool for tool in tools if tool in tasks])
    label = "dicts" if dicts else kind
    rows = []
    warmed: set[str] = set()
    for n_queries in sizes:
        workload = evaluation_workload(n_queries, hits=hits, seed=seed, data_dir=data_dir, kind=kind)
        kwargs = {"run_path": str(workload.run_path), "qrels_path": str(workload.qrels_path)}
        measurements: dict[str, Measurement] = {}
        frames: dict[str, pd.DataFrame] = {}
        for tool in tools:
            task = f"benchmarks.bench_evaluation:{tasks[tool].__name__}"
            if warm_up and tool not in warmed:
                measure(tool, task, kwargs, repeats=1)
                warmed.add(tool)
            dump = workload.run_path.parent / f"result_{tool}.parquet"
            log(f"evaluation ({label}) {n_queries:>7} queries: {tool} ...")
            measurements[tool] = measure(tool, task, kwargs, repeats=repeats, dump=dump)
            done = measurements[tool]
            log(f"    -> {done.error or fmt_seconds(done.best)}, peak {done.peak_mb:,.0f} MB")
            if measurements[tool].error is None:
                frames[tool] = pd.read_parquet(dump)
                dump.unlink()
        differences: dict[str, float | str] = {}
        if "pytrec_eval" in frames:
            for tool, frame in frames.items():
                if tool == "pytrec_eval":
                    continue
                try:
                    differences[tool] = max_difference(frames["pytrec_eval"], frame)
                except AssertionError as err:
                    if tool == "abcompare":
                        raise  # abcompare must give trec_eval's numbers on every workload
                    # a peer that breaks ties otherwise (ranx, ir_measures on tied scores): timed, no ratio
                    differences[tool] = f"differs ({str(err).split(' (|diff|')[0]})"
                    log(f"    {tool}: {differences[tool]}")
        rows.append(EvaluationRow(n_queries, measurements, differences, label))
    return rows


def evaluation_table(rows: Sequence[EvaluationRow]) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the markdown table: time and peak memory per tool, abcompare's speed-up."""
    tools = [t for t in TASKS if any(t in row.measurements for row in rows)]
    peers = [t for t in tools if t != "abcompare"]
    header = ["workload", "queries x 100 hits"]
    header += [f"{tool} time" for tool in tools]
    header += [f"vs {peer}" for peer in peers]
    header += [f"{tool} peak RSS" for tool in tools]
    header += ["max abs diff vs pytrec_eval"]
    out = []
    for row in rows:
        ours = row.measurements.get("abcompare")
        cells = [row.workload, f"{row.n_queries:,}"]
        cells += [_time_cell(row.measurements.get(tool)) for tool in tools]
        for peer in peers:
            theirs = row.measurements.get(peer)
            ok = ours is not None and theirs is not None and ours.seconds and theirs.seconds
            if isinstance(row.differences.get(peer), str):
                cells.append("other numbers")  # no ratio on different numbers
                continue
            cells.append(fmt_ratio(theirs.best, ours.best) if ok else "—")
        cells += [fmt_mb(row.measurements[t].peak_mb) if t in row.measurements else "—" for t in tools]
        cells.append(
            ", ".join(
                f"{tool} {diff}" if isinstance(diff, str) else f"{tool} {diff:.1e}"
                for tool, diff in row.differences.items()
            )
            or "—"
        )
        out.append(cells)
    return header, out


def _time_cell(measurement: Measurement | None) -> str:
    if measurement is None:
        return "not installed"
    if measurement.error:
        return f"failed ({measurement.error})"
    return fmt_seconds(measurement.best)
