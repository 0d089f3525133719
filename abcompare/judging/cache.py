"""A persistent cache of a judge's grades, keyed by (query text, hit text, judge identity, prompt version):
the same question to the same judge is never paid for twice, and a new prompt version or model is never
answered from an old one's grades. One SQLite file; only usable grades are kept, so a garbled answer is
asked again next time."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path


def cache_key(query_text: str, hit_text: str, judge: str, prompt_version: str) -> str:
    """The hash of the four things a grade depends on (texts in full, not cut)."""
    payload = json.dumps([query_text, hit_text, judge, prompt_version], ensure_ascii=False)
    return hashlib.sha256(payload.encode()).hexdigest()


class GradeCache:
    """Grades on disk in ``path`` (created with its folder); ``None`` path keeps them in memory only."""

    def __init__(self, path: str | Path | None) -> None:
        self.path = None if path is None else Path(path)
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(":memory:" if self.path is None else str(self.path), timeout=30)
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS grades (key TEXT PRIMARY KEY, grade INTEGER NOT NULL, "
            "answer TEXT NOT NULL, judge TEXT NOT NULL, prompt_version TEXT NOT NULL)"
        )
        self._db.commit()

    def get(self, key: str) -> tuple[int, str] | None:
        """``(grade, answer)`` stored under ``key``, or None."""
        row = self._db.execute("SELECT grade, answer FROM grades WHERE key = ?", (key,)).fetchone()
        return None if row is None else (int(row[0]), str(row[1]))

    def put(self, key: str, grade: int, answer: str, judge: str, prompt_version: str) -> None:
        self._db.execute(
            "INSERT OR REPLACE INTO grades VALUES (?, ?, ?, ?, ?)",
            (key, grade, answer, judge, prompt_version),
        )
        self._db.commit()

    def __len__(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM grades").fetchone()[0])

    def close(self) -> None:
        self._db.close()
