"""MLflow both ways: a comparison's layout, store, writer, logger, artifacts, lifecycle and reader.

Read top to bottom, the modules follow a comparison into the store and back:

- ``layout``: every name a comparison writes (keys, tags, tables, files), written once;
- ``store``: the tracking URI, reachability, and :class:`~abcompare.tracking.store.StoreClient`, the MLflow
  calls for one experiment (runs opened, batches logged, every run closed);
- ``writer``: :class:`~abcompare.tracking.writer.RunWriter` executes typed commands against a store client,
  in this process or in a forked writer process, and returns the
  :class:`~abcompare.tracking.writer.RecordedRuns`;
- ``logger``: :class:`~abcompare.tracking.logger.ComparisonLogger` lays a comparison out as those commands
  (a parent run, a child run per variant);
- ``top_run``: :class:`~abcompare.tracking.top_run.TopRunLogger`, across several collections the top run
  with the pooled test, each collection's comparison nested under it;
- ``artifacts``: the files each run carries; ``lifecycle``: the one tracking session the runner opens;
- ``reader``: ``load_comparison`` reads it all back, one collection's comparison or a top run across
  several, as one ``LoadedComparison``.
"""
