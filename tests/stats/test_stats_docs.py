"""The examples in the statistics docstrings run as written (doctest)."""

from __future__ import annotations

import doctest

import pytest

from abcompare.stats import comparison, tuning


@pytest.mark.parametrize("module", [comparison, tuning], ids=lambda m: m.__name__)
def test_docstring_examples_run(module):
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
