"""The suite's cache folder, kept between sessions: ``$ABCOMPARE_TEST_CACHE_DIR``, else abcompare's own
cache (``$ABCOMPARE_CACHE_DIR`` or ``~/.cache/abcompare``). Everything kept there is content-addressed
(keyed by the content it was made from), so no change of input can be served an old entry; pointing the
variable at an empty folder makes a cold run. Its users: the ``embedding_cache`` fixture (tests/conftest.py),
the served judge's exported model and the local judge's grades of the SciFact agreement script
(``support.llm_server``)."""

from __future__ import annotations

import os
from pathlib import Path

from abcompare.retrieval.embedding_cache import default_cache_dir

#: Overrides where the suite keeps its caches (default: abcompare's own, ``default_cache_dir()``).
TEST_CACHE_ENV = "ABCOMPARE_TEST_CACHE_DIR"


def suite_cache_dir() -> Path:
    """The suite's cache folder (made when absent)."""
    env = os.environ.get(TEST_CACHE_ENV)
    folder = Path(env).expanduser() if env else default_cache_dir()
    folder.mkdir(parents=True, exist_ok=True)
    return folder
