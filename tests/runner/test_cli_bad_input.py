"""Hostile input to every command, as a user types it: the README's promise ("Bad input gets one line naming
the file and the line (or the field)", exit 2, nothing run first) holds for `run`, `pool`, `report` and
`validate`, class by class:

- a size known before any work (a sweep's grid) is refused before any work, with the number;
- errors name what the user wrote (an empty grid, a select.metric that is not computed, a setting path);
- swept settings behave like written ones (a run file per point resolves against the config's folder; the
  names derived from swept values are names abcompare accepts);
- every command's argument errors are one line;
- output paths are checked before the work (`pool -o`, `report -o`: the commands that write a file);
- identifiers the user types are input (report's RUN_ID; the config path);
- messages say what happened (Ctrl-C before and after MLflow runs were opened).

"Nothing ran first" is checked where the error is known before the work: no MLflow store in the folder, no
variant's stage line on stderr, no output file.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import pytest
from mlflow import MlflowClient
from support.cli import CLI_WAYS, REPO, CliResult, cli_command, cli_env, error_lines, invoke_cli
from support.configs import bm25_control, braced

HR_DOCS = REPO / "abcompare" / "examples" / "hr_docs"
CONFIG = (
    braced(bm25_control("name: hr-docs\nlevel: chunk", top_k=10, name="hostile"))
    + """\
{rest}significance:
  n_resamples: 200
