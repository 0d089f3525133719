"""A GGUF model's converted folder kept under the file's sha256 (``abcompare.judging.gguf_models``): converted
once and found again, a changed file converted anew, and a conversion that fails (a full disk) leaves neither
a half-written folder nor its scratch. The conversion itself (``export_gguf``) is replaced here by one that
writes the files a conversion writes, so the rule is tested without a model; the real conversion runs in
tests/judging/test_judging_transformers.py and the served judge's tests."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest

from abcompare.judging import gguf_models
from abcompare.judging.gguf_models import CONVERTED_FILES, converted_folder
from abcompare.retrieval.models import file_digest


@pytest.fixture
def conversions(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Each conversion's target folder, in order; each writes the files a complete conversion holds."""
    made: list[Path] = []

    def export(folder: Path, gguf_file: str, target: Path) -> Path:
        made.append(target)
        for name in CONVERTED_FILES:
            (target / name).write_text(f"{(folder / gguf_file).read_text()} {name}")
        return target

    monkeypatch.setattr(gguf_models, "export_gguf", export)
    return made


def test_a_model_is_converted_once_and_found_again(tmp_path: Path, conversions: list[Path]) -> None:
    (tmp_path / "m.gguf").write_text("weights v1")
    first = converted_folder(tmp_path, "m.gguf", tmp_path / "cache")
    again = converted_folder(tmp_path, "m.gguf", tmp_path / "cache")
    assert first == again and len(conversions) == 1
    assert (first / "config.json").read_text() == "weights v1 config.json"
    assert [p.name for p in first.parent.iterdir()] == [first.name], "no scratch folder left beside it"


def test_a_changed_file_is_converted_anew(tmp_path: Path, conversions: list[Path]) -> None:
    gguf = tmp_path / "m.gguf"
    gguf.write_text("weights v1")
    first = converted_folder(tmp_path, "m.gguf", tmp_path / "cache")
    gguf.write_text("weights v2, retrained")
    second = converted_folder(tmp_path, "m.gguf", tmp_path / "cache")
    assert second != first and len(conversions) == 2
    assert (second / "config.json").read_text() == "weights v2, retrained config.json"


def test_a_failed_conversion_leaves_nothing_half_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def full_disk(folder: Path, gguf_file: str, target: Path) -> Path:
        (target / "config.json").write_text("{}")  # half-way through
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(gguf_models, "export_gguf", full_disk)
    (tmp_path / "m.gguf").write_text("weights")
    with pytest.raises(OSError, match="No space left"):
        converted_folder(tmp_path, "m.gguf", tmp_path / "cache")
    assert list((tmp_path / "cache" / "gguf-converted").iterdir()) == []


def test_another_process_finishing_first_is_taken(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two conversions at once: the one whose rename finds the place taken keeps the other's folder."""
    import transformers

    (tmp_path / "m.gguf").write_text("weights")
    key = f"{file_digest(tmp_path / 'm.gguf')[:32]}-transformers-{transformers.__version__}"

    def racing(folder: Path, gguf_file: str, target: Path) -> Path:
        other = target.parent / key  # the other process renames its complete folder into place first
        other.mkdir()
        for name in CONVERTED_FILES:
            (other / name).write_text("the other process's")
            (target / name).write_text("ours")
        return target

    monkeypatch.setattr(gguf_models, "export_gguf", racing)
    kept = converted_folder(tmp_path, "m.gguf", tmp_path / "cache")
    assert kept.name == key and (kept / "config.json").read_text() == "the other process's"
    assert [p.name for p in kept.parent.iterdir()] == [key], "our scratch folder is gone"
