"""The ``judge:`` section: each provider's required settings, its bounds and wrong keys as errors located at
the key's line (exit 2 from the CLI), the key read from the environment variable the config names, and no
change to the fingerprint of a config without a judge."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.cli import error_lines, invoke_cli
from support.configs import MINIMAL

from abcompare.config import load_config
from abcompare.core.errors import ConfigError


def write(tmp_path: Path, judge: str) -> Path:
    path = tmp_path / "config.yaml"
    path.write_text(MINIMAL + "judge:\n" + "".join(f"  {line}\n" for line in judge.splitlines()))
    return path


def test_a_local_judge_takes_the_defaults(tmp_path: Path) -> None:
    judge = load_config(write(tmp_path, "provider: transformers")).judge
    assert (judge.model, judge.max_pairs, judge.min_agreement, judge.prompt_version) == (
        None, 500, 0.4, "umbrela-0.1",
    )  # fmt: skip


def test_an_openai_judge_reads_its_key_from_the_variable_it_names(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("JUDGE_TEST_KEY", "sk-test")
    text = "provider: openai\nbase_url: http://127.0.0.1:9/v1\nmodel: m\napi_key_env: JUDGE_TEST_KEY"
    judge = load_config(write(tmp_path, text)).judge
    assert judge.api_key_env == "JUDGE_TEST_KEY" and "sk-test" not in judge.model_dump_json()


@pytest.mark.parametrize(
    ("judge", "key", "says"),
    [
        ("provider: oracle", "provider", "provider"),
        ("provider: transformers\nmax_pairs: 0", "max_pairs", "greater than or equal to 1"),
        ("provider: transformers\nmax_pairs: 1000001", "max_pairs", "less than or equal to 1000000"),
        ("provider: transformers\nmin_agreement: 1.5", "min_agreement", "less than or equal to 1"),
        ("provider: transformers\nmin_agreement: -2", "min_agreement", "greater than or equal to -1"),
        ("provider: openai\nmodel: m", "provider", "needs base_url"),
        ("provider: transformers\nbase_url: http://x", "base_url", "setting of the openai judge"),
        ("provider: python", "provider", "needs name"),
        ("provider: file", "provider", "needs path"),
        ("provider: transformers\nprompt_version: v9", "prompt_version", "unknown prompt version"),
        ("provider: transformers\ntemperature: 0", "temperature", "temperature"),
        ("provider: openai\nbase_url: http://127.0.0.1:9/v1\nmodel: m\napi_key_env: JUDGE_UNSET_KEY_VAR",
         "api_key_env", "JUDGE_UNSET_KEY_VAR"),
    ],
)  # fmt: skip
def test_a_bad_judge_setting_is_an_error_at_its_line(tmp_path: Path, judge: str, key: str, says: str) -> None:
    path = write(tmp_path, judge)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert says in str(info.value)
    line = path.read_text().splitlines()[info.value.line - 1].strip()
    assert line.startswith(key), (line, str(info.value))


def test_the_cli_refuses_an_unset_key_variable_with_one_error_line_and_exit_2(tmp_path: Path) -> None:
    path = write(
        tmp_path, "provider: openai\nbase_url: http://127.0.0.1:9/v1\nmodel: m\napi_key_env: NO_SUCH_KEY_VAR"
    )
    done = invoke_cli(["validate", str(path)], tmp_path, tmp_path / "cache")
    assert done.returncode == 2, done.stderr
    (line,) = error_lines(done.stderr)
    assert "api_key_env" in line and "NO_SUCH_KEY_VAR" in line and "not set" in line


def test_a_config_without_a_judge_keeps_its_fingerprint_and_one_with_a_judge_changes_it(
    tmp_path: Path,
) -> None:
    plain = tmp_path / "plain.yaml"
    plain.write_text(MINIMAL)
    before = load_config(plain)
    assert before.judge is None
    dumped = before.model_dump(
        mode="json", exclude={"execution", "efficiency", "judge", "answers", "datasets"}
    )
    dumped["significance"].pop("pooling")
    import hashlib
    import json

    expected = hashlib.sha256(json.dumps(dumped, sort_keys=True, default=str).encode()).hexdigest()[:16]
    assert before.fingerprint() == expected
    assert load_config(write(tmp_path, "provider: transformers")).fingerprint() != before.fingerprint()
