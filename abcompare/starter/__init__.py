"""A first config from what a dataset holds: ``abcompare init`` inspects it, aligns each run, writes it.

``inspection`` reads a BEIR folder (or queries + qrels files, or a shipped example) and the run files and
says what it found (the level the judgments name, their grades, the documents' length, each run's
alignment); ``writing`` turns the findings into a commented config that ``load_config`` accepts.
"""