"""
)
TREATMENT = "treatments:\n  k1:\n    retrievers:\n      bm25: {k1: 0.9}\n"
CONFIG_COMMANDS = ["run", "pool", "validate"]  # the commands that read a config


def write_config(folder: Path, rest: str, name: str = "config.yaml") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(CONFIG.format(rest=rest))
    return path


def line_of(path: Path, text: str) -> int:
    """The 1-based number of the line of ``path`` that reads ``text`` (exactly one)."""
    numbers = [i for i, line in enumerate(path.read_text().splitlines(), 1) if line == text]
    assert len(numbers) == 1, (text, numbers)
    return numbers[0]


def one_error(result: CliResult | subprocess.CompletedProcess, code: int = 2) -> str:
    """The one ``error:`` line of a failed command (and nothing of a usage box or a traceback)."""
    assert result.returncode == code, (result.returncode, result.stderr[-3000:])
    assert "Traceback" not in result.stderr and "Usage:" not in result.stderr and "╭" not in result.stderr
    lines = error_lines(result.stderr)
    assert len(lines) == 1, result.stderr
    return lines[0]


def nothing_ran(workdir: Path, result: CliResult | subprocess.CompletedProcess) -> None:
    """No variant ran (its stage line is the runner's 'control') and no MLflow store was made."""
    assert "• control" not in result.stderr, result.stderr
    assert not (workdir / "mlflow.db").exists()
    assert not list(workdir.glob("*-pool.csv"))


def run_command(command: str, config: Path, workdir: Path, cache: Path, *extra: str, **kw):
    args = [command, str(config), *extra]
    if command == "pool":
        args += ["-o", str(workdir / "hostile-pool.csv")]
    return invoke_cli(args, workdir, cache, **kw)


# --------------------------------------------------------------- a size known before any work
@pytest.mark.parametrize("command", CONFIG_COMMANDS)
def test_a_grid_past_max_variants_is_refused_at_once_with_its_size(
    command: str, tmp_path: Path, embedding_cache: Path
) -> None:
    """Six settings of ten values are 10^6 points: refused from the list lengths, without building one
    point (a point-by-point expansion takes minutes; the command is given 60 s)."""
    ten = "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]"
    axes = ["fusion.k", "depth", "top_k", "chunking.size", "chunking.overlap", "retrievers.bm25.k1"]
    grid = "".join(f"    {axis}: {ten}\n" for axis in axes)
    config = write_config(tmp_path, f"sweep:\n  grid:\n{grid}")
    result = run_command(command, config, tmp_path, embedding_cache, timeout=60)  # expanding takes minutes
    line = one_error(result)
    factors = " x ".join(f"10 of {axis}" for axis in axes)
    assert line.startswith(f"error: {config}:{line_of(config, '  grid:')}: sweep.grid: "), line
    assert f"the sweep's grid has 1,000,000 points ({factors}), more than max_variants (200)" in line
    nothing_ran(tmp_path, result)


# --------------------------------------------------------------- errors name what the user wrote
SWEEP_ERRORS = {
    "empty-grid": ("sweep:\n  grid: {}\n", "  grid: {}", "sweep.grid", "the grid is empty"),
    "select-metric": (
        "sweep:\n  grid: {fusion.k: [10, 30]}\n  select: {metric: ndcg@7}\n",
        "  select: {metric: ndcg@7}",
        "sweep.select.metric",
        "'ndcg@7' is not computed",
    ),
    "setting-path": (
        "sweep:\n  grid: {retrievers.bm25.k1: [-1, -2]}\n",
        "  grid: {retrievers.bm25.k1: [-1, -2]}",
        "sweep.grid",
        "retrievers.bm25.k1=-1: retrievers.bm25.k1: Input should be greater than or equal to 0",
    ),
}


@pytest.mark.parametrize("case", list(SWEEP_ERRORS))
@pytest.mark.parametrize("command", CONFIG_COMMANDS)
def test_a_sweep_error_names_the_key_the_user_wrote(
    command: str, case: str, tmp_path: Path, embedding_cache: Path
) -> None:
    rest, written, key, message = SWEEP_ERRORS[case]
    config = write_config(tmp_path, rest)
    line = one_error(run := run_command(command, config, tmp_path, embedding_cache))
    assert line.startswith(f"error: {config}:{line_of(config, written)}: {key}: "), line
    assert message in line
    assert "bm25.bm25" not in line and "treatment name" not in line and "control" not in line
    nothing_ran(tmp_path, run)


# --------------------------------------------------------------- swept settings behave like written ones
def write_run_files(folder: Path) -> tuple[Path, Path]:
    """Two TREC runs of the example's queries from its chunk-level judgments: ``good`` puts each query's
    first relevant chunk at rank 1, ``late`` at rank 3 behind two chunks nobody judged relevant for it."""
    qrels = [
        line.split("\t") for line in (HR_DOCS / "qrels" / "test.chunks.tsv").read_text().splitlines()[1:]
    ]
    first: dict[str, str] = {}
    for query, key, _grade in qrels:
        first.setdefault(query, key)
    keys = list(dict.fromkeys(key for _, key, _ in qrels))
    good, late = folder / "good" / "prod.trec", folder / "late" / "prod.trec"
    for path in (good, late):
        path.parent.mkdir(parents=True)
    good.write_text("".join(f"{q} Q0 {k} 1 3.0 good\n" for q, k in first.items()))
    lines = []
    for query, key in first.items():
        others = [other for other in keys if other not in {k for q, k, _ in qrels if q == query}][:2]
        lines += [f"{query} Q0 {other} {r} {3.0 - r} late\n" for r, other in enumerate(others, 1)]
        lines.append(f"{query} Q0 {key} 3 0.5 late\n")
    late.write_text("".join(lines))
    return good, late


SWEPT_RUNS = (
    "sweep:\n  grid:\n    run:\n      - {path: runs/good/prod.trec, format: trec}\n"
    "      - {path: runs/late/prod.trec, format: trec}\n"
)
SWEPT_PATHS = "sweep:\n  grid:\n    run.path: [runs/good/prod.trec, runs/late/prod.trec]\n"


def test_a_swept_run_file_resolves_against_the_config_folder_and_names_are_safe(
    tmp_path: Path, embedding_cache: Path
) -> None:
    """The config lives in conf/ and is run from its parent: run.path per point is relative to conf/, as in
    a treatment. Both files are called prod.trec, so the names show their whole paths, with '_' for '/'."""
    write_run_files(tmp_path / "conf" / "runs")
    config = write_config(tmp_path / "conf", SWEPT_PATHS + "tracking:\n  experiment: hostile-sweep\n")
    result = invoke_cli(["run", str(config.relative_to(tmp_path)), "--json"], tmp_path, embedding_cache)
    assert result.returncode == 0, result.stderr[-3000:]
    payload = json.loads(result.stdout)
    names = ["run.path=runs_good_prod.trec", "run.path=runs_late_prod.trec"]
    assert list(payload["verdicts"]) == names
    means = payload["means"]
    assert means[names[0]]["mrr@10"] == pytest.approx(1.0)  # the first relevant chunk at rank 1
    assert means[names[1]]["mrr@10"] == pytest.approx(1 / 3)  # ... at rank 3
    runs = all_runs(tmp_path / "mlflow.db")
    assert {run.data.tags.get("abcompare.variant") for run in runs} >= {"control", *names}


@pytest.mark.parametrize("command", ["pool", "validate"])
def test_pool_and_validate_read_swept_run_files_from_the_config_folder(
    command: str, tmp_path: Path, embedding_cache: Path
) -> None:
    write_run_files(tmp_path / "conf" / "runs")
    config = write_config(tmp_path / "conf", SWEPT_RUNS)
    result = run_command(command, config.relative_to(tmp_path), tmp_path, embedding_cache)
    assert result.returncode == 0, result.stderr[-3000:]
    if command == "validate":
        names = ", ".join(f'run={{"format":"trec","path":"runs_{n}_prod.trec"}}' for n in ("good", "late"))
        assert result.stdout == f"{config.relative_to(tmp_path)}: valid — control vs {names} on hr-docs\n"
    else:
        assert (tmp_path / "hostile-pool.csv").is_file()


@pytest.mark.parametrize("command", CONFIG_COMMANDS)
def test_a_missing_swept_run_file_is_refused_at_its_sweep_key(
    command: str, tmp_path: Path, embedding_cache: Path
) -> None:
    write_run_files(tmp_path / "conf" / "runs")
    config = write_config(tmp_path / "conf", SWEPT_PATHS.replace("runs/late/", "runs/gone/"))
    result = run_command(command, config, tmp_path, embedding_cache)
    line = one_error(result)
    where = f"{config}:{line_of(config, '    run.path: [runs/good/prod.trec, runs/gone/prod.trec]')}"
    missing = tmp_path / "conf" / "runs" / "gone" / "prod.trec"
    assert line.startswith(f"error: {where}: sweep.grid.run.path: file not found: {missing}"), line
    nothing_ran(tmp_path, result)


# --------------------------------------------------------------- every command's argument errors are one line
DEPTH = "abcompare pool: Invalid value for '--depth' / '-d'"
ARGUMENT_ERRORS = [
    (["run"], "abcompare run: Missing argument 'CONFIG'"),
    (["run", "{config}", "--bogus"], "abcompare run: No such option: --bogus"),
    (["run", "{config}", "--json=3"], "abcompare run: Option '--json' does not take a value"),
    (["pool", "{config}", "--depth", "0"], f"{DEPTH}: Input should be greater than or equal to 1"),
    (["pool", "{config}", "--depth", "1001"], f"{DEPTH}: Input should be less than or equal to 1000"),
    (["pool", "{config}", "--depth", "ten"], DEPTH),
    (["pool", "{config}", "--format", "xml"], "--format: unknown format 'xml' (csv or jsonl)"),
    (["report", "-o"], "abcompare report: Option '-o' requires an argument"),
    (["report", "a", "b"], "abcompare report: Got unexpected extra argument"),
    (["validate"], "abcompare validate: Missing argument 'CONFIG'"),
    (["validate", "{config}", "--set"], "abcompare validate: Option '--set' requires an argument"),
    (["schema", "extra"], "abcompare schema: Got unexpected extra argument"),
    (["nope"], "abcompare: No such command 'nope'"),
]  # fmt: skip


@pytest.mark.parametrize("args, expected", ARGUMENT_ERRORS, ids=[" ".join(a) for a, _ in ARGUMENT_ERRORS])
def test_an_argument_error_is_one_line_naming_the_command_and_the_option(
    args: list[str], expected: str, tmp_path: Path, embedding_cache: Path
) -> None:
    config = write_config(tmp_path, TREATMENT)
    result = invoke_cli([a.replace("{config}", str(config)) for a in args], tmp_path, embedding_cache)
    line = one_error(result)
    assert line.startswith(f"error: {expected}"), line
    nothing_ran(tmp_path, result)


COMMANDS = ["run", "pool", "report", "validate", "schema", "examples", "init"]


def command_rows(help_text: str) -> dict[str, str]:
    """The Commands panel of ``abcompare --help``: each command's short help, its wrapped lines joined."""
    rows: dict[str, str] = {}
    panel = help_text.split("Commands", 1)[1]
    for line in panel.splitlines()[1:]:
        cells = line.strip("│ ").split(None, 1)
        if line.startswith("╰") or not cells:
            break
        if cells[0] in COMMANDS and len(cells) == 2 and line.index(cells[0]) <= 2:
            rows[cells[0]] = cells[1].strip(" │")
        elif rows:
            last = list(rows)[-1]
            rows[last] = f"{rows[last]} {line.strip('│ ')}".strip()
    return rows


@pytest.mark.parametrize("columns", ["200", "80"])
def test_every_command_s_short_help_is_one_complete_sentence(
    columns: str, tmp_path: Path, embedding_cache: Path
) -> None:
    """``abcompare --help`` lists every command with a whole sentence (issue 41: ``report``'s was cut
    mid-sentence, "..., or"): capitalised, ending in a full stop, brackets closed; on a wide terminal one
    line each, and a narrow terminal wraps the same words."""
    result = invoke_cli(["--help"], tmp_path, embedding_cache, COLUMNS=columns)
    assert result.returncode == 0, result.stderr
    rows = command_rows(result.stdout)
    assert sorted(rows) == sorted(COMMANDS), result.stdout
    for command, text in rows.items():
        assert text[0].isupper() and text.endswith(".") and not text.endswith("..."), (command, text)
        assert text.count("(") == text.count(")"), (command, text)
        assert not text.rstrip(".").endswith((",", " or", " and")), (command, text)
    if columns == "200":
        panel = result.stdout.split("Commands", 1)[1].split("╰", 1)[0]
        assert len([line for line in panel.splitlines()[1:] if line.strip("│ ")]) == len(COMMANDS), panel
    else:
        wide = command_rows(invoke_cli(["--help"], tmp_path, embedding_cache, COLUMNS="200").stdout)
        assert rows == wide


@pytest.mark.parametrize("command", ["run", "pool", "report", "validate", "schema", "examples", "init"])
def test_help_reads_as_plain_words(command: str, tmp_path: Path, embedding_cache: Path) -> None:
    result = invoke_cli([command, "--help"], tmp_path, embedding_cache)
    assert result.returncode == 0, result.stderr
    for python_type in ("<bool>", "<list[str]>", "<path>", "<str>", "<int", "{config}"):
        assert python_type not in result.stdout, (python_type, result.stdout)
    usage = next(line for line in result.stdout.splitlines() if "Usage:" in line).split()
    assert (
        usage[1:]
        == {
            "run": ["abcompare", "run", "[OPTIONS]", "[CONFIG]"],  # or --example NAME
            "pool": ["abcompare", "pool", "[OPTIONS]", "CONFIG"],
            "report": ["abcompare", "report", "[OPTIONS]", "[RUN_ID]"],
            "validate": ["abcompare", "validate", "[OPTIONS]", "CONFIG"],
            "schema": ["abcompare", "schema", "[OPTIONS]"],
            "examples": ["abcompare", "examples", "[OPTIONS]"],
            "init": ["abcompare", "init", "[OPTIONS]"],
        }[command]
    )


@pytest.mark.parametrize("way", list(CLI_WAYS))
def test_version_prints_the_package_version(way: str, tmp_path: Path, embedding_cache: Path) -> None:
    """In this process and as a new one (start-up: nothing but the version is printed)."""
    from abcompare import __version__

    result = CLI_WAYS[way](["--version"], tmp_path, embedding_cache)
    assert (result.returncode, result.stdout, result.stderr) == (0, f"abcompare {__version__}\n", "")


# --------------------------------------------------------------- output paths are checked before the work
@pytest.fixture(scope="module")
def logged(tmp_path_factory: pytest.TempPathFactory, embedding_cache: Path) -> tuple[Path, str]:
    """A logged comparison (BM25 against BM25 with k1 0.9) in a folder's SQLite store, and its run id."""
    workdir = tmp_path_factory.mktemp("logged")
    config = write_config(workdir, TREATMENT)
    result = invoke_cli(["run", str(config), "--json"], workdir, embedding_cache)
    assert result.returncode == 0, result.stderr[-3000:]
    return workdir, json.loads(result.stdout)["parent_run_id"]


def output_cases(folder: Path) -> list[tuple[str, str]]:
    """(-o value, what the error line says): a folder, a file in a missing folder, a file under a file."""
    (folder / "a-file").write_text("")
    return [
        (str(folder), f"--output: {folder}: is a folder"),
        (str(folder / "missing" / "out.x"), f"the folder {folder / 'missing'} does not exist"),
        (str(folder / "a-file" / "out.x"), f"{folder / 'a-file'} is not a folder"),
    ]


def test_pool_checks_its_output_before_any_variant_runs(tmp_path: Path, embedding_cache: Path) -> None:
    config = write_config(tmp_path, TREATMENT)
    for value, message in output_cases(tmp_path):
        result = invoke_cli(["pool", str(config), "-o", value], tmp_path, embedding_cache)
        line = one_error(result)
        assert line.startswith("error: --output: ") and message in line, line
        nothing_ran(tmp_path, result)
    assert not (tmp_path / "missing").exists()  # nothing is created for it


def test_report_checks_its_output_before_reading_the_store(logged: tuple[Path, str], embedding_cache) -> None:
    workdir, run_id = logged
    out = workdir / "outputs"
    out.mkdir()
    for value, message in output_cases(out):
        result = invoke_cli(["report", run_id, "-o", value], workdir, embedding_cache)
        line = one_error(result)
        assert line.startswith("error: --output: ") and message in line, line
    assert not (out / "missing").exists()
    assert sorted(p.name for p in out.iterdir()) == ["a-file"]


# --------------------------------------------------------------- identifiers the user types are input
MALFORMED_IDS = ["bad id!", "../x", "a'b", "_underscore_first", "ü" * 3, "a" * 257, ""]


@pytest.mark.parametrize(
    "run_id", MALFORMED_IDS, ids=["space", "path", "quote", "underscore", "unicode", "long", "empty"]
)
def test_a_malformed_run_id_is_a_located_error_before_any_store_is_read(
    run_id: str, tmp_path: Path, embedding_cache: Path
) -> None:
    """In a folder without any store: the id is refused first (not "no MLflow store found")."""
    result = invoke_cli(["report", run_id], tmp_path, embedding_cache)
    line = one_error(result)
    assert line.startswith(f"error: RUN_ID: {run_id!r} is not an MLflow run id"), line
    assert list(tmp_path.iterdir()) == []


def test_an_unknown_well_formed_run_id_is_a_located_error(logged: tuple[Path, str], embedding_cache) -> None:
    workdir, run_id = logged
    unknown = "0" * 32
    result = invoke_cli(["report", f" {unknown} ", "-o", "r.html"], workdir, embedding_cache)
    line = one_error(result)
    assert line.startswith(f"error: RUN_ID: no run {unknown} in sqlite:///"), line
    assert not (workdir / "r.html").exists()
    result = invoke_cli(["report", f" {run_id}\n", "-o", "r.html"], workdir, embedding_cache)  # as pasted
    assert result.returncode == 0, result.stderr[-3000:]
    assert (workdir / "r.html").is_file()


def test_a_tracking_uri_mlflow_cannot_use_is_a_located_error(tmp_path: Path, embedding_cache: Path) -> None:
    result = invoke_cli(["report", "--tracking-uri", "nonsense://x"], tmp_path, embedding_cache)
    line = one_error(result)
    assert line.startswith("error: tracking_uri: cannot use the MLflow store nonsense://x: "), line
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("command", CONFIG_COMMANDS)
def test_a_config_path_that_is_no_config_file_is_one_line(
    command: str, tmp_path: Path, embedding_cache: Path
) -> None:
    for config, message in ((tmp_path, "expected a config file, found a folder"),
                            (tmp_path / "nope.yaml", "config file not found")):  # fmt: skip
        result = run_command(command, config, tmp_path, embedding_cache)
        assert one_error(result) == f"error: {config}: {message}"
        nothing_ran(tmp_path, result)


# --------------------------------------------------------------- messages say what happened
def interrupt(args: list[str], workdir: Path, cache: Path, stage: str) -> subprocess.CompletedProcess:
    """Start the command, send SIGINT once it prints the stage line ``stage`` (event-driven: the command
    then waits on a named pipe nobody writes to, so it can get no further), and collect its output."""
    import threading

    process = subprocess.Popen(
        [*cli_command(), *args], cwd=workdir, env=cli_env(cache), stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # fmt: skip
    lines: list[str] = []
    reached = threading.Event()

    def read() -> None:
        for line in process.stderr:
            lines.append(line)
            if line.rstrip() == f"• {stage}":
                reached.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    # not a speed check: only so a broken build cannot hang the suite
    assert reached.wait(timeout=600), "".join(lines)[-2000:]
    assert process.poll() is None, "".join(lines)[-2000:]
    process.send_signal(signal.SIGINT)
    stdout = process.stdout.read()
    process.wait(timeout=120)
    reader.join(timeout=60)
    return subprocess.CompletedProcess(args, process.returncode, stdout, "".join(lines))


def fifo_queries_config(folder: Path) -> Path:
    """A config whose query file is a named pipe nobody writes to: loading the dataset waits there, before
    any MLflow run is opened."""
    os.mkfifo(folder / "queries.jsonl")
    text = CONFIG.format(rest=TREATMENT).replace(
        "  name: hr-docs\n",
        f"  queries: queries.jsonl\n  annotations: {HR_DOCS / 'qrels' / 'test.chunks.tsv'}\n"
        f"  corpus: {HR_DOCS / 'corpus.jsonl'}\n",
    )
    path = folder / "config.yaml"
    path.write_text(text)
    return path


def all_runs(db: Path) -> list:
    client = MlflowClient(tracking_uri=f"sqlite:///{db}")
    return client.search_runs([e.experiment_id for e in client.search_experiments()])


def test_ctrl_c_before_any_run_opened_says_so(tmp_path: Path, embedding_cache: Path) -> None:
    config = fifo_queries_config(tmp_path)
    result = interrupt(["run", str(config)], tmp_path, embedding_cache, stage="loading the dataset")
    assert result.returncode == 130, result.stderr[-2000:]
    assert "Traceback" not in result.stderr
    assert result.stderr.splitlines()[-1] == "interrupted: no MLflow run was open"
    assert "KILLED" not in result.stderr
    db = tmp_path / "mlflow.db"
    assert not db.exists() or all_runs(db) == []  # the store may have been checked: it holds no run


def test_ctrl_c_with_runs_open_says_they_were_marked_killed(tmp_path: Path, embedding_cache: Path) -> None:
    """The treatment's run file is a named pipe: the parent and the control's run are open when it waits."""
    pipe = tmp_path / "prod.trec"
    os.mkfifo(pipe)
    config = write_config(tmp_path, f"treatments:\n  prod:\n    run: {{path: {pipe}, format: trec}}\n")
    result = interrupt(["run", str(config)], tmp_path, embedding_cache, stage="treatment prod")
    assert result.returncode == 130, result.stderr[-2000:]
    assert result.stderr.splitlines()[-1] == "interrupted: the open MLflow runs were marked KILLED"
    runs = all_runs(tmp_path / "mlflow.db")
    assert sorted((run.data.tags["abcompare.role"], run.info.status) for run in runs) == [
        ("comparison", "KILLED"),
        ("control", "KILLED"),
    ]


def test_ctrl_c_with_tracking_off_says_no_run_was_opened(tmp_path: Path, embedding_cache: Path) -> None:
    pipe = tmp_path / "prod.trec"
    os.mkfifo(pipe)
    rest = f"treatments:\n  prod:\n    run: {{path: {pipe}, format: trec}}\ntracking:\n  enabled: false\n"
    config = write_config(tmp_path, rest)
    result = interrupt(["run", str(config)], tmp_path, embedding_cache, stage="treatment prod")
    assert result.returncode == 130, result.stderr[-2000:]
    assert result.stderr.splitlines()[-1] == "interrupted: tracking is off: no MLflow run was opened"
    assert not (tmp_path / "mlflow.db").exists()


def test_ctrl_c_in_pool_claims_nothing_about_mlflow(tmp_path: Path, embedding_cache: Path) -> None:
    config = fifo_queries_config(tmp_path)
    args = ["pool", str(config), "-o", str(tmp_path / "pool.csv")]
    result = interrupt(args, tmp_path, embedding_cache, stage="loading the dataset")
    assert result.returncode == 130, result.stderr[-2000:]
    assert result.stderr.splitlines()[-1] == "interrupted"
    assert not (tmp_path / "pool.csv").exists() and not (tmp_path / "mlflow.db").exists()
