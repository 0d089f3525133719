"""Embedding cache: encodes only unseen texts, persists across instances, ignores damaged shards."""

from __future__ import annotations

import numpy as np

from abcompare.retrieval.embedding_cache import EmbeddingCache, default_cache_dir, text_hash


class FakeEncoder:
    """Deterministic 'model': the vector is (len, count of 'a', 1); records what it was asked."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def __call__(self, texts: list[str]) -> np.ndarray:
        self.calls.append(list(texts))
        return np.array([[len(t), t.count("a"), 1.0] for t in texts], dtype=np.float32)


def test_only_unseen_distinct_texts_are_encoded(tmp_path):
    encoder = FakeEncoder()
    cache = EmbeddingCache(tmp_path, "model-x")
    matrix, encoded = cache.encode(["aa", "b", "aa"], encoder)
    assert encoded == 2 and encoder.calls == [["aa", "b"]]
    assert matrix.tolist() == [[2, 2, 1], [1, 0, 1], [2, 2, 1]]
    matrix, encoded = cache.encode(["b", "ccc"], encoder)
    assert encoded == 1 and encoder.calls[-1] == ["ccc"]
    assert matrix.tolist() == [[1, 0, 1], [3, 0, 1]]


def test_vectors_persist_for_a_new_instance_of_the_same_model_only(tmp_path):
    EmbeddingCache(tmp_path, "model-x").encode(["hello", "world"], FakeEncoder())
    again = FakeEncoder()
    _, encoded = EmbeddingCache(tmp_path, "model-x").encode(["world", "hello"], again)
    assert encoded == 0 and again.calls == []
    other = FakeEncoder()
    _, encoded = EmbeddingCache(tmp_path, "model-y").encode(["hello"], other)
    assert encoded == 1


def test_blocks_are_saved_as_they_finish_and_progress_is_reported(tmp_path):
    seen = []
    cache = EmbeddingCache(tmp_path, "m")
    cache.encode(
        [str(i) for i in range(5)], FakeEncoder(), block=2, progress=lambda a, b: seen.append((a, b))
    )
    assert seen == [(0, 5), (2, 5), (4, 5), (5, 5)]
    assert len(list(cache.folder.glob("*.npy"))) == 3


def test_a_damaged_shard_is_ignored_and_re_encoded(tmp_path):
    cache = EmbeddingCache(tmp_path, "m")
    cache.encode(["x", "y"], FakeEncoder())
    (keys_file,) = cache.folder.glob("*.keys")
    keys_file.write_text(text_hash("x") + "\n")  # one key for two rows
    encoder = FakeEncoder()
    _, encoded = EmbeddingCache(tmp_path, "m").encode(["x", "y"], encoder)
    assert encoded == 2


def test_default_cache_dir_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("ABCOMPARE_CACHE_DIR", str(tmp_path))
    assert default_cache_dir() == tmp_path
    monkeypatch.delenv("ABCOMPARE_CACHE_DIR")
    assert default_cache_dir().parts[-2:] == (".cache", "abcompare")
