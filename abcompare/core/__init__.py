"""Rules every package shares, each written once: typed errors, the vocabulary (measures, metric@k, verdicts),
hits and stable keys, trec_eval's order, names, bounds, row blocks, Arrow's allocator, process identity."""
