"""Write the README's "What you see" block from a real run of the main job.

    python scripts/readme_sample.py            # run the main job in a temporary folder, rewrite the block
    python scripts/readme_sample.py --check    # exit 1 when the README's block is not what a run prints

The block is what a user sees with the output piped: the stage lines (stderr) then the report (stdout).
``tests/runner/test_readme_sample.py`` runs the job and compares its output with the block, so the README's
numbers are always the ones the run prints (run ids and times differ from run to run and are not compared).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
CONFIG = REPO / "configs" / "rrf_vs_dbsf.yaml"
#: The block sits between this marker line and the closing fence.
MARKER = "<!-- the output of a real run: python scripts/readme_sample.py -->"
_BLOCK = re.compile(re.escape(MARKER) + r"\n```text\n(.*?)```", re.S)
_VOLATILE = [
    (re.compile(r"\b[0-9a-f]{32}\b"), "<run id>"),
    (re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d"), "<time>"),
    (re.compile(r"/#/experiments/\d+/"), "/#/experiments/<id>/"),
    (re.compile(r"runs=%5B.*?%5D"), "runs=<run ids>"),  # the compare view's link: its runs, JSON-quoted
    (re.compile(r"experiments=%5B.*?%5D"), "experiments=<ids>"),
]


def sample(stdout: str, stderr: str) -> str:
    """The block a user sees: the stage lines, then the report without its leading blank line."""
    stages: list[str] = []
    for line in stderr.splitlines():
        if not line.strip():
            continue
        if stages and not line.startswith(("• ", "warning: ", "error: ")):  # piped, a long line wraps
            stages[-1] = f"{stages[-1].rstrip()} {line.strip()}"
        else:
            stages.append(line)
    return "\n".join(stages) + "\n\n" + stdout.lstrip("\n")


#: The cost line's measured figures (the time ratio and its interval, the sample, durations) and its encoding
#: clause (timed here, or cached by an earlier run) change from run to run; its verdict on the noise and
#: its sizes do not.
COST_LINE = "  Cost vs control: "
_COST_VOLATILE = [
    (
        re.compile(r"^(  Cost vs control: )(encodes .*? per 1,000 chunks.*?\)|encoding not timed \(.*?\)), "),
        r"\1<encoding>, ",
    ),
    # the timed figures: the ratio and its interval, the sample the budget allowed, the times and spread
    (re.compile(r"(queries [^(,]+) \(time ratio [^;]*; [^)]*\)"), r"\1 (<timed>)"),
    (re.compile(r"\b\d[\d.,]* (?:ms|s)\b"), "<time>"),
]


#: Lines that say what this machine's state made the timing pass do, not what the comparison found: a model
#: it loaded, or a shared query encoding it left untimed, because the run's vectors came from the cache;
#: rounds cut by (or run past) the budget.
_MACHINE_STATE = re.compile(
    r"^(• timing the query stage: (loaded |query encoding by |\d+ of \d+ rounds timed )"
    r"|warning: .*\(efficiency\.budget_seconds\))"
)


def comparable(block: str) -> list[str]:
    """The block's lines with run ids, times and experiment ids replaced (they change every run), the cost
    line's measured figures, and without the lines that depend on the machine's state (cache, load)."""
    lines = []
    for line in block.splitlines():
        if _MACHINE_STATE.match(line):
            continue
        for pattern, placeholder in _VOLATILE:
            line = pattern.sub(placeholder, line)
        if line.startswith(COST_LINE):
            for pattern, placeholder in _COST_VOLATILE:
                line = pattern.sub(placeholder, line)
        lines.append(line.rstrip())
    return lines


def readme_block(text: str | None = None) -> str:
    """The README's current block."""
    found = _BLOCK.search(README.read_text() if text is None else text)
    if found is None:
        raise SystemExit(f"{README}: no block after the marker {MARKER!r}")
    return found.group(1)


def run_main_job(workdir: Path, env: dict[str, str] | None = None) -> tuple[str, str]:
    """``abcompare run configs/rrf_vs_dbsf.yaml`` in ``workdir`` with its output piped: (stdout, stderr)."""
    exe = Path(sys.executable).with_name("abcompare")
    command = [str(exe)] if exe.exists() else [sys.executable, "-m", "abcompare.cli"]
    environment = dict(os.environ if env is None else env)
    environment["MLFLOW_SUPPRESS_PRINTING_URL_TO_STDOUT"] = "true"
    arguments = [*command, "run", str(CONFIG)]
    done = subprocess.run(arguments, cwd=workdir, env=environment, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"the main job failed (exit {done.returncode}):\n{done.stderr[-3000:]}")
    return done.stdout, done.stderr


def main(argv: list[str]) -> int:
    with tempfile.TemporaryDirectory() as folder:
        block = sample(*run_main_job(Path(folder)))
    if "--check" in argv:
        same = comparable(block) == comparable(readme_block())
        print("the README's sample output is the real one" if same else "the README's sample output differs")
        return 0 if same else 1
    text = README.read_text()
    current = readme_block(text)
    README.write_text(text.replace(f"{MARKER}\n```text\n{current}```", f"{MARKER}\n```text\n{block}```", 1))
    print(f"wrote the sample output into {README}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
