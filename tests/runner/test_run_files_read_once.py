"""Each run file is parsed once: the inputs' check (``runner.check_inputs``, shared by ``validate`` and
``run``) reads it, checks it as the run stage would, and hands the table to the run stage, which does
not read the file again; a run file that can be read only once (a named pipe) is left to the run stage
and read there, once. ``validate`` refuses what ``run`` refuses of a run file whatever the level (before:
its keys were checked only when the alignment check applied, its scores not at all)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from support.cli import REPO, error_lines, invoke_cli
from support.clock import pause

from abcompare.config import load_config
from abcompare.core.errors import DataError
from abcompare.data.experiment import load_dataset_for_experiment
from abcompare.data.runs import read_run
from abcompare.execution.local import LocalExecutor
from abcompare.runner import check_inputs, run_comparison

PRODUCTION = REPO / "configs" / "runs" / "hr_docs_production.trec"


def write_config(folder: Path, control: Path, treatment: Path, evaluation: str = "") -> Path:
    path = folder / "c.yaml"
    path.write_text(
        "name: c\ndataset: {name: hr-docs, level: document}\n"
        f"control:\n  run: {{path: {control}, format: trec}}\n"
        f"treatments:\n  t:\n    run: {{path: {treatment}, format: trec}}\n"
        f"evaluation: {{cutoffs: [1, 5], convention: trec{evaluation}}}\n"
        "significance: {n_resamples: 200}\nefficiency: {repeats: 0}\ntracking: {enabled: false}\n"
    )
    return path


def test_the_run_stage_takes_the_tables_the_inputs_check_read(tmp_path: Path) -> None:
    copy = tmp_path / "prod.trec"
    copy.write_bytes(PRODUCTION.read_bytes())
    config = load_config(write_config(tmp_path, copy, PRODUCTION))
    dataset = load_dataset_for_experiment(config.dataset)
    given = check_inputs(config, dataset)
    assert sorted(given) == ["control", "t"]
    copy.unlink()  # the run stage must not need the file any more
    runs = LocalExecutor().variant_runs(config.variants(), dataset, tmp_path / "cache", given=given)
    control = next(runs).run
    expected = read_run(PRODUCTION, fmt="trec")
    assert control["key"].tolist() == expected[expected["query_id"].isin(dataset.query_ids)]["key"].tolist()


class Feeder:
    """Writes ``data`` to the named pipe ``fifo`` each time a reader opens it, counting the opens."""

    def __init__(self, fifo: Path, data: bytes) -> None:
        self.fifo, self.data, self.opens = fifo, data, 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            fd = os.open(self.fifo, os.O_WRONLY)  # waits for a reader
            if self.stop.is_set():
                os.close(fd)
                return
            self.opens += 1
            try:
                view = memoryview(self.data)
                while view:
                    view = view[os.write(fd, view) :]
            except BrokenPipeError:
                pass
            finally:
                os.close(fd)
            self._until_the_reader_closes()

    def _until_the_reader_closes(self) -> None:
        """A writer may open the pipe while a reader still has it open: waits until none has, so the next
        open counted is a new reader's."""
        while not self.stop.is_set():
            try:
                os.close(os.open(self.fifo, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:  # ENXIO: no reader
                return
            pause(0.02)

    def close(self) -> None:
        self.stop.set()
        os.close(os.open(self.fifo, os.O_RDONLY | os.O_NONBLOCK))  # lets a waiting open return
        self.thread.join(timeout=10)


def test_a_run_file_that_can_be_read_once_is_read_once_and_compared(tmp_path: Path) -> None:
    fifo = tmp_path / "prod.fifo"
    os.mkfifo(fifo)
    feeder = Feeder(fifo, PRODUCTION.read_bytes())
    try:
        path = write_config(tmp_path, fifo, PRODUCTION)
        result = run_comparison(load_config(path), config_path=path)
    finally:
        feeder.close()
    assert feeder.opens == 1
    assert result.variants["control"].means == result.variants["t"].means  # the same run, read once


def test_validate_refuses_a_run_file_scored_in_part_whatever_the_alignment_check(
    tmp_path: Path, embedding_cache
) -> None:
    """``evaluation.allow_misaligned`` skips the alignment check, not the run file's own: ``validate``
    names the unscored hit's line and key, as ``run`` does (before: ``validate`` said valid)."""
    partial = tmp_path / "partial.csv"
    partial.write_text("query_id,key,rank,score\nqa-001,travel-per-diems,1,2.0\nqa-001,leave-policy,2,\n")
    path = write_config(tmp_path, partial, PRODUCTION, ", allow_misaligned: true")
    path.write_text(path.read_text().replace(f"{partial}, format: trec", f"{partial}, format: csv"))
    result = invoke_cli(["validate", str(path)], tmp_path, embedding_cache)
    assert result.returncode == 2, result.stdout + result.stderr[-2000:]
    (line,) = error_lines(result.stderr)
    assert f"{partial}:3: score: variant 'control'" in line and "query 'qa-001'" in line
    with pytest.raises(DataError) as info:
        run_comparison(load_config(path), config_path=path)
    assert (info.value.file, info.value.line, info.value.field) == (str(partial), 3, "score")
