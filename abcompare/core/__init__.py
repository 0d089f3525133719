"""Rules every package shares, each written once: errors, vocabulary, hits and keys, order, names, bounds.

``errors`` (typed, located), ``vocabulary`` (measures, metric@k, tests, verdicts), ``hits`` (``RagHit``,
stable keys), ``ranking`` (trec_eval's order), ``naming``, ``limits`` (every bound), ``row_blocks``,
``arrow_memory``, ``process_identity``, ``scratch`` (a run's folders), ``settings`` (how a table was
tested, typed and frozen, carried beside it) and ``progress`` (the reporter the stages report to). ``core``
imports nothing else of abcompare."""
