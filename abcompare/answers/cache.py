"""A persistent cache of a local model's answers, keyed by (the chat messages, the model's identity, the
prompt version, the token limit): greedy decoding gives the same answer to the same prompt, so a rerun (or a
test) never pays for it twice, and a new prompt, model or limit is never answered from an old one's
answers. One SQLite file beside the judge's grades."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path


def answer_key(messages: list[dict[str, str]], model: str, prompt_version: str, max_new_tokens: int) -> str:
    """The hash of everything a greedy answer depends on (the messages in full)."""
    payload = json.dumps([messages, model, prompt_version, max_new_tokens], ensure_ascii=False)
    return hashlib.sha256(payload.encode()).hexdigest()


class AnswerCache:
    """Answers on disk in ``path`` (created with its folder); ``None`` keeps them in memory only."""

    def __init__(self, path: str | Path | None) -> None:
        if path is not None:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(":memory:" if path is None else str(path), timeout=30)
        self._db.execute("CREATE TABLE IF NOT EXISTS answers (key TEXT PRIMARY KEY, answer TEXT NOT NULL)")
        self._db.commit()

    def get(self, key: str) -> str | None:
        row = self._db.execute("SELECT answer FROM answers WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def put(self, key: str, answer: str) -> None:
        self._db.execute("INSERT OR REPLACE INTO answers VALUES (?, ?)", (key, answer))
        self._db.commit()
