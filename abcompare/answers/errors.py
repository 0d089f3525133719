"""The one error of the answers stage: an answer that cannot be used (a generator that raises or returns
something that is not an answer, an answers file with a bad line), located at the file and line or at the
generator and query (exit 2)."""

from __future__ import annotations

from abcompare.core.errors import AbcompareError


class AnswerError(AbcompareError):
    """An answer, an answers file or a generator that cannot be used; ``str()`` is the one-line message."""
