"""The public API documents itself: numpydoc sections and a short example that runs, for every function a
user calls (``from abcompare import ...``)."""

from __future__ import annotations

import doctest
import importlib
import inspect
import warnings

import pytest

import abcompare

#: Public callables and the object whose docstring documents the call.
DOCUMENTED = {
    "stable_key": lambda: abcompare.stable_key,
    "RagEvaluator": lambda: abcompare.RagEvaluator.evaluate,
    "TrecEvaluator": lambda: abcompare.TrecEvaluator.evaluate,
    "evaluate_run": lambda: abcompare.evaluate_run,
    "paired_comparison": lambda: abcompare.paired_comparison,
    "queries_needed": lambda: abcompare.queries_needed,
    "tuned_comparison": lambda: abcompare.tuned_comparison,
    "fuse": lambda: abcompare.fuse,
    "langchain_retriever": lambda: abcompare.langchain_retriever,
    "load_beir": lambda: abcompare.load_beir,
    "read_run": lambda: abcompare.read_run,
    "write_run": lambda: abcompare.write_run,
    "read_annotations": lambda: abcompare.read_annotations,
    "read_queries": lambda: abcompare.read_queries,
    "alignment_report": lambda: abcompare.alignment_report,
    "apply_level": lambda: abcompare.apply_level,
    "load_config": lambda: abcompare.load_config,
}


@pytest.mark.parametrize("name", sorted(DOCUMENTED))
def test_a_public_function_has_numpydoc_sections_and_an_example(name):
    doc = inspect.getdoc(DOCUMENTED[name]()) or ""
    for section in ("Parameters\n----------", "Returns\n-------", "Examples\n--------", ">>> "):
        assert section in doc, f"{name}: no {section.splitlines()[0]!r}"


@pytest.mark.parametrize("name", sorted(DOCUMENTED))
def test_the_example_runs(name):
    target = DOCUMENTED[name]()
    module = importlib.import_module(target.__module__)
    finder = doctest.DocTestFinder()
    tests = [t for t in finder.find(target, name, module=module, globs=vars(module).copy()) if t.examples]
    assert tests, f"{name} has no example"
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for test in tests:
            runner.run(test)
    assert runner.failures == 0, f"{name}: {runner.failures} failing example(s)"


def test_every_name_the_package_exports_resolves():
    for name in abcompare.__all__:
        assert getattr(abcompare, name) is not None, name
