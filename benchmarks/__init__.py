"""abcompare's benchmark suite: abcompare side by side with pytrec_eval, ranx, ir_measures and scipy.

Run ``python -m benchmarks`` (full sizes) or ``python -m benchmarks --quick`` from the repository root;
the peers are the optional extra ``pip install -e ".[bench]"``. See docs/benchmarks.md.
"""
