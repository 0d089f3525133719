"""What a comparison produced and every way a person reads it: the result types, the sentences and rows,
the console, ``--json``, ``report.html`` and the SVG figures. Reads tables only; knows nothing of MLflow."""
